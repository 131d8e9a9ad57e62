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

TEST_CASE("linear barrier: everyone checks in with rank 0, which then releases everyone",
          "[algorithms][barrier][linear]") {
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(core::CollectiveKind::barrier, "ompi:1");
  const core::Schedule s = reg.generate(algo, barrier_request(5));
  const auto t = testing::traffic(s);
  CHECK(t[0].send_peers == std::vector<core::Rank>{1, 2, 3, 4});
  CHECK(t[0].recvs == 4);
  for (core::Rank r = 1; r < 5; ++r) {
    CHECK(t[r].send_peers == std::vector<core::Rank>{0});
    CHECK(t[r].recvs == 1);
  }
  CHECK(s.op_count() == 16);
  CHECK(s.dep_count() == 3 + 4 + 4);
  CHECK(reg.cost(algo, barrier_request(5))->alpha_terms == 2.0);
  CHECK(reg.cost(algo, barrier_request(1))->alpha_terms == 0.0);
}
