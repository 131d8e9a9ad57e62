#include "algorithm_test_support.hpp"
#include "collsim/algorithms/registry.hpp"

#include <bit>
#include <catch2/catch.hpp>
#include <cstdint>

using namespace collsim;

namespace {
algorithms::Request bcast_request(std::uint32_t p, std::uint64_t n, core::Rank root) {
  algorithms::Request req = testing::allreduce_request(p, n);
  req.collective = core::CollectiveKind::bcast;
  req.root = root;
  return req;
}
core::Schedule bine(std::uint32_t p, std::uint64_t n, core::Rank root) {
  const auto reg = algorithms::make_default_registry();
  return reg.generate(reg.find(core::CollectiveKind::bcast, "bine"), bcast_request(p, n, root));
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
} // namespace

TEST_CASE("bine bcast on 8 ranks: the root sends to 3, 7, 1 (distances 3, 1, 1)",
          "[algorithms][bcast][bine]") {
  const auto t = testing::traffic(bine(8, 16, 0));
  CHECK(t[0].send_peers == std::vector<core::Rank>{3, 7, 1});
  CHECK(t[3].send_peers == std::vector<core::Rank>{4, 2});
  CHECK(t[7].send_peers == std::vector<core::Rank>{6});
  CHECK(t[4].send_peers == std::vector<core::Rank>{5});
  for (const core::Rank leaf : {1U, 2U, 5U, 6U}) {
    CHECK(t[leaf].sends == 0);
  }
}

TEST_CASE("bine bcast is the first-contact tree of the Swing butterfly, distances shrinking",
          "[algorithms][bcast][bine]") {
  for (const std::uint32_t p : {2U, 4U, 16U, 64U, 256U}) {
    for (const core::Rank root : {0U, p / 2 + 1 < p ? p / 2 + 1 : 0U}) {
      const auto t = testing::traffic(bine(p, 10, root));
      // Simulate on relative ranks: in step s = lg p - 1 .. 0 every holder sends to pi(v, s).
      std::vector<std::vector<core::Rank>> expected(p);
      std::vector<bool> has(p, false);
      std::vector<core::Rank> holders{0};
      has[0] = true;
      for (auto s = static_cast<std::uint32_t>(std::countr_zero(p)); s-- > 0;) {
        const std::size_t count = holders.size();
        for (std::size_t i = 0; i < count; ++i) {
          const core::Rank q = peer(holders[i], s, p);
          REQUIRE_FALSE(has[q]);
          has[q] = true;
          expected[(holders[i] + root) % p].push_back((q + root) % p);
          holders.push_back(q);
        }
      }
      for (core::Rank r = 0; r < p; ++r) {
        CAPTURE(p, root, r);
        CHECK(t[r].send_peers == expected[r]);
        CHECK(t[r].recvs == (r == root ? 0U : 1U));
      }
    }
  }
}

TEST_CASE("bine bcast: relative rank v sends u(v) - 1 times, u = equal trailing bits of its "
          "negabinary form",
          "[algorithms][bcast][bine]") {
  for (const std::uint32_t p : {8U, 32U, 128U}) {
    const auto lg = static_cast<std::uint32_t>(std::countr_zero(p));
    const auto t = testing::traffic(bine(p, 1, 0));
    const std::uint32_t mask = 0xAAAAAAAAU & (p - 1);
    for (core::Rank v = 1; v < p; ++v) {
      const std::uint32_t nb = ((v + mask) ^ mask) & (p - 1); // rank2nb over lg p digits
      const std::uint32_t flip = (nb & 1U) != 0 ? (p - 1) : 0U;
      const auto u = std::min(lg, static_cast<std::uint32_t>(std::countr_zero(nb ^ flip)));
      CAPTURE(p, v, nb);
      CHECK(t[v].sends == u - 1);
    }
  }
}

TEST_CASE("bine bcast reaches ranks above the largest power of two in one extra step",
          "[algorithms][bcast][bine]") {
  // p = 6, root 2: relative ranks 4 and 5 (real 0 and 1) hear from relative 0 and 1 (real 2, 3)
  // after those ranks' tree sends.
  const auto t = testing::traffic(bine(6, 10, 2));
  CHECK(t[2].send_peers == std::vector<core::Rank>{5, 3, 0});
  CHECK(t[3].send_peers == std::vector<core::Rank>{1});
  for (core::Rank r = 0; r < 6; ++r) {
    CHECK(t[r].recvs == (r == 2 ? 0U : 1U));
  }
  for (std::uint32_t p = 1; p <= 40; ++p) {
    const auto all = testing::traffic(bine(p, 3, p - 1));
    std::uint64_t messages = 0;
    for (core::Rank r = 0; r < p; ++r) {
      CAPTURE(p, r);
      CHECK(all[r].recvs == (r == p - 1 ? 0U : 1U));
      messages += all[r].sends;
    }
    CHECK(messages == p - 1);
  }
}

TEST_CASE("bine bcast declares lg p (a + n b) for powers of two only",
          "[algorithms][bcast][bine]") {
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(core::CollectiveKind::bcast, "bine");
  const auto c = reg.cost(algo, bcast_request(16, 100, 3));
  REQUIRE(c.has_value());
  CHECK(c->alpha_terms == 4.0);
  CHECK(c->beta_bytes == 400.0);
  CHECK_FALSE(reg.cost(algo, bcast_request(12, 100, 3)).has_value());
  const core::Schedule s = bine(16, 100, 3);
  CHECK(s.op_count() == 30);
  CHECK(s.dep_count() == 15 - 4); // every send but the root's waits for its receive
}
