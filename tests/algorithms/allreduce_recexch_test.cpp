#include "algorithm_test_support.hpp"
#include "collsim/algorithms/registry.hpp"
#include "collsim/core/verify.hpp"

#include <catch2/catch.hpp>
#include <map>
#include <string>

using namespace collsim;

namespace {
constexpr const char* kName = "recexch";
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

TEST_CASE("recexch folds extra ranks into the last rank of each group of k",
          "[algorithms][allreduce][recexch]") {
  // p = 6, k = 2: p_k = 4, rem = 2, T = 4: ranks 0 and 2 hand their vectors to 1 and 3. Step-2
  // ranks 0..3 are ranks 1, 3, 4, 5.
  const auto t = testing::traffic(generate(6, 100));
  CHECK(t[0].send_peers == std::vector<core::Rank>{1});
  CHECK(t[2].send_peers == std::vector<core::Rank>{3});
  CHECK(t[1].send_peers == std::vector<core::Rank>{3, 4, 0});
  CHECK(t[5].send_peers == std::vector<core::Rank>{4, 3});
  CHECK(t[1].reduced_bytes == 300);
}

TEST_CASE("recexch with radix 3 exchanges with two neighbours per phase",
          "[algorithms][allreduce][recexch]") {
  // p = 7, k = 3: p_k = 3, rem = 4, T = 6: groups {0, 1, 2} and {3, 4, 5} fold into 2 and 5;
  // participants 2, 5, 6 exchange in one phase.
  const auto t = testing::traffic(generate(7, 100, {{"radix", 3}}));
  CHECK(t[2].send_peers == std::vector<core::Rank>{5, 6, 1, 0});
  CHECK(t[6].send_peers == std::vector<core::Rank>{2, 5});
  CHECK(t[0].send_peers == std::vector<core::Rank>{2});
  CHECK(t[4].send_peers == std::vector<core::Rank>{5});
  // A partial group sends to rank T: p = 4, k = 3, T = 1: rank 0 folds into rank 1.
  const auto partial = testing::traffic(generate(4, 100, {{"radix", 3}}));
  CHECK(partial[0].send_peers == std::vector<core::Rank>{1});
  CHECK(partial[1].send_peers == std::vector<core::Rank>{2, 3, 0});
}

TEST_CASE("recexch posts the receives of two phases before sending",
          "[algorithms][allreduce][recexch]") {
  const core::Schedule s = generate(4, 8);
  std::vector<core::OpKind> kinds;
  for (core::OpId id = s.rank_begin(0); id < s.rank_end(0); ++id) {
    kinds.push_back(s.kind(id));
  }
  using K = core::OpKind;
  CHECK(kinds == std::vector<K>{K::recv, K::recv, K::send, K::reduce, K::send, K::reduce});
  CHECK(s.header().tmp_bytes == 16);
  CHECK(generate(4, 8, {{"radix", 3}}).header().tmp_bytes == 32);
}

TEST_CASE("recexch declares lg p (a + n b + n g) only for radix 2 on 2^m ranks",
          "[algorithms][allreduce][recexch]") {
  const auto c = cost(8, 100);
  REQUIRE(c.has_value());
  CHECK(c->alpha_terms == 3.0);
  CHECK(c->beta_bytes == 300.0);
  CHECK(c->gamma_bytes == 300.0);
  CHECK_FALSE(cost(9, 100, {{"radix", 3}}).has_value());
  CHECK_FALSE(cost(6, 100).has_value());
}

TEST_CASE("recexch is correct and race-free on 1..20 ranks", "[algorithms][allreduce][recexch]") {
  check_all({{}, {{"radix", 3}}, {{"radix", 4}}, {{"radix", 5}}});
}
