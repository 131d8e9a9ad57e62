#include "algorithm_test_support.hpp"
#include "collsim/algorithms/registry.hpp"

#include <bit>
#include <catch2/catch.hpp>

using namespace collsim;

namespace {
algorithms::Request bcast_request(std::uint32_t p, std::uint64_t n, core::Rank root) {
  algorithms::Request req = testing::allreduce_request(p, n);
  req.collective = core::CollectiveKind::bcast;
  req.root = root;
  return req;
}
core::Schedule binomial(std::uint32_t p, std::uint64_t n, core::Rank root) {
  const auto reg = algorithms::make_default_registry();
  return reg.generate(reg.find(core::CollectiveKind::bcast, "binomial"), bcast_request(p, n, root));
}
} // namespace

TEST_CASE("binomial bcast sends p-1 whole vectors, ceil(lg p) of them from the root",
          "[algorithms][bcast][binomial]") {
  for (const std::uint32_t p : {2U, 3U, 5U, 8U, 13U, 32U}) {
    for (const core::Rank root : {0U, p - 1}) {
      const std::uint64_t n = 100;
      const auto t = testing::traffic(binomial(p, n, root));
      std::uint64_t messages = 0;
      for (core::Rank r = 0; r < p; ++r) {
        CAPTURE(p, root, r);
        messages += t[r].sends;
        CHECK(t[r].recvs == (r == root ? 0U : 1U));
        for (const auto len : t[r].send_lengths) {
          CHECK(len == n);
        }
      }
      CHECK(messages == p - 1);
      CHECK(t[root].sends == static_cast<std::uint64_t>(std::bit_width(p - 1)));
    }
  }
}

TEST_CASE("binomial bcast follows MPICH's tree on relative ranks, biggest subtree first",
          "[algorithms][bcast][binomial]") {
  // p = 6, root 0: 0 -> 4, 2, 1; 2 -> 3; 4 -> 5.
  auto t = testing::traffic(binomial(6, 8, 0));
  CHECK(t[0].send_peers == std::vector<core::Rank>{4, 2, 1});
  CHECK(t[2].send_peers == std::vector<core::Rank>{3});
  CHECK(t[4].send_peers == std::vector<core::Rank>{5});
  CHECK(t[1].send_peers.empty());
  // Root 2 shifts the same tree: relative rank v is rank (v + 2) mod 6.
  t = testing::traffic(binomial(6, 8, 2));
  CHECK(t[2].send_peers == std::vector<core::Rank>{0, 4, 3});
  CHECK(t[4].send_peers == std::vector<core::Rank>{5});
  CHECK(t[0].send_peers == std::vector<core::Rank>{1});
}

TEST_CASE("binomial bcast reserves 2(p-1) operations and p-1-ceil(lg p) dependencies",
          "[algorithms][bcast][binomial]") {
  for (const std::uint32_t p : {1U, 2U, 6U, 33U}) {
    const core::Schedule s = binomial(p, 10, p / 2);
    CAPTURE(p);
    CHECK(s.op_count() == 2ULL * (p - 1));
    CHECK(s.dep_count() == (p - 1) - static_cast<std::uint64_t>(std::bit_width(p - 1)));
    CHECK(s.header().tmp_bytes == 0);
  }
}

TEST_CASE("binomial bcast's closed form is lg p (a + n b) for p a power of two",
          "[algorithms][bcast][binomial]") {
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(core::CollectiveKind::bcast, "mpich:binomial");
  const auto c = reg.cost(algo, bcast_request(8, 10, 1));
  REQUIRE(c.has_value());
  CHECK(c->alpha_terms == 3.0);
  CHECK(c->beta_bytes == 30.0);
  CHECK(c->gamma_bytes == 0.0);
  CHECK_FALSE(reg.cost(algo, bcast_request(5, 10, 1)).has_value());
}
