#include "algorithm_test_support.hpp"
#include "collsim/algorithms/registry.hpp"

#include <catch2/catch.hpp>

using namespace collsim;

namespace {
algorithms::Request bcast_request(std::uint32_t p, std::uint64_t n, core::Rank root,
                                  std::int64_t segment) {
  algorithms::Request req = testing::allreduce_request(p, n);
  req.collective = core::CollectiveKind::bcast;
  req.root = root;
  req.params["segment_size"] = segment;
  return req;
}
core::Schedule pipeline(std::uint32_t p, std::uint64_t n, core::Rank root, std::int64_t segment) {
  const auto reg = algorithms::make_default_registry();
  return reg.generate(reg.find(core::CollectiveKind::bcast, "pipeline"),
                      bcast_request(p, n, root, segment));
}
} // namespace

TEST_CASE("pipeline bcast forwards ceil(n/s) segments along the chain root, root+1, ...",
          "[algorithms][bcast][pipeline]") {
  // 10 bytes in segments of 4: 4, 4 and 2 bytes. Root 3 of 5: chain 3 -> 4 -> 0 -> 1 -> 2.
  const auto t = testing::traffic(pipeline(5, 10, 3, 4));
  for (const auto& [from, to] :
       std::vector<std::pair<core::Rank, core::Rank>>{{3, 4}, {4, 0}, {0, 1}, {1, 2}}) {
    CAPTURE(from);
    CHECK(t[from].send_peers == std::vector<core::Rank>{to, to, to});
    CHECK(t[from].send_lengths == std::vector<std::uint64_t>{4, 4, 2});
  }
  CHECK(t[2].sends == 0);
  CHECK(t[3].recvs == 0);
}

TEST_CASE("pipeline bcast with segment_size 0 or at least n sends one message per link",
          "[algorithms][bcast][pipeline]") {
  for (const std::int64_t segment : {0, 10, 64}) {
    const auto t = testing::traffic(pipeline(4, 10, 0, segment));
    CHECK(t[0].send_lengths == std::vector<std::uint64_t>{10});
  }
  // Zero bytes still make one (empty) message per link.
  const auto t = testing::traffic(pipeline(4, 0, 0, 4));
  CHECK(t[1].send_lengths == std::vector<std::uint64_t>{0});
}

TEST_CASE("pipeline bcast reserves 2(p-1)k operations and (p-2)k dependencies",
          "[algorithms][bcast][pipeline]") {
  for (const std::uint32_t p : {1U, 2U, 5U, 33U}) {
    const core::Schedule s = pipeline(p, 1000, p / 2, 300); // k = 4
    CAPTURE(p);
    CHECK(s.op_count() == 2ULL * (p - 1) * 4);
    CHECK(s.dep_count() == (p > 1 ? (p - 2) * 4ULL : 0));
  }
}

TEST_CASE("pipeline bcast's closed form (p-1) a + (p+k-2) s b holds when s divides n",
          "[algorithms][bcast][pipeline]") {
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(core::CollectiveKind::bcast, "ompi:3");
  const auto c = reg.cost(algo, bcast_request(4, 12, 0, 4));
  REQUIRE(c.has_value());
  CHECK(c->alpha_terms == 3.0);
  CHECK(c->beta_bytes == 20.0);
  CHECK_FALSE(reg.cost(algo, bcast_request(4, 10, 0, 4)).has_value());
  // The default segment is Open MPI's 128 KiB.
  algorithms::Request req = bcast_request(4, 10, 0, 4);
  req.params.clear();
  CHECK(reg.refusal(algo, req).empty());
  CHECK(req.params.at("segment_size") == 131072);
}
