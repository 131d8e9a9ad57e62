#include "algorithm_test_support.hpp"
#include "collsim/algorithms/registry.hpp"

#include <bit>
#include <catch2/catch.hpp>
#include <cstdint>

using namespace collsim;

namespace {
core::Schedule swing_latency(std::uint32_t p, std::uint64_t n) {
  const auto reg = algorithms::make_default_registry();
  return reg.generate(reg.find(core::CollectiveKind::allreduce, "swing_latency"),
                      testing::allreduce_request(p, n));
}

/// Swing's peer, written out independently of the generator: rho(s) = (1 - (-2)^(s+1)) / 3.
core::Rank peer(core::Rank r, std::uint32_t s, std::uint32_t p) {
  std::int64_t power = 1;
  for (std::uint32_t i = 0; i <= s; ++i) {
    power *= -2;
  }
  const std::int64_t rho = (1 - power) / 3;
  const std::int64_t q = r % 2 == 0 ? std::int64_t{r} + rho : std::int64_t{r} - rho;
  const auto pp = static_cast<std::int64_t>(p);
  return static_cast<core::Rank>(((q % pp) + pp) % pp);
}
} // namespace

TEST_CASE("swing latency allreduce talks to r + rho(s) from even ranks and r - rho(s) from odd "
          "ones, rho = 1, -1, 3, -5, 11, -21",
          "[algorithms][allreduce][swing_latency]") {
  const auto t = testing::traffic(swing_latency(64, 640));
  CHECK(t[0].send_peers == std::vector<core::Rank>{1, 63, 3, 59, 11, 43});
  CHECK(t[1].send_peers == std::vector<core::Rank>{0, 2, 62, 6, 54, 22});
  CHECK(t[10].send_peers == std::vector<core::Rank>{11, 9, 13, 5, 21, 53});
}

TEST_CASE("swing latency allreduce partners are symmetric and every step carries the whole "
          "vector for p a power of two",
          "[algorithms][allreduce][swing_latency]") {
  for (const std::uint32_t p : {2U, 4U, 8U, 16U, 32U, 64U, 128U}) {
    const std::uint64_t n = 3ULL * p;
    const auto t = testing::traffic(swing_latency(p, n));
    const auto lg = static_cast<std::uint32_t>(std::countr_zero(p));
    for (core::Rank r = 0; r < p; ++r) {
      CAPTURE(p, r);
      REQUIRE(t[r].sends == lg);
      CHECK(t[r].recvs == lg);
      CHECK(t[r].reduced_bytes == lg * n);
      for (std::uint32_t s = 0; s < lg; ++s) {
        const core::Rank q = t[r].send_peers[s];
        CHECK(q == peer(r, s, p));
        CHECK(t[q].send_peers[s] == r); // pi(pi(r, s), s) == r
        CHECK(t[r].send_lengths[s] == n);
      }
    }
  }
}

TEST_CASE("swing latency allreduce folds the first 2(p - p') ranks for other rank counts",
          "[algorithms][allreduce][swing_latency]") {
  // p = 6: p' = 4, ranks 0 and 2 hand their vectors to 1 and 3 and get the result back.
  const auto t = testing::traffic(swing_latency(6, 60));
  CHECK(t[0].send_peers == std::vector<core::Rank>{1});
  CHECK(t[2].send_peers == std::vector<core::Rank>{3});
  CHECK(t[0].recvs == 1);
  // Survivors 1, 3, 4, 5 are new ranks 0, 1, 2, 3: new 0 talks to 1, 3 (= -1), i.e. real 3, 5.
  CHECK(t[1].send_peers == std::vector<core::Rank>{3, 5, 0});
  CHECK(t[4].send_peers == std::vector<core::Rank>{5, 3});
  CHECK(t[1].reduced_bytes == 3 * 60);
}

TEST_CASE("swing latency allreduce reserves recursive doubling's operation counts",
          "[algorithms][allreduce][swing_latency]") {
  // Power of two: 3 lg p operations and 4 lg p - 2 dependencies per rank.
  const core::Schedule s = swing_latency(16, 100);
  CHECK(s.op_count() == 16ULL * 3 * 4);
  CHECK(s.dep_count() == 16ULL * (4 * 4 - 2));
  CHECK(s.header().tmp_bytes == 100);
  CHECK(swing_latency(1, 100).op_count() == 0);
}

TEST_CASE("swing latency allreduce declares lg p (a + n b + n g) for powers of two only",
          "[algorithms][allreduce][swing_latency]") {
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(core::CollectiveKind::allreduce, "swing_latency");
  const auto c = reg.cost(algo, testing::allreduce_request(8, 1000));
  REQUIRE(c.has_value());
  CHECK(c->alpha_terms == 3.0);
  CHECK(c->beta_bytes == 3000.0);
  CHECK(c->gamma_bytes == 3000.0);
  CHECK_FALSE(reg.cost(algo, testing::allreduce_request(6, 1000)).has_value());
}
