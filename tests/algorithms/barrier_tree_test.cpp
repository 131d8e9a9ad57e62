#include "algorithm_test_support.hpp"
#include "collsim/algorithms/registry.hpp"

#include <catch2/catch.hpp>

using namespace collsim;

namespace {
algorithms::Request barrier_request(std::uint32_t p) {
  algorithms::Request req = testing::allreduce_request(p, 0);
  req.collective = core::CollectiveKind::barrier;
  return req;
}
} // namespace

TEST_CASE("tree barrier fans in to rank 0 and fans out over the same binomial tree",
          "[algorithms][barrier][tree]") {
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(core::CollectiveKind::barrier, "ompi:6");
  const core::Schedule s = reg.generate(algo, barrier_request(8));
  const auto t = testing::traffic(s);
  CHECK(t[0].send_peers == std::vector<core::Rank>{4, 2, 1});
  CHECK(t[0].recvs == 3);
  CHECK(t[4].send_peers == std::vector<core::Rank>{0, 6, 5});
  CHECK(t[6].send_peers == std::vector<core::Rank>{4, 7});
  CHECK(t[7].send_peers == std::vector<core::Rank>{6});
  CHECK(s.op_count() == 4 * 7);
  CHECK(s.dep_count() == 4 * 7 - 8);
}

TEST_CASE("tree barrier costs 2 lg p a on powers of two only", "[algorithms][barrier][tree]") {
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(core::CollectiveKind::barrier, "tree");
  CHECK(reg.cost(algo, barrier_request(16))->alpha_terms == 8.0);
  CHECK_FALSE(reg.cost(algo, barrier_request(6)).has_value());
}
