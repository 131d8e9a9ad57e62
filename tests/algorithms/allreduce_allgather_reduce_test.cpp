#include "algorithm_test_support.hpp"
#include "collsim/algorithms/registry.hpp"
#include "collsim/core/verify.hpp"

#include <catch2/catch.hpp>
#include <map>
#include <string>

using namespace collsim;

namespace {
constexpr const char* kName = "allgather_reduce";
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

TEST_CASE("allgather_reduce doubles the exchanged vectors each step on a power of two",
          "[algorithms][allreduce][allgather_reduce]") {
  const auto t = testing::traffic(generate(8, 100));
  for (core::Rank r = 0; r < 8; ++r) {
    CAPTURE(r);
    CHECK(t[r].send_peers == std::vector<core::Rank>{r ^ 1U, r ^ 2U, r ^ 4U});
    CHECK(t[r].send_lengths == std::vector<std::uint64_t>{100, 200, 400});
    CHECK(t[r].recv_bytes == 700);
    CHECK(t[r].reduced_bytes == 700);
  }
}

TEST_CASE("allgather_reduce uses Bruck's exchange when p is not a power of two",
          "[algorithms][allreduce][allgather_reduce]") {
  const auto t = testing::traffic(generate(6, 100));
  for (core::Rank r = 0; r < 6; ++r) {
    CAPTURE(r);
    CHECK(t[r].send_peers == std::vector<core::Rank>{(r + 5) % 6, (r + 4) % 6, (r + 2) % 6});
    CHECK(t[r].send_lengths == std::vector<std::uint64_t>{100, 200, 200});
    CHECK(t[r].reduced_bytes == 500);
  }
  CHECK(generate(6, 100).header().tmp_bytes == 600);
}

TEST_CASE("allgather_reduce costs ceil(lg p) a + (p-1) n (b + g) for every p",
          "[algorithms][allreduce][allgather_reduce]") {
  const auto six = cost(6, 100);
  REQUIRE(six.has_value());
  CHECK(six->alpha_terms == 3.0);
  CHECK(six->beta_bytes == 500.0);
  CHECK(six->gamma_bytes == 500.0);
  const auto eight = cost(8, 7);
  REQUIRE(eight.has_value());
  CHECK(eight->alpha_terms == 3.0);
  CHECK(eight->beta_bytes == 49.0);
}

TEST_CASE("allgather_reduce reserves its exact operation counts",
          "[algorithms][allreduce][allgather_reduce]") {
  // p = 8: copy in, 3 sends, 3 receives, 7 reductions, copy out = 15 per rank. Dependencies: the
  // sends wait for 1, 2, 3 operations, the first reduction for all 7 allgather operations, the
  // other 6 reductions and the final copy for one each.
  const core::Schedule s = generate(8, 100);
  CHECK(s.op_count() == 8 * 15);
  CHECK(s.dep_count() == 8 * (6 + 7 + 7));
}

TEST_CASE("allgather_reduce is correct and race-free on 1..20 ranks",
          "[algorithms][allreduce][allgather_reduce]") {
  check_all({{}});
}
