#include "algorithm_test_support.hpp"
#include "collsim/algorithms/registry.hpp"
#include "collsim/core/verify.hpp"

#include <catch2/catch.hpp>
#include <map>
#include <string>

using namespace collsim;

namespace {
constexpr const char* kName = "segmented_ring";
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

TEST_CASE("segmented_ring runs one ring reduce-scatter per phase on segment-sized slices",
          "[algorithms][allreduce][segmented_ring]") {
  // 4096 bytes, 4 ranks, 256-byte segments: 4096 / (4 * 256) = 4 phases; each block of 1024 bytes
  // is cut into 4 slices of 256; the allgather then moves whole blocks.
  const auto t = testing::traffic(generate(4, 4096, {{"segment_size", 256}}));
  for (core::Rank r = 0; r < 4; ++r) {
    CAPTURE(r);
    REQUIRE(t[r].sends == 4 * 3 + 3);
    for (std::size_t i = 0; i < t[r].sends; ++i) {
      CHECK(t[r].send_peers[i] == (r + 1) % 4);
      CHECK(t[r].send_lengths[i] == (i < 12 ? 256U : 1024U));
    }
    CHECK(t[r].reduced_bytes == 3 * 1024);
  }
}

TEST_CASE("segmented_ring counts phases as Open MPI does",
          "[algorithms][allreduce][segmented_ring]") {
  // 1000 bytes, 4 ranks: segments of 100 give 1000 / 400 = 2 phases (the remainder 200 is not
  // more than half of 400); segments of 90 give 2 + 1 (280 > 180).
  CHECK(testing::traffic(generate(4, 1000, {{"segment_size", 100}}))[0].sends == 2 * 3 + 3);
  CHECK(testing::traffic(generate(4, 1000, {{"segment_size", 90}}))[0].sends == 3 * 3 + 3);
  // n < p * segment: the regular ring.
  CHECK(testing::traffic(generate(4, 1000, {{"segment_size", 300}}))[0].sends == 6);
  CHECK(testing::traffic(generate(4, 1000))[0].sends == 6);
}

TEST_CASE("segmented_ring keeps two slice buffers and its exact operation counts",
          "[algorithms][allreduce][segmented_ring]") {
  const core::Schedule s = generate(4, 4096, {{"segment_size", 256}});
  CHECK(s.header().tmp_bytes == 512);
  // Per rank 3(p-1) per phase + 2(p-1): 4 (36 + 6).
  CHECK(s.op_count() == 4 * (36 + 6));
  // Per rank: first phase 3p-6 = 6, later phases 3p-4 = 8, allgather p*phases + p-2 = 18.
  CHECK(s.dep_count() == 4 * (6 + 3 * 8 + 18));
  CHECK(generate(2, 100, {{"segment_size", 10}}).header().tmp_bytes == 10);
}

TEST_CASE("segmented_ring declares the ring's closed form only with one phase",
          "[algorithms][allreduce][segmented_ring]") {
  const auto ring = cost(4, 4096);
  REQUIRE(ring.has_value());
  CHECK(ring->alpha_terms == 6.0);
  CHECK(ring->beta_bytes == 6144.0);
  CHECK(ring->gamma_bytes == 3072.0);
  CHECK_FALSE(cost(4, 4096, {{"segment_size", 256}}).has_value());
  CHECK_FALSE(cost(3, 4096).has_value());
}

TEST_CASE("segmented_ring is correct and race-free on 1..20 ranks",
          "[algorithms][allreduce][segmented_ring]") {
  check_all({{}, {{"segment_size", 1}}, {{"segment_size", 7}}, {{"segment_size", 64}}});
}
