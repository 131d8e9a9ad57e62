#include "algorithm_test_support.hpp"
#include "collsim/algorithms/registry.hpp"
#include "collsim/core/verify.hpp"

#include <catch2/catch.hpp>
#include <map>
#include <string>

using namespace collsim;

namespace {
constexpr const char* kName = "rab2";
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

TEST_CASE("rab2 sends every block to its owner, then ring-allgathers the reduced blocks",
          "[algorithms][allreduce][rab2]") {
  const auto t = testing::traffic(generate(4, 400));
  for (core::Rank r = 0; r < 4; ++r) {
    CAPTURE(r);
    CHECK(t[r].send_peers == std::vector<core::Rank>{(r + 1) % 4, (r + 2) % 4, (r + 3) % 4,
                                                     (r + 1) % 4, (r + 1) % 4, (r + 1) % 4});
    CHECK(t[r].send_lengths == std::vector<std::uint64_t>(6, 100));
    CHECK(t[r].reduced_bytes == 300);
  }
}

TEST_CASE("rab2 spreads a remainder over blocks that differ by one byte",
          "[algorithms][allreduce][rab2]") {
  // 10 bytes on 4 ranks: blocks 3, 3, 2, 2. Rank 2 receives three copies of its 2-byte block.
  const auto t = testing::traffic(generate(4, 10));
  CHECK(t[2].reduced_bytes == 6);
  CHECK(t[0].reduced_bytes == 9);
  std::uint64_t total = 0;
  for (const auto& rank : t) {
    total += rank.send_bytes;
  }
  CHECK(total == 2ULL * 3 * 10);
}

TEST_CASE("rab2 reserves its exact operation counts", "[algorithms][allreduce][rab2]") {
  const core::Schedule s = generate(5, 1000);
  CHECK(s.op_count() == 5ULL * 5 * 4);
  // Per rank: alltoall 4(p-2), reductions p, allgather 2 + 4(p-2).
  CHECK(s.dep_count() == 5ULL * (12 + 5 + 2 + 12));
  CHECK(s.header().tmp_bytes == 1000);
}

TEST_CASE("rab2 declares its closed form when p divides n", "[algorithms][allreduce][rab2]") {
  const auto c = cost(4, 400);
  REQUIRE(c.has_value());
  CHECK(c->alpha_terms == 6.0);
  CHECK(c->beta_bytes == 600.0);
  CHECK(c->gamma_bytes == 300.0);
  CHECK_FALSE(cost(4, 10).has_value());
}

TEST_CASE("rab2 is correct and race-free on 1..20 ranks", "[algorithms][allreduce][rab2]") {
  check_all({{}});
}
