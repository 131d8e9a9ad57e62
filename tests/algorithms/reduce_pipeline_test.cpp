#include "algorithm_test_support.hpp"
#include "collsim/algorithms/registry.hpp"

#include <catch2/catch.hpp>

using namespace collsim;

namespace {
algorithms::Request reduce_request(std::uint32_t p, std::uint64_t n, core::Rank root,
                                   std::int64_t segment) {
  algorithms::Request req = testing::allreduce_request(p, n);
  req.collective = core::CollectiveKind::reduce;
  req.root = root;
  req.params["segment_size"] = segment;
  return req;
}
core::Schedule pipeline(std::uint32_t p, std::uint64_t n, core::Rank root, std::int64_t segment) {
  const auto reg = algorithms::make_default_registry();
  return reg.generate(reg.find(core::CollectiveKind::reduce, "pipeline"),
                      reduce_request(p, n, root, segment));
}
} // namespace

TEST_CASE("pipeline reduce passes ceil(n/s) reduced segments down the chain to the root",
          "[algorithms][reduce][pipeline]") {
  // 10 bytes in segments of 4: 4, 4 and 2 bytes. Root 3 of 5: chain 2 -> 1 -> 0 -> 4 -> 3.
  const auto t = testing::traffic(pipeline(5, 10, 3, 4));
  for (const auto& [from, to] :
       std::vector<std::pair<core::Rank, core::Rank>>{{2, 1}, {1, 0}, {0, 4}, {4, 3}}) {
    CAPTURE(from);
    CHECK(t[from].send_peers == std::vector<core::Rank>{to, to, to});
    CHECK(t[from].send_lengths == std::vector<std::uint64_t>{4, 4, 2});
  }
  CHECK(t[3].sends == 0);
  CHECK(t[3].reduced_bytes == 10);
  CHECK(t[2].reduced_bytes == 0);
}

TEST_CASE("pipeline reduce reserves 3(p-1)k operations, (2p-3)k dependencies, one scratch vector",
          "[algorithms][reduce][pipeline]") {
  for (const std::uint32_t p : {1U, 2U, 5U, 33U}) {
    const core::Schedule s = pipeline(p, 1000, p / 2, 300); // k = 4
    CAPTURE(p);
    CHECK(s.op_count() == 3ULL * (p - 1) * 4);
    CHECK(s.dep_count() == (p > 1 ? (2ULL * p - 3) * 4 : 0));
    CHECK(s.header().tmp_bytes == (p > 1 ? 1000U : 0U));
  }
}

TEST_CASE("pipeline reduce declares no exact closed form and 64 KiB segments by default",
          "[algorithms][reduce][pipeline]") {
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(core::CollectiveKind::reduce, "smpi:ompi_pipeline");
  CHECK_FALSE(reg.cost(algo, reduce_request(4, 12, 0, 4)).has_value());
  algorithms::Request req = reduce_request(4, 10, 0, 4);
  req.params.clear();
  CHECK(reg.refusal(algo, req).empty());
  CHECK(req.params.at("segment_size") == 65536);
}
