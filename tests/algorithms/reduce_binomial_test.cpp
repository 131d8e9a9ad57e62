#include "algorithm_test_support.hpp"
#include "collsim/algorithms/registry.hpp"

#include <bit>
#include <catch2/catch.hpp>

using namespace collsim;

namespace {
algorithms::Request reduce_request(std::uint32_t p, std::uint64_t n, core::Rank root) {
  algorithms::Request req = testing::allreduce_request(p, n);
  req.collective = core::CollectiveKind::reduce;
  req.root = root;
  return req;
}
core::Schedule binomial(std::uint32_t p, std::uint64_t n, core::Rank root) {
  const auto reg = algorithms::make_default_registry();
  return reg.generate(reg.find(core::CollectiveKind::reduce, "binomial"),
                      reduce_request(p, n, root));
}
} // namespace

TEST_CASE("binomial reduce sends p-1 whole vectors, the root receives and reduces ceil(lg p)",
          "[algorithms][reduce][binomial]") {
  for (const std::uint32_t p : {2U, 3U, 5U, 8U, 13U, 32U}) {
    for (const core::Rank root : {0U, p - 1}) {
      const std::uint64_t n = 100;
      const auto t = testing::traffic(binomial(p, n, root));
      const auto rounds = static_cast<std::uint64_t>(std::bit_width(p - 1));
      std::uint64_t messages = 0;
      for (core::Rank r = 0; r < p; ++r) {
        CAPTURE(p, root, r);
        messages += t[r].sends;
        CHECK(t[r].sends == (r == root ? 0U : 1U));
        CHECK(t[r].reduced_bytes == t[r].recvs * n);
      }
      CHECK(messages == p - 1);
      CHECK(t[root].recvs == rounds);
      CHECK(t[root].reduced_bytes == rounds * n);
    }
  }
}

TEST_CASE("binomial reduce follows MPICH's tree on relative ranks",
          "[algorithms][reduce][binomial]") {
  // p = 6, root 0: 1 -> 0, 3 -> 2, 5 -> 4, 2 -> 0, 4 -> 0.
  auto t = testing::traffic(binomial(6, 8, 0));
  CHECK(t[1].send_peers == std::vector<core::Rank>{0});
  CHECK(t[2].send_peers == std::vector<core::Rank>{0});
  CHECK(t[3].send_peers == std::vector<core::Rank>{2});
  CHECK(t[4].send_peers == std::vector<core::Rank>{0});
  CHECK(t[5].send_peers == std::vector<core::Rank>{4});
  // Root 4: relative rank v is rank (v + 4) mod 6.
  t = testing::traffic(binomial(6, 8, 4));
  CHECK(t[5].send_peers == std::vector<core::Rank>{4});
  CHECK(t[1].send_peers == std::vector<core::Rank>{0});
  CHECK(t[0].send_peers == std::vector<core::Rank>{4});
  CHECK(t[4].recvs == 3);
}

TEST_CASE("binomial reduce reserves 3(p-1) operations and 2(p-1)-1 dependencies, one scratch "
          "vector",
          "[algorithms][reduce][binomial]") {
  for (const std::uint32_t p : {1U, 2U, 6U, 33U}) {
    const core::Schedule s = binomial(p, 10, p / 2);
    CAPTURE(p);
    CHECK(s.op_count() == 3ULL * (p - 1));
    CHECK(s.dep_count() == (p > 1 ? 2ULL * (p - 1) - 1 : 0));
    CHECK(s.header().tmp_bytes == (p > 1 ? 10U : 0U));
  }
}

TEST_CASE("binomial reduce's closed form is lg p (a + n b + n g) for p a power of two",
          "[algorithms][reduce][binomial]") {
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(core::CollectiveKind::reduce, "ompi:5");
  const auto c = reg.cost(algo, reduce_request(8, 10, 1));
  REQUIRE(c.has_value());
  CHECK(c->alpha_terms == 3.0);
  CHECK(c->beta_bytes == 30.0);
  CHECK(c->gamma_bytes == 30.0);
  CHECK_FALSE(reg.cost(algo, reduce_request(5, 10, 1)).has_value());
}
