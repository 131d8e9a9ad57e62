#include "algorithm_test_support.hpp"
#include "collsim/algorithms/registry.hpp"

#include <catch2/catch.hpp>

using namespace collsim;

namespace {
core::Schedule rabenseifner(std::uint32_t p, std::uint64_t n) {
  const auto reg = algorithms::make_default_registry();
  return reg.generate(reg.find(core::CollectiveKind::allreduce, "rabenseifner"),
                      testing::allreduce_request(p, n));
}
} // namespace

TEST_CASE("rabenseifner sends 2(p-1)/p n bytes per rank in 2 lg p messages on a power of two",
          "[algorithms][allreduce][rabenseifner]") {
  for (const std::uint32_t p : {2U, 4U, 8U, 32U}) {
    const std::uint64_t n = 64ULL * p;
    const auto t = testing::traffic(rabenseifner(p, n));
    const auto lg = static_cast<std::uint32_t>(std::countr_zero(p));
    for (core::Rank r = 0; r < p; ++r) {
      CAPTURE(p, r);
      REQUIRE(t[r].sends == 2ULL * lg);
      CHECK(t[r].send_bytes == 2ULL * (p - 1) * (n / p));
      CHECK(t[r].reduced_bytes == (p - 1) * (n / p));
      for (std::uint32_t k = 0; k < lg; ++k) {
        // Halving starts at distance 1; the allgather replays the steps in reverse.
        CHECK(t[r].send_peers[k] == (r ^ (1U << k)));
        CHECK(t[r].send_peers[2 * lg - 1 - k] == (r ^ (1U << k)));
        // Step k sends half the window: n / 2^(k+1).
        CHECK(t[r].send_lengths[k] == n >> (k + 1));
      }
    }
  }
}

TEST_CASE("rabenseifner moves 2(p-1) n bytes in all when halves are uneven",
          "[algorithms][allreduce][rabenseifner]") {
  for (const std::uint64_t n : {1ULL, 7ULL, 1000003ULL}) {
    const auto t = testing::traffic(rabenseifner(8, n));
    std::uint64_t total = 0;
    for (const auto& rank : t) {
      total += rank.send_bytes;
    }
    CAPTURE(n);
    CHECK(total == 2ULL * 7 * n);
  }
}

TEST_CASE("rabenseifner folds a non-power of two by exchanging halves, as Open MPI does",
          "[algorithms][allreduce][rabenseifner]") {
  // p = 6: p' = 4, r = 2. Rank 0 sends its second half (51 of 101 bytes) to rank 1; rank 1 sends
  // its first half (50) to rank 0 and, once reduced, its second half (51). Survivors 0, 2, 4, 5 are
  // new ranks 0..3; rank 0's partners are new 1 = rank 2 and new 2 = rank 4.
  const auto t = testing::traffic(rabenseifner(6, 101));
  CHECK(t[1].send_peers == std::vector<core::Rank>{0, 0});
  CHECK(t[1].send_lengths == std::vector<std::uint64_t>{50, 51});
  CHECK(t[1].recv_bytes == 51 + 101);
  CHECK(t[0].send_peers == std::vector<core::Rank>{1, 2, 4, 4, 2, 1});
  CHECK(t[0].send_lengths.front() == 51);
  CHECK(t[0].send_lengths.back() == 101);
  CHECK(t[5].send_peers == std::vector<core::Rank>{4, 2, 2, 4});
}

TEST_CASE("rabenseifner reserves its exact operation and dependency counts",
          "[algorithms][allreduce][rabenseifner]") {
  const core::Schedule pow2 = rabenseifner(8, 100);
  CHECK(pow2.op_count() == 8ULL * 15);
  CHECK(pow2.dep_count() == 8ULL * 15);
  // p = 6 (lg p' = 2): 2 plain survivors (10 ops, 9 deps), 2 folding even ranks (15, 17), 2 odd
  // ranks that drop out (5, 4).
  const core::Schedule six = rabenseifner(6, 100);
  CHECK(six.op_count() == 2 * 10 + 2 * 15 + 2 * 5);
  CHECK(six.dep_count() == 2 * 9 + 2 * 17 + 2 * 4);
}

TEST_CASE("rabenseifner's closed form holds when p' divides n",
          "[algorithms][allreduce][rabenseifner]") {
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(core::CollectiveKind::allreduce, "rabenseifner");
  const auto pow2 = reg.cost(algo, testing::allreduce_request(8, 800));
  REQUIRE(pow2.has_value());
  CHECK(pow2->alpha_terms == 6.0);
  CHECK(pow2->beta_bytes == 1400.0);
  CHECK(pow2->gamma_bytes == 700.0);
  // p = 6, p' = 4: fold 2a + n b + n/2 g, halving/doubling among 4, unfold a + n b.
  const auto six = reg.cost(algo, testing::allreduce_request(6, 100));
  REQUIRE(six.has_value());
  CHECK(six->alpha_terms == 7.0);
  CHECK(six->beta_bytes == 100.0 + 150.0 + 100.0);
  CHECK(six->gamma_bytes == 50.0 + 75.0);
  CHECK_FALSE(reg.cost(algo, testing::allreduce_request(6, 102)).has_value());
}
