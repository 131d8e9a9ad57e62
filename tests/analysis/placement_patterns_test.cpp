// Traffic patterns from what a job runs (issue 20; analysis/placement.hpp): a collective's
// schedule, a workload's step, and a placement confirmed by simulating the call itself.

#include "collsim/algorithms/registry.hpp"
#include "collsim/analysis/placement.hpp"
#include "collsim/core/errors.hpp"
#include "collsim/io/scenario_loader.hpp"
#include "collsim/io/workload_loader.hpp"

#include <catch2/catch.hpp>

#include <numeric>

using namespace collsim;

TEST_CASE("placement: a ring allreduce's pattern is each rank to the next",
          "[analysis][placement]") {
  const auto registry = algorithms::make_default_registry();
  const core::Scenario s = io::load_scenario("qiming");
  for (const std::uint32_t p : {2U, 3U, 5U, 8U}) {
    CAPTURE(p);
    const analysis::TrafficPattern t = analysis::collective_pattern(
        s, core::CollectiveKind::allreduce, "ring", core::Bytes{1200}, p, {}, registry);
    REQUIRE(t.ranks == p);
    REQUIRE(t.call.has_value());
    CHECK(t.call->algorithm == "ring");
    std::uint64_t total = 0;
    for (std::uint32_t a = 0; a < p; ++a) {
      for (std::uint32_t b = 0; b < p; ++b) {
        if (b != (a + 1) % p) {
          CHECK(t.at(a, b) == 0);
        }
        total += t.at(a, b);
      }
    }
    // Reduce-scatter and allgather: 2 (p - 1) blocks of about S / p per rank.
    CHECK(static_cast<double>(total) / p == Approx(2.0 * (p - 1) * 1200 / p).epsilon(0.02));
  }
}

TEST_CASE("placement: 'auto' takes the library's choice", "[analysis][placement]") {
  const auto registry = algorithms::make_default_registry();
  // Open MPI 4.1's fixed rules pick recursive doubling for a small allreduce on 16 ranks.
  const analysis::TrafficPattern t =
      analysis::collective_pattern(io::load_scenario("qiming"), core::CollectiveKind::allreduce,
                                   "auto", core::Bytes{64}, 16, {}, registry);
  REQUIRE(t.call.has_value());
  CHECK(t.call->algorithm == "recursive_doubling");
  // Recursive doubling: rank 0 talks to 1, 2, 4 and 8.
  for (std::uint32_t b = 1; b < 16; ++b) {
    CAPTURE(b);
    CHECK((t.at(0, b) > 0) == (b == 1 || b == 2 || b == 4 || b == 8));
  }
}

TEST_CASE("placement: a collective's placement is confirmed by simulating the call",
          "[analysis][placement]") {
  // A ring on a cyclic-looking pattern: the pattern of a ring whose ranks are mapped
  // round-robin over 2 nodes crosses the network at every hop; block placement does not.
  const auto registry = algorithms::make_default_registry();
  const core::Scenario s = io::load_scenario("qiming");
  const analysis::PlacementProblem p = analysis::make_placement_problem(
      s, analysis::collective_pattern(s, core::CollectiveKind::allreduce, "ring",
                                      core::Bytes{1 << 20}, 128, {}, registry));
  analysis::Mapping block(128);
  std::iota(block.begin(), block.end(), 0U);
  analysis::Mapping cyclic(128);
  for (std::uint32_t r = 0; r < 128; ++r) {
    cyclic[r] = (r % 2) * 64 + r / 2; // even ranks on node 0, odd on node 1
  }
  const analysis::EngineChoice loggp("loggp");
  const double t_block = analysis::simulate_exchange(p, block, loggp).value;
  const double t_cyclic = analysis::simulate_exchange(p, cyclic, loggp).value;
  CHECK(t_cyclic > 1.2 * t_block);
  CHECK(analysis::bytes_by_link_class(p, cyclic).at("network") >
        60 * analysis::bytes_by_link_class(p, block).at("network"));
}

TEST_CASE("placement: a workload's step as a pattern", "[analysis][placement]") {
  const auto registry = algorithms::make_default_registry();
  const core::Workload w =
      io::load_workload(std::string(COLLSIM_SOURCE_DIR) + "/workloads/hoomd-lj-qiming.yaml");
  const analysis::TrafficPattern t =
      analysis::workload_pattern(io::load_scenario("qiming"), w, 128, registry);
  REQUIRE(t.ranks == 128);
  CHECK_FALSE(t.call.has_value());
  // The ghost exchanges are `pair` phases (a 2-rank bcast from the pair's first rank): node 0's
  // first rank to node 1's; the neighbour-list check is a 4-byte allreduce over all 128 ranks.
  CHECK(t.at(0, 64) > 1000000);
  CHECK(t.at(64, 0) < 1000);
  CHECK(t.at(1, 65) < 1000);
  std::uint64_t from_rank_5 = 0;
  for (std::uint32_t b = 0; b < 128; ++b) {
    from_rank_5 += t.at(5, b);
  }
  CHECK(from_rank_5 > 0);      // the allreduce reaches every rank
  CHECK(from_rank_5 < 100000); // and is small
  CHECK_THROWS_WITH(analysis::workload_pattern(io::load_scenario("qiming"), w, 100, registry),
                    Catch::Matchers::Contains("100 ranks do not fill whole nodes of 64 ranks"));
}
