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

TEST_CASE("double-ring barrier passes the token to the right twice",
          "[algorithms][barrier][double_ring]") {
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(core::CollectiveKind::barrier, "double_ring");
  const core::Schedule s = reg.generate(algo, barrier_request(4));
  const auto t = testing::traffic(s);
  for (core::Rank r = 0; r < 4; ++r) {
    CHECK(t[r].send_peers == std::vector<core::Rank>{(r + 1) % 4, (r + 1) % 4});
    CHECK(t[r].recvs == 2);
  }
  CHECK(s.kind(s.rank_begin(0)) == core::OpKind::send); // rank 0 starts the token
  CHECK(s.kind(s.rank_begin(1)) == core::OpKind::recv);
  CHECK(s.op_count() == 16);
  CHECK(s.dep_count() == 7);
  CHECK(reg.cost(algo, barrier_request(4))->alpha_terms == 8.0);
}
