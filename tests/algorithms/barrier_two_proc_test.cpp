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

TEST_CASE("two-process barrier is one exchange and refuses other rank counts",
          "[algorithms][barrier][two_proc]") {
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(core::CollectiveKind::barrier, "ompi:5");
  const core::Schedule s = reg.generate(algo, barrier_request(2));
  const auto t = testing::traffic(s);
  CHECK(t[0].send_peers == std::vector<core::Rank>{1});
  CHECK(t[1].send_peers == std::vector<core::Rank>{0});
  CHECK(s.op_count() == 4);
  CHECK(s.dep_count() == 0);
  CHECK(reg.cost(algo, barrier_request(2))->alpha_terms == 1.0);
  CHECK_THROWS_WITH(reg.generate(algo, barrier_request(3)),
                    "two_proc: needs exactly 2 ranks (got 3)");
  CHECK_THROWS_WITH(reg.generate(algo, barrier_request(1)),
                    "two_proc: needs exactly 2 ranks (got 1)");
}
