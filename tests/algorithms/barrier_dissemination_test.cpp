#include "algorithm_test_support.hpp"
#include "collsim/algorithms/registry.hpp"
#include "collsim/core/errors.hpp"

#include <catch2/catch.hpp>

using namespace collsim;

namespace {
algorithms::Request barrier_request(std::uint32_t p, std::int64_t radix = 2) {
  algorithms::Request req = testing::allreduce_request(p, 0);
  req.collective = core::CollectiveKind::barrier;
  req.params["radix"] = radix;
  return req;
}
core::Schedule dissemination(std::uint32_t p, std::int64_t radix = 2) {
  const auto reg = algorithms::make_default_registry();
  return reg.generate(reg.find(core::CollectiveKind::barrier, "dissemination"),
                      barrier_request(p, radix));
}
} // namespace

TEST_CASE("dissemination barrier sends to r + 2^k in ceil(lg p) rounds, for any p",
          "[algorithms][barrier][dissemination]") {
  const std::uint32_t p = 5;
  const core::Schedule s = dissemination(p);
  const auto t = testing::traffic(s);
  for (core::Rank r = 0; r < p; ++r) {
    CAPTURE(r);
    CHECK(t[r].send_peers == std::vector<core::Rank>{(r + 1) % p, (r + 2) % p, (r + 4) % p});
    CHECK(t[r].recvs == 3);
  }
  // Rounds 1 and 2 wait for the send and the receive of the round before.
  CHECK(s.op_count() == 5 * 6);
  CHECK(s.dep_count() == 5 * 4);
}

TEST_CASE("dissemination barrier with radix k sends k-1 messages per round",
          "[algorithms][barrier][dissemination]") {
  // p = 10, k = 3: shifts 1, 3, 9; the last round has only m = 1 (2 x 9 >= 10).
  const core::Schedule s = dissemination(10, 3);
  const auto t = testing::traffic(s);
  CHECK(t[0].send_peers == std::vector<core::Rank>{1, 2, 3, 6, 9});
  CHECK(t[7].send_peers == std::vector<core::Rank>{8, 9, 0, 3, 6});
  // Round 2's two sends wait for round 1's four operations, round 3's send for round 2's four.
  CHECK(s.dep_count() == 10 * (2 * 4 + 4));
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(core::CollectiveKind::barrier, "mpich:k_dissemination");
  CHECK(reg.cost(algo, barrier_request(10, 3))->alpha_terms == 3.0);
  CHECK(reg.cost(algo, barrier_request(9, 3))->alpha_terms == 2.0);
  CHECK(reg.cost(algo, barrier_request(100))->alpha_terms == 7.0);
}

TEST_CASE("dissemination barrier refuses a radix below 2", "[algorithms][barrier][dissemination]") {
  const auto reg = algorithms::make_default_registry();
  CHECK_THROWS_WITH(
      reg.generate(reg.find(core::CollectiveKind::barrier, "ompi:bruck"), barrier_request(4, 1)),
      "dissemination: parameter 'radix' = 1 is out of range [2, 1024]");
}
