#include "algorithm_test_support.hpp"
#include "collsim/algorithms/registry.hpp"
#include "collsim/core/verify.hpp"

#include <catch2/catch.hpp>
#include <map>
#include <string>

using namespace collsim;

namespace {
constexpr const char* kName = "k_reduce_scatter_allgather";
core::Schedule generate(std::uint32_t p, std::uint64_t n, const testing::Params& params = {}) {
  return testing::allreduce_schedule(kName, p, n, params);
}
std::optional<algorithms::CostTerms> cost(std::uint32_t p, std::uint64_t n,
                                          const testing::Params& params = {}) {
  return testing::allreduce_cost(kName, p, n, params);
}
void check_all(const std::vector<testing::Params>& variants) {
  testing::check_allreduce_variants(kName, variants);
}
} // namespace

TEST_CASE("k_reduce_scatter_allgather with radix 2 is Rabenseifner on digit-reversed blocks",
          "[algorithms][allreduce][k_reduce_scatter_allgather]") {
  const auto t = testing::traffic(generate(4, 400));
  // Rank 0: halves with rank 1 (sends blocks 2-3), quarters with rank 2 (block 1), then the
  // allgather in reverse.
  CHECK(t[0].send_peers == std::vector<core::Rank>{1, 2, 2, 1});
  CHECK(t[0].send_lengths == std::vector<std::uint64_t>{200, 100, 100, 200});
  for (core::Rank r = 0; r < 4; ++r) {
    CAPTURE(r);
    CHECK(t[r].send_bytes == 600);
    CHECK(t[r].reduced_bytes == 300);
  }
}

TEST_CASE("k_reduce_scatter_allgather with radix 3 shrinks the window threefold per phase",
          "[algorithms][allreduce][k_reduce_scatter_allgather]") {
  const auto t = testing::traffic(generate(9, 900, {{"radix", 3}}));
  CHECK(t[0].send_peers == std::vector<core::Rank>{1, 2, 3, 6, 3, 6, 1, 2});
  CHECK(t[0].send_lengths == std::vector<std::uint64_t>{300, 300, 100, 100, 100, 100, 300, 300});
  for (core::Rank r = 0; r < 9; ++r) {
    CAPTURE(r);
    CHECK(t[r].send_bytes == 1600);
    CHECK(t[r].reduced_bytes == 800);
  }
}

TEST_CASE("k_reduce_scatter_allgather cuts blocks in elements and gives the remainder to the "
          "last block, as MPICH",
          "[algorithms][allreduce][k_reduce_scatter_allgather]") {
  // 40 bytes (10 floats) over 4 participants: blocks of 2, 2, 2 and 4 elements (8, 8, 8 and 16
  // bytes); rank 3 owns block R(3) = 3.
  const auto t = testing::traffic(generate(4, 40));
  CHECK(t[3].reduced_bytes == 24 + 16);
  CHECK(t[0].reduced_bytes == 16 + 8);
  CHECK(generate(4, 40).header().tmp_bytes == 40);
  // 8 bytes are 2 elements, fewer than the blocks: all in the last block (MPICH's count / 4 = 0
  // per block), so rank 0 reduces nothing and rank 3 the whole vector twice. Cut in bytes, each
  // block would hold 2 bytes, and 8 B would take longer than 64 B on 64 ranks (the property
  // sweep found it, docs/testing.md).
  const auto small = testing::traffic(generate(4, 8));
  CHECK(small[0].reduced_bytes == 0);
  CHECK(small[3].reduced_bytes == 8 + 8);
}

TEST_CASE("k_reduce_scatter_allgather declares Rabenseifner's cost for radix 2, 2^m | n / 4",
          "[algorithms][allreduce][k_reduce_scatter_allgather]") {
  const auto c = cost(8, 800);
  REQUIRE(c.has_value());
  CHECK(c->alpha_terms == 6.0);
  CHECK(c->beta_bytes == 1400.0);
  CHECK(c->gamma_bytes == 700.0);
  CHECK_FALSE(cost(8, 801).has_value());
  CHECK_FALSE(cost(8, 808).has_value()); // 202 elements: 8 does not divide them
  CHECK_FALSE(cost(9, 900, {{"radix", 3}}).has_value());
  CHECK_FALSE(cost(6, 600).has_value());
}

TEST_CASE("k_reduce_scatter_allgather is correct and race-free on 1..20 ranks",
          "[algorithms][allreduce][k_reduce_scatter_allgather]") {
  check_all({{}, {{"radix", 3}}, {{"radix", 4}}, {{"radix", 5}}});
}
