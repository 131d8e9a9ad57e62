#include "algorithm_test_support.hpp"
#include "collsim/algorithms/registry.hpp"
#include "collsim/core/verify.hpp"

#include <catch2/catch.hpp>

using namespace collsim;

namespace {
algorithms::Request barrier_request(std::uint32_t p, std::int64_t radix = 2) {
  algorithms::Request req = testing::allreduce_request(p, 0);
  req.collective = core::CollectiveKind::barrier;
  req.params["radix"] = radix;
  return req;
}
core::Schedule recexch(std::uint32_t p, std::int64_t radix = 2) {
  const auto reg = algorithms::make_default_registry();
  return reg.generate(reg.find(core::CollectiveKind::barrier, "recexch"),
                      barrier_request(p, radix));
}
} // namespace

TEST_CASE("recexch barrier on 8 ranks exchanges with r XOR 1, 2, 4",
          "[algorithms][barrier][recexch]") {
  const core::Schedule s = recexch(8);
  const auto t = testing::traffic(s);
  for (core::Rank r = 0; r < 8; ++r) {
    CHECK(t[r].send_peers == std::vector<core::Rank>{r ^ 1U, r ^ 2U, r ^ 4U});
    CHECK(t[r].recvs == 3);
  }
  // Per rank: receives of phases 0-1 (wait for nothing), send 0, send 1 (waits for phase 0's send
  // and receive), then phase 2's receive and send (wait for send 1 and receive 1).
  CHECK(s.op_count() == 8 * 6);
  CHECK(s.dep_count() == 8 * (2 + 2 + 2));
}

TEST_CASE("recexch barrier with radix 3 on 9 ranks signals two neighbours per phase, extra ranks "
          "check in and out",
          "[algorithms][barrier][recexch]") {
  CHECK(testing::traffic(recexch(9, 3))[4].send_peers == std::vector<core::Rank>{3, 5, 1, 7});
  // p = 5, k = 2: rank 0 checks in with rank 1 and is released by it.
  const auto t = testing::traffic(recexch(5));
  CHECK(t[0].send_peers == std::vector<core::Rank>{1});
  CHECK(t[0].recvs == 1);
  CHECK(t[1].send_peers == std::vector<core::Rank>{2, 3, 0});
  for (std::int64_t k = 2; k <= 5; ++k) {
    for (std::uint32_t p = 1; p <= 40; ++p) {
      CAPTURE(k, p);
      CHECK(core::check_semantics(recexch(p, k)).summary() == "");
    }
  }
}

TEST_CASE("recexch barrier costs log_k p a when p is a power of k",
          "[algorithms][barrier][recexch]") {
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(core::CollectiveKind::barrier, "mpich:recexch");
  CHECK(algo.name == "recexch");
  const auto c8 = reg.cost(algo, barrier_request(8));
  REQUIRE(c8.has_value());
  CHECK(c8->alpha_terms == 3.0);
  const auto c9 = reg.cost(algo, barrier_request(9, 3));
  REQUIRE(c9.has_value());
  CHECK(c9->alpha_terms == 2.0);
  const auto c3 = reg.cost(algo, barrier_request(3, 4)); // k lowered to 3
  REQUIRE(c3.has_value());
  CHECK(c3->alpha_terms == 1.0);
  CHECK_FALSE(reg.cost(algo, barrier_request(5)).has_value());
}
