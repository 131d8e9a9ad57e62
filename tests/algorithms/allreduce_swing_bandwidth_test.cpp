#include "algorithm_test_support.hpp"
#include "collsim/algorithms/registry.hpp"

#include <algorithm>
#include <bit>
#include <catch2/catch.hpp>
#include <cstdint>
#include <set>

using namespace collsim;

namespace {
core::Schedule swing_bandwidth(std::uint32_t p, std::uint64_t n) {
  const auto reg = algorithms::make_default_registry();
  return reg.generate(reg.find(core::CollectiveKind::allreduce, "swing_bandwidth"),
                      testing::allreduce_request(p, n));
}

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

/// The ranks reachable from r through steps from..lg p - 1 (r included).
std::set<core::Rank> reach(core::Rank r, std::uint32_t from, std::uint32_t p) {
  std::set<core::Rank> out{r};
  const auto lg = static_cast<std::uint32_t>(std::countr_zero(p));
  for (std::uint32_t s = from; s < lg; ++s) {
    std::set<core::Rank> next = out;
    for (const core::Rank q : out) {
      next.insert(peer(q, s, p));
    }
    out = next;
  }
  return out;
}
} // namespace

TEST_CASE("swing bandwidth allreduce halves the data towards Swing peers, then doubles it back",
          "[algorithms][allreduce][swing_bandwidth]") {
  for (const std::uint32_t p : {2U, 4U, 8U, 16U, 64U}) {
    const std::uint64_t n = 4ULL * p;
    const auto t = testing::traffic(swing_bandwidth(p, n));
    const auto lg = static_cast<std::uint32_t>(std::countr_zero(p));
    for (core::Rank r = 0; r < p; ++r) {
      CAPTURE(p, r);
      REQUIRE(t[r].sends == 2 * lg);
      CHECK(t[r].send_bytes == 2 * (p - 1) * (n / p));
      CHECK(t[r].reduced_bytes == (p - 1) * (n / p));
      for (std::uint32_t s = 0; s < lg; ++s) {
        CHECK(t[r].send_peers[s] == peer(r, s, p));
        CHECK(t[r].send_peers[2 * lg - 1 - s] == peer(r, s, p));
        CHECK(t[r].send_lengths[s] == n >> (s + 1));
        CHECK(t[r].send_lengths[2 * lg - 1 - s] == n >> (s + 1));
      }
    }
  }
}

TEST_CASE("swing bandwidth allreduce sends in step s exactly the blocks its peer reaches through "
          "the remaining steps",
          "[algorithms][allreduce][swing_bandwidth]") {
  for (const std::uint32_t p : {4U, 8U, 16U, 32U}) {
    const core::Schedule s = swing_bandwidth(p, p); // one byte per block
    const auto lg = static_cast<std::uint32_t>(std::countr_zero(p));
    // The byte each rank owns after the reduce-scatter: the target of its last reduction.
    std::vector<std::uint64_t> owned(p);
    for (core::Rank r = 0; r < p; ++r) {
      std::uint32_t reductions = 0;
      for (core::OpId id = s.rank_begin(r); id < s.rank_end(r); ++id) {
        if (s.kind(id) == core::OpKind::reduce && ++reductions == lg) {
          REQUIRE(s.target(id).length == 1);
          owned[r] = s.target(id).offset;
        }
      }
    }
    std::vector<std::uint64_t> sorted = owned;
    std::sort(sorted.begin(), sorted.end());
    for (std::uint64_t b = 0; b < p; ++b) {
      CHECK(sorted[b] == b); // every block has exactly one owner
    }
    for (core::Rank r = 0; r < p; ++r) {
      std::uint32_t step = 0;
      for (core::OpId id = s.rank_begin(r); id < s.rank_end(r) && step < lg; ++id) {
        if (s.kind(id) != core::OpKind::send) {
          continue;
        }
        const core::Range sent = s.target(id);
        std::set<core::Rank> owners;
        for (core::Rank q = 0; q < p; ++q) {
          if (owned[q] >= sent.offset && owned[q] < sent.offset + sent.length) {
            owners.insert(q);
          }
        }
        CAPTURE(p, r, step);
        CHECK(owners == reach(peer(r, step, p), step + 1, p));
        ++step;
      }
    }
  }
}

TEST_CASE("swing bandwidth allreduce folds whole vectors for other rank counts",
          "[algorithms][allreduce][swing_bandwidth]") {
  // p = 6: ranks 0 and 2 send n to 1 and 3 and receive the result; survivors run p' = 4.
  const auto t = testing::traffic(swing_bandwidth(6, 48));
  CHECK(t[0].send_peers == std::vector<core::Rank>{1});
  CHECK(t[0].send_lengths == std::vector<std::uint64_t>{48});
  CHECK(t[1].send_peers == std::vector<core::Rank>{3, 5, 5, 3, 0});
  CHECK(t[1].send_lengths == std::vector<std::uint64_t>{24, 12, 12, 24, 48});
  CHECK(t[1].reduced_bytes == 48 + 36);
  CHECK(t[4].sends == 4);
}

TEST_CASE("swing bandwidth allreduce reserves Rabenseifner's operation counts",
          "[algorithms][allreduce][swing_bandwidth]") {
  const core::Schedule s = swing_bandwidth(8, 64);
  CHECK(s.op_count() == 8ULL * 5 * 3);
  CHECK(s.dep_count() == 8ULL * (6 * 3 - 3));
  // p = 6 (k = 2, r = 2): 2 survivors at or above 2r, 2 odd and 2 even folded ranks.
  const core::Schedule f = swing_bandwidth(6, 64);
  CHECK(f.op_count() == 2ULL * 10 + 2 * 13 + 2 * 2);
  CHECK(f.dep_count() == 2ULL * 9 + 2 * 14 + 2 * 1);
}

TEST_CASE("swing bandwidth allreduce declares 2 lg p a + 2(p-1)/p n b + (p-1)/p n g when p is a "
          "power of two dividing n",
          "[algorithms][allreduce][swing_bandwidth]") {
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(core::CollectiveKind::allreduce, "swing_bandwidth");
  const auto c = reg.cost(algo, testing::allreduce_request(8, 800));
  REQUIRE(c.has_value());
  CHECK(c->alpha_terms == 6.0);
  CHECK(c->beta_bytes == 2.0 * 700);
  CHECK(c->gamma_bytes == 700.0);
  CHECK_FALSE(reg.cost(algo, testing::allreduce_request(8, 801)).has_value());
  CHECK_FALSE(reg.cost(algo, testing::allreduce_request(6, 600)).has_value());
}

TEST_CASE("swing bandwidth allreduce moves fewer byte-hops on a ring than Rabenseifner",
          "[algorithms][allreduce][swing_bandwidth]") {
  // On a 64-rank ring, step s sends n/2^(s+1) bytes |rho(s)| = 1, 1, 3, 5, 11, 21 hops instead of
  // 2^s: 2 (1/2 + 1/4 + 3/8 + 5/16 + 11/32 + 21/64) n = 4.21875 n byte-hops per rank against
  // Rabenseifner's 2 lg p n/2 = 6 n (algorithms.md AR22).
  constexpr std::uint32_t p = 64;
  constexpr std::uint64_t n = 4096;
  const auto reg = algorithms::make_default_registry();
  const auto hops = [&](const std::string& name) {
    const auto t = testing::traffic(reg.generate(reg.find(core::CollectiveKind::allreduce, name),
                                                 testing::allreduce_request(p, n)));
    std::vector<std::uint64_t> out;
    for (core::Rank r = 0; r < p; ++r) {
      std::uint64_t sum = 0;
      for (std::size_t i = 0; i < t[r].send_peers.size(); ++i) {
        const std::uint32_t d = (t[r].send_peers[i] + p - r) % p;
        sum += t[r].send_lengths[i] * std::min(d, p - d);
      }
      out.push_back(sum);
    }
    return out;
  };
  CHECK(hops("swing_bandwidth") == std::vector<std::uint64_t>(p, 17280));
  CHECK(hops("rabenseifner") == std::vector<std::uint64_t>(p, 24576));
}
