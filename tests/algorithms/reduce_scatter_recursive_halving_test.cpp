#include "algorithm_test_support.hpp"
#include "collsim/algorithms/registry.hpp"

#include <bit>
#include <catch2/catch.hpp>

using namespace collsim;

namespace {
algorithms::Request reduce_scatter_request(std::uint32_t p, std::uint64_t n) {
  algorithms::Request req = testing::allreduce_request(p, n);
  req.collective = core::CollectiveKind::reduce_scatter;
  return req;
}

core::Schedule recursive_halving(std::uint32_t p, std::uint64_t n) {
  const auto reg = algorithms::make_default_registry();
  return reg.generate(reg.find(core::CollectiveKind::reduce_scatter, "recursive_halving"),
                      reduce_scatter_request(p, n));
}
} // namespace

TEST_CASE("recursive halving reduce-scatter halves the window at distances p/2, ..., 1",
          "[algorithms][reduce_scatter][recursive_halving]") {
  for (const std::uint32_t p : {2U, 4U, 8U, 32U}) {
    const std::uint64_t n = 64ULL * p;
    const auto t = testing::traffic(recursive_halving(p, n));
    const auto lg = static_cast<std::uint32_t>(std::countr_zero(p));
    for (core::Rank r = 0; r < p; ++r) {
      CAPTURE(p, r);
      REQUIRE(t[r].sends == lg);
      CHECK(t[r].send_bytes == (p - 1) * (n / p));
      CHECK(t[r].reduced_bytes == (p - 1) * (n / p));
      for (std::uint32_t k = 0; k < lg; ++k) {
        CHECK(t[r].send_peers[k] == (r ^ (p >> (k + 1))));
        CHECK(t[r].send_lengths[k] == n / 2 >> k);
      }
    }
  }
}

TEST_CASE("recursive halving reduce-scatter folds the first 2r ranks in pairs as MPICH does",
          "[algorithms][reduce_scatter][recursive_halving]") {
  // p = 6: p' = 4, r = 2, 60 bytes in blocks of 10. Ranks 0 and 2 send all 60 bytes to 1 and 3 and
  // get their block back; new ranks 0..3 are ranks 1, 3, 4, 5 and own blocks {0,1}, {2,3}, 4, 5.
  const auto t = testing::traffic(recursive_halving(6, 60));
  for (const core::Rank even : {0U, 2U}) {
    CAPTURE(even);
    CHECK(t[even].send_peers == std::vector<core::Rank>{even + 1});
    CHECK(t[even].send_bytes == 60);
    CHECK(t[even].recv_bytes == 10);
    CHECK(t[even].reduced_bytes == 0);
  }
  // Rank 1 (new rank 0): fold, then new rank 2 (rank 4) with regions 2-3, new rank 1 (rank 3)
  // with region 1, then block 0 back to rank 0.
  CHECK(t[1].send_peers == std::vector<core::Rank>{4, 3, 0});
  CHECK(t[1].send_lengths == std::vector<std::uint64_t>{20, 20, 10});
  CHECK(t[1].reduced_bytes == 60 + 40 + 20);
  // Rank 5 (new rank 3): new rank 1 (rank 3) with regions 0-1, new rank 2 (rank 4) with region 2.
  CHECK(t[5].send_peers == std::vector<core::Rank>{3, 4});
  CHECK(t[5].send_lengths == std::vector<std::uint64_t>{40, 10});
}

TEST_CASE("recursive halving reduce-scatter reserves exactly its operations and dependencies",
          "[algorithms][reduce_scatter][recursive_halving]") {
  for (const std::uint32_t p : {1U, 2U, 3U, 8U, 13U}) {
    const core::Schedule s = recursive_halving(p, 1000);
    CAPTURE(p);
    const std::uint64_t pof2 = std::bit_floor(p);
    const std::uint64_t rem = p - pof2;
    const std::uint64_t lg = std::countr_zero(std::bit_floor(p));
    if (p == 1) {
      CHECK(s.op_count() == 0);
      continue;
    }
    CHECK(s.op_count() == 2 * lg * pof2 + 4 * rem);
    CHECK(s.dep_count() == (pof2 - rem) * 2 * (lg - 1) + rem * (2 * lg + 2));
    CHECK(s.header().tmp_bytes == 0);
  }
}

TEST_CASE("recursive halving reduce-scatter declares its closed form only for powers of two",
          "[algorithms][reduce_scatter][recursive_halving]") {
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(core::CollectiveKind::reduce_scatter, "mpich:recursive_halving");
  CHECK(&reg.find(core::CollectiveKind::reduce_scatter, "ompi:2") == &algo);
  const auto c = reg.cost(algo, reduce_scatter_request(8, 8192));
  REQUIRE(c.has_value());
  CHECK(c->alpha_terms == 3.0);
  CHECK(c->beta_bytes == 7.0 * 1024);
  CHECK(c->gamma_bytes == 7.0 * 1024);
  CHECK_FALSE(reg.cost(algo, reduce_scatter_request(6, 6000)).has_value());
  CHECK_FALSE(reg.cost(algo, reduce_scatter_request(8, 8191)).has_value());
}
