// Rank placement (issue 20; analysis/placement.hpp): traffic patterns, the searches against
// exhaustive search on a case with a known optimum, the simulated exchange, and the rankfile read
// back by the scenario loader.

#include "collsim/analysis/placement.hpp"
#include "collsim/core/errors.hpp"
#include "collsim/io/scenario_loader.hpp"
#include "collsim/topologies/build.hpp"

#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <numeric>

using namespace collsim;

namespace {

std::string write(const std::string& name, const std::string& text) {
  const std::string path = std::string(COLLSIM_SOURCE_DIR) + "/build/" + name;
  std::ofstream(path) << text;
  return path;
}

/// Two CPU nodes of 4 cores on one switch.
core::Scenario two_nodes() {
  const std::string path = write("placement_two_nodes.yaml",
                                 "name: two_nodes\ntopology:\n  kind: system\n  nodes: 2\n"
                                 "  node:\n    cpu: {sockets: 1, cores_per_socket: 4}\n"
                                 "studies:\n  - name: s\n    collective: allreduce\n"
                                 "    algorithms: [ring]\n    ranks: [8]\n    sizes: [1KiB]\n");
  core::Scenario s = io::load_scenario(path);
  std::remove(path.c_str());
  return s;
}

/// Two cliques of 4 ranks, the even and the odd ones, 1 MiB between every pair of a clique:
/// block placement splits both over the two nodes; the best placement puts each on a node.
analysis::TrafficPattern cliques() {
  analysis::TrafficPattern t;
  t.name = "two cliques";
  t.ranks = 8;
  t.bytes.assign(64, 0);
  for (std::uint32_t a = 0; a < 8; ++a) {
    for (std::uint32_t b = 0; b < 8; ++b) {
      if (a != b && a % 2 == b % 2) {
        t.bytes[a * 8 + b] = 1 << 20;
      }
    }
  }
  return t;
}

} // namespace

TEST_CASE("halo patterns: face neighbours of a grid, with or without wrap-around",
          "[analysis][placement]") {
  const auto open = analysis::halo_pattern({3, 3, 1}, 100, false);
  REQUIRE(open.ranks == 9);
  const auto degree = [](const analysis::TrafficPattern& t, std::uint32_t r) {
    std::uint32_t d = 0;
    for (std::uint32_t j = 0; j < t.ranks; ++j) {
      d += t.at(r, j) > 0 ? 1 : 0;
    }
    return d;
  };
  CHECK(degree(open, 0) == 2); // a corner
  CHECK(degree(open, 1) == 3); // an edge
  CHECK(degree(open, 4) == 4); // the centre
  CHECK(open.at(4, 5) == 100);
  CHECK(open.at(4, 0) == 0); // no diagonal neighbours
  const auto torus = analysis::parse_pattern("halo3d:3x3x3:1KiB:periodic");
  REQUIRE(torus.ranks == 27);
  for (std::uint32_t r = 0; r < 27; ++r) {
    CHECK(degree(torus, r) == 6);
  }
  CHECK(torus.at(0, 2) == 1024); // x wraps: 0 and 2 are neighbours
}

TEST_CASE("patterns: bad specs and CSV files are one clear error", "[analysis][placement]") {
  CHECK_THROWS_WITH(analysis::parse_pattern("halo3d:4x4:1KiB"),
                    "--pattern 'halo3d:4x4:1KiB': '4x4' is not 3 positive extents joined by 'x'");
  CHECK_THROWS_WITH(analysis::parse_pattern("ring:8"),
                    Catch::Matchers::StartsWith("--pattern 'ring:8': expected halo2d:XxY:BYTES"));
  CHECK_THROWS_WITH(analysis::parse_pattern("halo2d:4x4:lots"),
                    Catch::Matchers::StartsWith("--pattern 'halo2d:4x4:lots': "));
  const std::string good = write("pattern_good.csv", "# two ranks\n0, 64KiB\n1000,0\n");
  const auto t = analysis::read_pattern_csv(good);
  CHECK(t.ranks == 2);
  CHECK(t.at(0, 1) == 65536);
  CHECK(t.at(1, 0) == 1000);
  const std::string bad = write("pattern_bad.csv", "0,1\n2,x\n");
  CHECK_THROWS_WITH(analysis::read_pattern_csv(bad),
                    Catch::Matchers::EndsWith("pattern_bad.csv:2:3: error: expected a size like "
                                              "'64 KiB', '1 MB' or '8 B', got 'x'"));
  const std::string ragged = write("pattern_ragged.csv", "0,1,2\n1,0\n");
  CHECK_THROWS_WITH(analysis::read_pattern_csv(ragged),
                    Catch::Matchers::EndsWith(":2:1: error: row 1 has 2 entries, the first row 3"));
  const std::string self = write("pattern_self.csv", "0,1\n1,5\n");
  CHECK_THROWS_WITH(analysis::read_pattern_csv(self),
                    Catch::Matchers::EndsWith(
                        ":2:1: error: rank 1 sends 5 bytes to itself (the diagonal must be 0)"));
  for (const auto& f : {good, bad, ragged, self}) {
    std::remove(f.c_str());
  }
}

TEST_CASE("placement: greedy and annealing find the exhaustive optimum of two cliques",
          "[analysis][placement]") {
  const analysis::PlacementProblem p = analysis::make_placement_problem(two_nodes(), cliques());
  analysis::Mapping block(8);
  std::iota(block.begin(), block.end(), 0U);
  const analysis::Mapping best = analysis::place_exhaustive(p);
  const analysis::Mapping greedy = analysis::place_greedy(p);
  const analysis::Mapping annealed =
      analysis::place_anneal(p, block, 7, 20000, analysis::Objective::hop_bytes);
  const double optimum = analysis::surrogate_seconds(p, best);
  CHECK(analysis::surrogate_seconds(p, greedy) == Approx(optimum));
  CHECK(analysis::surrogate_seconds(p, annealed) == Approx(optimum));
  CHECK(analysis::surrogate_seconds(p, block) > 1.5 * optimum);
  // The optimum keeps each clique on one node: no byte crosses the network.
  for (std::uint32_t r = 0; r < 8; ++r) {
    CHECK(p.node[annealed[r]] == p.node[annealed[r % 2]]);
  }
  const auto classes = analysis::bytes_by_link_class(p, annealed);
  CHECK(classes.count("network") == 0);
  CHECK(analysis::bytes_by_link_class(p, block).at("network") == 8 * 2 * 1048576);
  // Confirmed by simulation: the exchange is faster than with block placement.
  CHECK(analysis::simulate_exchange(p, annealed, analysis::EngineChoice("loggp")).value <
        analysis::simulate_exchange(p, block, analysis::EngineChoice("loggp")).value);
}

TEST_CASE("placement: the rankfile written is the mapping the scenario loader reads back",
          "[analysis][placement]") {
  const analysis::PlacementProblem p = analysis::make_placement_problem(two_nodes(), cliques());
  const analysis::Mapping m = analysis::place_greedy(p);
  const std::string rankfile = write("placement_ranks.txt", analysis::ompi_rankfile(p, m));
  const std::string scenario =
      write("placement_rankfile.yaml",
            "name: with_rankfile\ntopology:\n  kind: system\n  nodes: 2\n"
            "  node:\n    cpu: {sockets: 1, cores_per_socket: 4}\n"
            "  placement:\n    rankfile: placement_ranks.txt\n"
            "studies:\n  - name: s\n    collective: allreduce\n    algorithms: [ring]\n"
            "    ranks: [8]\n    sizes: [1KiB]\n");
  const core::Scenario s = io::load_scenario(scenario);
  const core::Topology t = topologies::build(s.topology, 8);
  for (core::Rank r = 0; r < 8; ++r) {
    CAPTURE(r);
    CHECK(t.device_of(r) == p.slots[m[r]]);
  }
  std::remove(rankfile.c_str());
  std::remove(scenario.c_str());
}
