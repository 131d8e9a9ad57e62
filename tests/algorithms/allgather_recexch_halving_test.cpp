#include "algorithm_test_support.hpp"
#include "collsim/algorithms/registry.hpp"
#include "collsim/core/verify.hpp"

#include <catch2/catch.hpp>

using namespace collsim;

namespace {
algorithms::Request allgather_request(std::uint32_t p, std::uint64_t n, std::int64_t radix = 2) {
  algorithms::Request req = testing::allreduce_request(p, n);
  req.collective = core::CollectiveKind::allgather;
  req.params["radix"] = radix;
  return req;
}
core::Schedule halving(std::uint32_t p, std::uint64_t n, std::int64_t radix = 2) {
  const auto reg = algorithms::make_default_registry();
  return reg.generate(reg.find(core::CollectiveKind::allgather, "recexch_halving"),
                      allgather_request(p, n, radix));
}
} // namespace

TEST_CASE("recexch_halving allgather swaps with the bit-reversed rank, then halves distances",
          "[algorithms][allgather][recexch_halving]") {
  const auto t = testing::traffic(halving(8, 80));
  // Rank 0 (000) is its own reverse: distances 4, 2, 1 with 1, 2, 4 blocks.
  CHECK(t[0].send_peers == std::vector<core::Rank>{4, 2, 1});
  CHECK(t[0].send_lengths == std::vector<std::uint64_t>{10, 20, 40});
  // Rank 1 (001) first swaps its block with 4 (100), then works on 4's data.
  CHECK(t[1].send_peers == std::vector<core::Rank>{4, 5, 3, 0});
  CHECK(t[1].send_lengths == std::vector<std::uint64_t>{10, 10, 20, 40});
  CHECK(t[6].send_peers == std::vector<core::Rank>{3, 2, 4, 7});
  for (core::Rank r = 0; r < 8; ++r) {
    CHECK(t[r].recv_bytes == t[r].send_bytes);
  }
}

TEST_CASE("recexch_halving is a correct allgather for radices 2..6 on 1..40 ranks",
          "[algorithms][allgather][recexch_halving]") {
  for (std::int64_t k = 2; k <= 6; ++k) {
    for (std::uint32_t p = 1; p <= 40; ++p) {
      CAPTURE(k, p);
      const core::Schedule s = halving(p, 7ULL * p + 3, k);
      CHECK(core::check_semantics(s).summary() == "");
    }
  }
}

TEST_CASE("recexch_halving costs (lg p + 1) a + n b for radix 2 and powers of two >= 4",
          "[algorithms][allgather][recexch_halving]") {
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(core::CollectiveKind::allgather, "mpich:recexch_halving");
  CHECK(algo.name == "recexch_halving");
  const auto c8 = reg.cost(algo, allgather_request(8, 80));
  REQUIRE(c8.has_value());
  CHECK(c8->alpha_terms == 4.0);
  CHECK(c8->beta_bytes == 80.0);
  const auto c2 = reg.cost(algo, allgather_request(2, 20));
  REQUIRE(c2.has_value());
  CHECK(c2->alpha_terms == 1.0);
  CHECK(c2->beta_bytes == 10.0);
  CHECK_FALSE(reg.cost(algo, allgather_request(12, 120)).has_value());
}
