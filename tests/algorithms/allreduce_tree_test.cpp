#include "algorithm_test_support.hpp"
#include "collsim/algorithms/registry.hpp"
#include "collsim/core/verify.hpp"

#include <catch2/catch.hpp>
#include <map>
#include <string>

using namespace collsim;

namespace {
constexpr const char* kName = "tree";
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

TEST_CASE("tree allreduce uses MPICH's knomial_1 tree, largest subtree first",
          "[algorithms][allreduce][tree]") {
  // 8 ranks, radix 2: 0 -> {1, 5, 7}, 1 -> {2, 4}, 2 -> {3}, 5 -> {6}.
  const auto t = testing::traffic(generate(8, 100));
  CHECK(t[0].send_peers == std::vector<core::Rank>{1, 5, 7});
  CHECK(t[1].send_peers == std::vector<core::Rank>{0, 2, 4});
  CHECK(t[2].send_peers == std::vector<core::Rank>{1, 3});
  CHECK(t[3].send_peers == std::vector<core::Rank>{2});
  CHECK(t[5].send_peers == std::vector<core::Rank>{0, 6});
  CHECK(t[0].reduced_bytes == 300);
  // Radix 3 on 9 ranks: 0 -> {1, 4, 7, 8}, 1 -> {2, 3}.
  const auto k3 = testing::traffic(generate(9, 100, {{"radix", 3}}));
  CHECK(k3[0].send_peers == std::vector<core::Rank>{1, 4, 7, 8});
  CHECK(k3[1].send_peers == std::vector<core::Rank>{0, 2, 3});
}

TEST_CASE("tree allreduce pipelines chunks whose first one takes the remainder",
          "[algorithms][allreduce][tree]") {
  // 1000 bytes in chunks of 300: 100, 300, 300, 300.
  const core::Schedule s = generate(8, 1000, {{"chunk_size", 300}});
  const auto t = testing::traffic(s);
  CHECK(t[3].send_lengths == std::vector<std::uint64_t>{100, 300, 300, 300});
  CHECK(s.op_count() == 5ULL * 4 * 7);
  CHECK(s.dep_count() == 5ULL * 4 * 7 - 8);
  CHECK(s.header().tmp_bytes == 1000);
  CHECK(testing::traffic(generate(8, 1000, {{"chunk_size", 1000}}))[3].sends == 1);
}

TEST_CASE("tree allreduce declares a closed form only for two ranks",
          "[algorithms][allreduce][tree]") {
  const auto c = cost(2, 1000, {{"chunk_size", 300}});
  REQUIRE(c.has_value());
  CHECK(c->alpha_terms == 8.0);
  CHECK(c->beta_bytes == 2000.0);
  CHECK(c->gamma_bytes == 1000.0);
  CHECK_FALSE(cost(4, 1000).has_value());
}

TEST_CASE("tree allreduce is correct and race-free on 1..20 ranks",
          "[algorithms][allreduce][tree]") {
  check_all({{}, {{"radix", 3}}, {{"chunk_size", 64}}, {{"radix", 4}, {"chunk_size", 333}}});
}
