// The exact and library placement searches (issue 20; placement.hpp, "Exact and library
// searches"; docs/placement.md): the CBC model equals exhaustive search on 8, 10 and 12 ranks,
// the heuristics and Scotch come close, every mapping is a permutation, and the size limits are
// one clear error.

#include "collsim/analysis/placement.hpp"
#include "collsim/core/errors.hpp"
#include "collsim/io/scenario_loader.hpp"

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <fstream>
#include <numeric>
#include <string>

using namespace collsim;

namespace {

/// A scenario of `nodes` CPU nodes of `sockets` x `cores` cores.
core::Scenario cpu_nodes(std::uint32_t nodes, std::uint32_t sockets, std::uint32_t cores) {
  const std::string name = fmt::format("methods_{}x{}x{}", nodes, sockets, cores);
  const std::string path = std::string(COLLSIM_SOURCE_DIR) + "/build/" + name + ".yaml";
  std::ofstream(path) << fmt::format("name: {}\ntopology:\n  kind: system\n  nodes: {}\n"
                                     "  node:\n    cpu: {{sockets: {}, cores_per_socket: {}}}\n"
                                     "studies:\n  - name: s\n    collective: allreduce\n"
                                     "    algorithms: [ring]\n    ranks: [8]\n    sizes: [1KiB]\n",
                                     name, nodes, sockets, cores);
  core::Scenario s = io::load_scenario(path);
  std::remove(path.c_str());
  return s;
}

/// Two cliques of 4 ranks, the even and the odd ones, 1 MiB between the members of a clique.
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

bool is_permutation(const analysis::Mapping& m) {
  analysis::Mapping sorted = m;
  std::sort(sorted.begin(), sorted.end());
  for (std::uint32_t i = 0; i < sorted.size(); ++i) {
    if (sorted[i] != i) {
      return false;
    }
  }
  return true;
}

analysis::Mapping identity(std::uint32_t n) {
  analysis::Mapping m(n);
  std::iota(m.begin(), m.end(), 0U);
  return m;
}

/// The halo grids of 8, 10 and 12 ranks.
const std::array<std::array<std::uint32_t, 3>, 3> kGrids{{{2, 4, 1}, {2, 5, 1}, {3, 4, 1}}};

} // namespace

TEST_CASE("slot classes: the cores of a NUMA domain are interchangeable, the domains are not",
          "[analysis][placement]") {
  const auto p = analysis::make_placement_problem(cpu_nodes(2, 2, 3),
                                                  analysis::halo_pattern({3, 4, 1}, 1, false));
  const analysis::SlotClasses sc = analysis::slot_classes(p);
  REQUIRE(sc.members.size() == 4); // 2 nodes x 2 sockets (one NUMA domain each)
  for (std::uint32_t c = 0; c < 4; ++c) {
    CHECK(sc.members[c] == std::vector<std::uint32_t>{3 * c, 3 * c + 1, 3 * c + 2});
  }
  CHECK(sc.class_of[7] == 2);
}

TEST_CASE("placement methods: the CBC model equals exhaustive search on halos of 8, 10 and 12 "
          "ranks, annealing and Scotch come within 5 % and greedy within 60 %",
          "[analysis][placement]") {
  // 2 nodes of 2 sockets x 3 cores (classes of 3), and 3 nodes of 4 cores (classes of 4).
  const std::array<std::array<std::uint32_t, 3>, 2> machines{{{2, 2, 3}, {3, 1, 4}}};
  for (const auto& mach : machines) {
    const core::Scenario s = cpu_nodes(mach[0], mach[1], mach[2]);
    for (const auto& dims : kGrids) {
      for (const bool periodic : {false, true}) {
        const auto p =
            analysis::make_placement_problem(s, analysis::halo_pattern(dims, 65536, periodic));
        CAPTURE(s.name, p.pattern.name);
        const analysis::Mapping block = identity(p.pattern.ranks);
        const analysis::Mapping exhaustive = analysis::place_exhaustive(p);
        const analysis::Mapping mip = analysis::place_mip(p);
        const analysis::Mapping scotch = analysis::place_scotch(p);
        const analysis::Mapping greedy = analysis::place_greedy(p);
        const analysis::Mapping anneal = analysis::place_anneal(
            p, greedy, 1, 2000ULL * p.pattern.ranks, analysis::Objective::hop_bytes);
        for (const auto* m : {&exhaustive, &mip, &scotch, &greedy, &anneal}) {
          CHECK(is_permutation(*m));
        }
        const double optimum = analysis::surrogate_seconds(p, exhaustive);
        if (p.pattern.ranks == 8) {
          // The slot classes lose nothing: every one of the 8! permutations costs as much.
          analysis::Mapping m = block;
          double best = analysis::surrogate_seconds(p, m);
          while (std::next_permutation(m.begin(), m.end())) {
            best = std::min(best, analysis::surrogate_seconds(p, m));
          }
          CHECK(best == Approx(optimum).epsilon(1e-12));
        }
        CHECK(analysis::surrogate_seconds(p, mip) == Approx(optimum).epsilon(1e-12));
        for (const auto* m : {&block, &scotch, &greedy, &anneal}) {
          const double h = analysis::surrogate_seconds(p, *m);
          CHECK(optimum <= h * (1 + 1e-12));
        }
        // Measured: annealing and Scotch reach the optimum on all twelve cases, greedy is up to
        // 1.53x above it (3 nodes of 4 cores, the open 3 x 4 halo: 108.3 against 70.8 us).
        CHECK(analysis::surrogate_seconds(p, scotch) <= 1.05 * optimum);
        CHECK(analysis::surrogate_seconds(p, anneal) <= 1.05 * optimum);
        CHECK(analysis::surrogate_seconds(p, greedy) <= 1.6 * optimum);
      }
    }
  }
}

TEST_CASE("placement methods: every method puts each clique on a node of its own",
          "[analysis][placement]") {
  const auto p = analysis::make_placement_problem(cpu_nodes(2, 1, 4), cliques());
  for (const auto& m : {analysis::place_exhaustive(p), analysis::place_mip(p),
                        analysis::place_scotch(p), analysis::place_greedy(p)}) {
    REQUIRE(is_permutation(m));
    for (std::uint32_t r = 0; r < 8; ++r) {
      CHECK(p.node[m[r]] == p.node[m[r % 2]]);
    }
    CHECK(p.node[m[0]] != p.node[m[1]]);
  }
}

TEST_CASE("scotch placement is the same for a seed", "[analysis][placement]") {
  const auto p = analysis::make_placement_problem(cpu_nodes(3, 1, 4),
                                                  analysis::halo_pattern({4, 3, 1}, 4096, true));
  CHECK(analysis::place_scotch(p, 5) == analysis::place_scotch(p, 5));
}

TEST_CASE("placement methods: too many ranks for the exact searches is one clear error",
          "[analysis][placement][errors]") {
  // 16 ranks in 4 classes of 4: 16! / 4!^4 = 63063000 assignments.
  const auto p16 = analysis::make_placement_problem(cpu_nodes(2, 2, 4),
                                                    analysis::halo_pattern({4, 4, 1}, 1, false));
  CHECK_THROWS_AS(analysis::place_exhaustive(p16), core::UsageError);
  CHECK_THROWS_WITH(analysis::place_exhaustive(p16),
                    "exhaustive search of 16 ranks: 63063000 assignments of the ranks to 4 "
                    "classes of interchangeable slots, more than 50000000; use --method mip (at "
                    "most 24 ranks) or anneal");
  const auto p25 = analysis::make_placement_problem(cpu_nodes(2, 2, 8),
                                                    analysis::halo_pattern({5, 5, 1}, 1, false));
  CHECK_THROWS_AS(analysis::place_mip(p25), core::UsageError);
  CHECK_THROWS_WITH(analysis::place_mip(p25), "mip placement of 25 ranks: the exact model takes "
                                              "at most 24 ranks; use --method scotch or anneal");
}
