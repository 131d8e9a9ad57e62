#include "algorithm_test_support.hpp"
#include "collsim/algorithms/registry.hpp"

#include <catch2/catch.hpp>

using namespace collsim;

namespace {
core::Schedule recursive_doubling(std::uint32_t p, std::uint64_t n) {
  const auto reg = algorithms::make_default_registry();
  return reg.generate(reg.find(core::CollectiveKind::allreduce, "recursive_doubling"),
                      testing::allreduce_request(p, n));
}
} // namespace

TEST_CASE("recursive doubling sends lg p full vectors per rank, to rank XOR 2^k in step k",
          "[algorithms][allreduce][recursive_doubling]") {
  for (const std::uint32_t p : {2U, 4U, 8U, 32U}) {
    const std::uint64_t n = 1000;
    const auto t = testing::traffic(recursive_doubling(p, n));
    const auto lg = static_cast<std::uint64_t>(std::countr_zero(p));
    for (core::Rank r = 0; r < p; ++r) {
      CAPTURE(p, r);
      REQUIRE(t[r].sends == lg);
      CHECK(t[r].send_bytes == lg * n);
      CHECK(t[r].reduced_bytes == lg * n);
      for (std::uint32_t k = 0; k < lg; ++k) {
        CHECK(t[r].send_peers[k] == (r ^ (1U << k)));
      }
    }
  }
}

TEST_CASE("recursive doubling on a non-power of two folds the first 2r ranks as MPICH does",
          "[algorithms][allreduce][recursive_doubling]") {
  // p = 6: p' = 4, r = 2. Ranks 0 and 2 send their vector to 1 and 3 and wait for the result;
  // survivors 1, 3, 4, 5 are new ranks 0..3 and run two butterfly steps.
  const std::uint64_t n = 64;
  const auto t = testing::traffic(recursive_doubling(6, n));
  for (const core::Rank even : {0U, 2U}) {
    CHECK(t[even].sends == 1);
    CHECK(t[even].send_peers[0] == even + 1);
    CHECK(t[even].recvs == 1);
    CHECK(t[even].reduced_bytes == 0);
  }
  // Odd rank 1 (new rank 0): fold reduce, partners new 1 = rank 3 and new 2 = rank 4, unfold.
  CHECK(t[1].send_peers == std::vector<core::Rank>{3, 4, 0});
  CHECK(t[1].reduced_bytes == 3 * n);
  // Rank 5 (new rank 3): partners new 2 = rank 4 and new 1 = rank 3; no fold.
  CHECK(t[5].send_peers == std::vector<core::Rank>{4, 3});
  CHECK(t[5].reduced_bytes == 2 * n);
  for (const auto& rank : t) {
    for (const auto len : rank.send_lengths) {
      CHECK(len == n);
    }
  }
}

TEST_CASE("recursive doubling reserves its exact operation and dependency counts",
          "[algorithms][allreduce][recursive_doubling]") {
  // Survivors without a fold: 3 ops and 4 deps per step, minus the first step's 2 deps.
  const core::Schedule pow2 = recursive_doubling(8, 10);
  CHECK(pow2.op_count() == 8ULL * 9);
  CHECK(pow2.dep_count() == 8ULL * 10);
  // p = 6: 2 plain survivors (6 ops, 6 deps), 2 odd survivors (9 ops, 10 deps), 2 even (2, 1).
  const core::Schedule six = recursive_doubling(6, 10);
  CHECK(six.op_count() == 2 * 6 + 2 * 9 + 2 * 2);
  CHECK(six.dep_count() == 2 * 6 + 2 * 10 + 2 * 1);
  CHECK(six.header().tmp_bytes == 10);
}

TEST_CASE("recursive doubling declares a closed form only on a power of two",
          "[algorithms][allreduce][recursive_doubling]") {
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(core::CollectiveKind::allreduce, "recursive_doubling");
  const auto pow2 = reg.cost(algo, testing::allreduce_request(16, 100));
  REQUIRE(pow2.has_value());
  CHECK(pow2->alpha_terms == 4.0);
  CHECK(pow2->beta_bytes == 400.0);
  CHECK(pow2->gamma_bytes == 400.0);
  // MPICH's fold-and-unfold count is only a bound (ranks outside the fold start early).
  CHECK_FALSE(reg.cost(algo, testing::allreduce_request(20, 100)).has_value());
}
