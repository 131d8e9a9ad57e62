#include "algorithm_test_support.hpp"
#include "collsim/algorithms/registry.hpp"

#include <catch2/catch.hpp>

using namespace collsim;

namespace {
algorithms::Request reduce_request(std::uint32_t p, std::uint64_t n, core::Rank root,
                                   std::int64_t chains, std::int64_t segment) {
  algorithms::Request req = testing::allreduce_request(p, n);
  req.collective = core::CollectiveKind::reduce;
  req.root = root;
  req.params["chains"] = chains;
  req.params["segment_size"] = segment;
  return req;
}
core::Schedule chain(const algorithms::Request& req) {
  const auto reg = algorithms::make_default_registry();
  return reg.generate(reg.find(core::CollectiveKind::reduce, "chain"), req);
}
} // namespace

TEST_CASE("chain reduce runs chains of consecutive ranks into the root, longer ones first",
          "[algorithms][reduce][chain]") {
  // p = 10, 4 chains: 3-2-1, 5-4, 7-6, 9-8, heads 1, 4, 6, 8 send to the root.
  const auto t = testing::traffic(chain(reduce_request(10, 8, 0, 4, 0)));
  for (const core::Rank head : {1U, 4U, 6U, 8U}) {
    CHECK(t[head].send_peers == std::vector<core::Rank>{0});
  }
  CHECK(t[3].send_peers == std::vector<core::Rank>{2});
  CHECK(t[2].send_peers == std::vector<core::Rank>{1});
  CHECK(t[5].send_peers == std::vector<core::Rank>{4});
  CHECK(t[9].send_peers == std::vector<core::Rank>{8});
  CHECK(t[0].recvs == 4);
  CHECK(t[0].reduced_bytes == 4 * 8);
}

TEST_CASE("chain reduce reserves 3(p-1)k operations and two scratch vectors at a busy root",
          "[algorithms][reduce][chain]") {
  // p = 10, f = 4, k = 2 segments. Dependencies per segment: the root's receives from heads 6 and
  // 8 reuse a buffer (2) and its 4 reductions wait for their receives and for each other (4 + 3);
  // ranks 1, 2, 4, 6 and 8 each reduce one child's segment and send it on (2 each).
  const core::Schedule s = chain(reduce_request(10, 100, 0, 4, 50));
  CHECK(s.op_count() == 3ULL * 9 * 2);
  CHECK(s.dep_count() == (9 + 2 * 5) * 2ULL);
  CHECK(s.header().tmp_bytes == 200);
}

TEST_CASE("chain reduce declares no exact closed form", "[algorithms][reduce][chain]") {
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(core::CollectiveKind::reduce, "ompi:2");
  CHECK_FALSE(reg.cost(algo, reduce_request(10, 8, 0, 4, 4)).has_value());
  CHECK_FALSE(algo.cost_formula.empty());
}
