#include "algorithm_test_support.hpp"
#include "collsim/algorithms/registry.hpp"

#include <catch2/catch.hpp>

using namespace collsim;

namespace {
core::Schedule ring(std::uint32_t p, std::uint64_t n) {
  const auto reg = algorithms::make_default_registry();
  return reg.generate(reg.find(core::CollectiveKind::allreduce, "ring"),
                      testing::allreduce_request(p, n));
}
} // namespace

TEST_CASE("ring allreduce sends 2(p-1) chunks of n/p bytes per rank to its right neighbour",
          "[algorithms][allreduce][ring]") {
  for (const std::uint32_t p : {2U, 3U, 4U, 7U, 16U}) {
    const std::uint64_t n = 12ULL * p;
    const auto t = testing::traffic(ring(p, n));
    for (core::Rank r = 0; r < p; ++r) {
      CAPTURE(p, r);
      CHECK(t[r].sends == 2ULL * (p - 1));
      CHECK(t[r].recvs == 2ULL * (p - 1));
      CHECK(t[r].send_bytes == 2ULL * (p - 1) * (n / p));
      CHECK(t[r].reduced_bytes == (p - 1) * (n / p));
      for (std::size_t i = 0; i < t[r].send_peers.size(); ++i) {
        CHECK(t[r].send_peers[i] == (r + 1) % p);
        CHECK(t[r].send_lengths[i] == n / p);
      }
    }
  }
}

TEST_CASE("ring allreduce spreads a remainder over blocks that differ by at most one byte",
          "[algorithms][allreduce][ring]") {
  // 10 bytes on 4 ranks: blocks of 3, 3, 2, 2 bytes (block_range).
  const auto t = testing::traffic(ring(4, 10));
  std::uint64_t total = 0;
  for (const auto& rank : t) {
    CHECK(rank.sends == 6);
    for (const auto len : rank.send_lengths) {
      CHECK((len == 2 || len == 3));
    }
    total += rank.send_bytes;
  }
  // Each of the 4 blocks crosses 3 links in each phase.
  CHECK(total == 2ULL * 3 * 10);
}

TEST_CASE("ring allreduce keeps zero-length messages when there are fewer bytes than ranks",
          "[algorithms][allreduce][ring]") {
  const auto t = testing::traffic(ring(5, 2));
  for (const auto& rank : t) {
    CHECK(rank.sends == 8); // the alpha term does not depend on n
  }
}

TEST_CASE("ring allreduce reserves exactly 4(p-1) operations and 3p-4 dependencies per rank",
          "[algorithms][allreduce][ring]") {
  for (const std::uint32_t p : {1U, 2U, 3U, 10U, 33U}) {
    const core::Schedule s = ring(p, 1000);
    CAPTURE(p);
    CHECK(s.op_count() == (p > 1 ? 4ULL * p * (p - 1) : 0));
    CHECK(s.dep_count() == (p > 1 ? 1ULL * p * (3 * p - 4) : 0));
    CHECK(s.header().tmp_bytes == 0);
  }
}

TEST_CASE("ring allreduce declares its closed form only when p divides n",
          "[algorithms][allreduce][ring]") {
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(core::CollectiveKind::allreduce, "ring");
  const auto c = reg.cost(algo, testing::allreduce_request(4, 4096));
  REQUIRE(c.has_value());
  CHECK(c->alpha_terms == 6.0);
  CHECK(c->beta_bytes == 2.0 * 3 * 1024);
  CHECK(c->gamma_bytes == 3.0 * 1024);
  CHECK_FALSE(reg.cost(algo, testing::allreduce_request(3, 4096)).has_value());
}
