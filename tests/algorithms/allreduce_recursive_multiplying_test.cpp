#include "algorithm_test_support.hpp"
#include "collsim/algorithms/registry.hpp"
#include "collsim/core/verify.hpp"

#include <catch2/catch.hpp>
#include <map>
#include <string>

using namespace collsim;

namespace {
constexpr const char* kName = "recursive_multiplying";
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

TEST_CASE("recursive_multiplying exchanges whole vectors within groups of k at distances 1, k",
          "[algorithms][allreduce][recursive_multiplying]") {
  const auto t = testing::traffic(generate(9, 100, {{"radix", 3}}));
  // Rank 4: group {3, 4, 5} at distance 1, then {1, 4, 7} at distance 3.
  CHECK(t[4].send_peers == std::vector<core::Rank>{3, 5, 1, 7});
  CHECK(t[4].send_lengths == std::vector<std::uint64_t>(4, 100));
  for (core::Rank r = 0; r < 9; ++r) {
    CAPTURE(r);
    CHECK(t[r].sends == 4);
    CHECK(t[r].recv_bytes == 400);
    CHECK(t[r].reduced_bytes == 400);
  }
}

TEST_CASE("recursive_multiplying folds ranks above the largest power of k round-robin",
          "[algorithms][allreduce][recursive_multiplying]") {
  const auto t = testing::traffic(generate(10, 100, {{"radix", 3}}));
  CHECK(t[9].send_peers == std::vector<core::Rank>{0});
  CHECK(t[9].recv_bytes == 100);
  CHECK(t[0].send_peers == std::vector<core::Rank>{1, 2, 3, 6, 9});
  CHECK(t[0].reduced_bytes == 500);
  // More radix than ranks: p_k = 1, a linear reduce to rank 0 and a linear broadcast.
  const auto flat = testing::traffic(generate(3, 10, {{"radix", 4}}));
  CHECK(flat[0].send_peers == std::vector<core::Rank>{1, 2});
  CHECK(flat[0].reduced_bytes == 20);
}

TEST_CASE("recursive_multiplying follows MPICH's reduction chain and its copy",
          "[algorithms][allreduce][recursive_multiplying]") {
  // p = 3, k = 3: rank 1 (member 1) reduces member 0's vector into data, data into member 2's
  // slot, then copies that slot back: 2 reductions and 1 copy after 2 sends and 2 receives.
  const core::Schedule s = generate(3, 8, {{"radix", 3}});
  std::vector<core::OpKind> kinds;
  for (core::OpId id = s.rank_begin(1); id < s.rank_end(1); ++id) {
    kinds.push_back(s.kind(id));
  }
  using K = core::OpKind;
  CHECK(kinds == std::vector<K>{K::send, K::recv, K::send, K::recv, K::reduce, K::reduce, K::copy});
  CHECK(s.header().tmp_bytes == 16);
}

TEST_CASE("recursive_multiplying declares lg p (a + n b + n g) only for radix 2 on 2^m ranks",
          "[algorithms][allreduce][recursive_multiplying]") {
  const auto c = cost(8, 100);
  REQUIRE(c.has_value());
  CHECK(c->alpha_terms == 3.0);
  CHECK(c->beta_bytes == 300.0);
  CHECK(c->gamma_bytes == 300.0);
  CHECK_FALSE(cost(9, 100, {{"radix", 3}}).has_value());
  CHECK_FALSE(cost(6, 100).has_value());
}

TEST_CASE("recursive_multiplying is correct and race-free on 1..20 ranks",
          "[algorithms][allreduce][recursive_multiplying]") {
  check_all({{}, {{"radix", 3}}, {{"radix", 4}}, {{"radix", 7}}});
}
