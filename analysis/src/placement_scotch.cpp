// Scotch static mapping (placement.hpp, "Exact and library searches"; docs/placement.md):
// F. Pellegrini, "Static mapping by dual recursive bipartitioning of process and architecture
// graphs", Scalable High-Performance Computing Conference (SHPCC) 1994, as in the Scotch 7
// library (Debian libscotch-dev 7.0.3, 32-bit SCOTCH_Num in the default header). Scotch maps the
// vertices of a process graph onto the terminals of a target architecture, balancing the
// vertex loads and minimising the sum over process edges of weight x distance between the
// terminals the two ends land on.
//
// Process graph: a vertex of load 1 per rank, an edge per pair of ranks that exchange bytes,
// weighted by the bytes of both directions. Target: a decomposition-defined architecture built
// by SCOTCH_archBuild from a complete graph on the slots, edge (s, t) weighted by the surrogate
// cost of a mean-sized message between them, both directions averaged: (latency[s][t] +
// latency[t][s]) / 2 + mean bytes x (seconds_per_byte[s][t] + seconds_per_byte[t][s]) / 2.
// Why not the topology's own graph (devices as vertices, links as edges, the slots as
// terminals): archBuild splits the terminals by bipartitioning the subgraph they induce, and
// cores have no links among themselves (they meet through their NUMA domain), so the split
// would be arbitrary; and its distance between terminals is a sum of link weights along a
// breadth-first tree, where the surrogate prices a route by its latency and its narrowest link.
// On a complete graph the breadth-first distance between two slots is their own edge
// (arch_build.c), so Scotch's distances are the surrogate's, rounded to integers. The price is
// n (n - 1) arcs and archBuild's distance step of n^3: at most kScotchMaxRanks ranks. Scotch
// does not see the per-message latency of pairs with few bytes: the edge weights are bytes.
//
// Integers: weights and distances are scaled so that the sum over arcs of weight x distance
// stays below 2^30 (SCOTCH_Num is 32-bit); every weight and distance is at least 1.
//
// A bijection: one terminal per slot (vertex load 1), ranks of load 1 and a balance tolerance of
// 0 ask for one rank per slot. Should Scotch still put two ranks on a slot, the later ranks move
// to the free slots, each to the one where it adds least surrogate with the ranks placed (it never
// happened on the cases of docs/placement.md, 8 to 1024 ranks).
//
// Determinism: a Scotch context with its own random generator, seeded, running one thread.

#include "collsim/analysis/placement.hpp"

#include "collsim/core/errors.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <scotch/scotch.h>
#include <vector>

namespace collsim::analysis {
namespace {

/// Throws InternalError when a Scotch call failed (Scotch printed why on stderr).
void check(int status, const char* call) {
  if (status != 0) {
    throw core::InternalError(fmt::format("Scotch {} failed (status {})", call, status));
  }
}

/// Owns a Scotch context: its own random generator seeded with `seed`, one thread.
class Context {
public:
  explicit Context(std::uint64_t seed) {
    check(SCOTCH_contextInit(&c_), "contextInit");
    check(SCOTCH_contextRandomClone(&c_), "contextRandomClone");
    SCOTCH_contextRandomSeed(&c_, static_cast<SCOTCH_Num>(seed % 2147483647ULL));
    check(SCOTCH_contextOptionSetNum(&c_, SCOTCH_OPTIONNUMDETERMINISTIC, 1), "contextOptionSetNum");
    check(SCOTCH_contextThreadSpawn(&c_, 1, nullptr), "contextThreadSpawn");
  }
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;
  ~Context() { SCOTCH_contextExit(&c_); }
  SCOTCH_Context* get() { return &c_; }

private:
  SCOTCH_Context c_{};
};

/// Owns a Scotch graph built on arrays that must outlive it, and its copy bound to a context.
class Graph {
public:
  Graph(Context& context, const std::vector<SCOTCH_Num>& vert, const std::vector<SCOTCH_Num>& edge,
        const std::vector<SCOTCH_Num>& weight) {
    check(SCOTCH_graphInit(&g_), "graphInit");
    const auto vertices = static_cast<SCOTCH_Num>(vert.size() - 1);
    const auto arcs = static_cast<SCOTCH_Num>(edge.size());
    check(SCOTCH_graphBuild(&g_, 0, vertices, vert.data(), nullptr, nullptr, nullptr, arcs,
                            edge.data(), weight.data()),
          "graphBuild");
    check(SCOTCH_graphCheck(&g_), "graphCheck");
    check(SCOTCH_graphInit(&bound_), "graphInit");
    check(SCOTCH_contextBindGraph(context.get(), &g_, &bound_), "contextBindGraph");
  }
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;
  ~Graph() {
    SCOTCH_graphExit(&bound_);
    SCOTCH_graphExit(&g_);
  }
  SCOTCH_Graph* get() { return &bound_; }

private:
  SCOTCH_Graph g_{};
  SCOTCH_Graph bound_{};
};

class Strategy {
public:
  Strategy() { check(SCOTCH_stratInit(&s_), "stratInit"); }
  Strategy(const Strategy&) = delete;
  Strategy& operator=(const Strategy&) = delete;
  ~Strategy() { SCOTCH_stratExit(&s_); }
  SCOTCH_Strat* get() { return &s_; }

private:
  SCOTCH_Strat s_{};
};

class Architecture {
public:
  Architecture() { check(SCOTCH_archInit(&a_), "archInit"); }
  Architecture(const Architecture&) = delete;
  Architecture& operator=(const Architecture&) = delete;
  ~Architecture() { SCOTCH_archExit(&a_); }
  SCOTCH_Arch* get() { return &a_; }

private:
  SCOTCH_Arch a_{};
};

/// A graph in Scotch's compressed form: arcs of vertex v are edge[vert[v] .. vert[v + 1]).
struct Csr {
  std::vector<SCOTCH_Num> vert{0};
  std::vector<SCOTCH_Num> edge;
  std::vector<double> weight; ///< per arc, before scaling
};

/// Integer weights for Scotch: `top` for the largest, at least 1.
std::vector<SCOTCH_Num> scaled(const std::vector<double>& w, double top) {
  double largest = 0.0;
  for (const double v : w) {
    largest = std::max(largest, v);
  }
  std::vector<SCOTCH_Num> out(w.size(), 1);
  for (std::size_t i = 0; i < w.size(); ++i) {
    if (largest > 0.0) {
      out[i] = std::max<SCOTCH_Num>(1, static_cast<SCOTCH_Num>(std::lround(w[i] / largest * top)));
    }
  }
  return out;
}

} // namespace

Mapping place_scotch(const PlacementProblem& p, std::uint64_t seed) {
  const std::uint32_t n = p.pattern.ranks;
  if (n > kScotchMaxRanks) {
    throw core::UsageError(fmt::format("scotch placement of {} ranks: at most {} (the target "
                                       "architecture is a complete graph of the slots); use "
                                       "--method anneal",
                                       n, kScotchMaxRanks));
  }
  if (SCOTCH_numSizeof() != static_cast<int>(sizeof(SCOTCH_Num))) {
    throw core::InternalError(fmt::format("Scotch library integers are {} bytes, its header's {}",
                                          SCOTCH_numSizeof(), sizeof(SCOTCH_Num)));
  }
  const std::size_t slots = p.slots.size();
  // The process graph.
  Csr process;
  std::uint64_t total = 0;
  std::uint64_t messages = 0;
  for (std::uint32_t a = 0; a < n; ++a) {
    for (const std::uint32_t b : p.partners[a]) {
      process.edge.push_back(static_cast<SCOTCH_Num>(b));
      process.weight.push_back(static_cast<double>(p.pattern.at(a, b) + p.pattern.at(b, a)));
      total += p.pattern.at(a, b);
      messages += p.pattern.at(a, b) > 0 ? 1 : 0;
    }
    process.vert.push_back(static_cast<SCOTCH_Num>(process.edge.size()));
  }
  const double mean_bytes =
      messages > 0 ? static_cast<double>(total) / static_cast<double>(messages) : 0.0;
  // The target: a complete graph of the slots.
  Csr target;
  for (std::size_t s = 0; s < slots; ++s) {
    for (std::size_t t = 0; t < slots; ++t) {
      if (s != t) {
        const std::size_t st = s * slots + t;
        const std::size_t ts = t * slots + s;
        target.edge.push_back(static_cast<SCOTCH_Num>(t));
        target.weight.push_back(0.5 * (p.latency[st] + p.latency[ts]) +
                                0.5 * mean_bytes *
                                    (p.seconds_per_byte[st] + p.seconds_per_byte[ts]));
      }
    }
    target.vert.push_back(static_cast<SCOTCH_Num>(target.edge.size()));
  }
  constexpr double kDistanceTop = 1000.0;
  constexpr double kBudget = 1073741824.0; // 2^30
  const double arcs = std::max<double>(1.0, static_cast<double>(process.edge.size()));
  const double weight_top = std::clamp(std::floor(kBudget / (arcs * kDistanceTop)), 1.0, 65536.0);
  const std::vector<SCOTCH_Num> process_load = scaled(process.weight, weight_top);
  const std::vector<SCOTCH_Num> distance = scaled(target.weight, kDistanceTop);

  Context context(seed);
  Graph process_graph(context, process.vert, process.edge, process_load);
  Graph target_graph(context, target.vert, target.edge, distance);
  Architecture arch;
  Strategy bipartition;
  check(SCOTCH_archBuild(arch.get(), target_graph.get(), 0, nullptr, bipartition.get()),
        "archBuild");
  Strategy mapping;
  check(SCOTCH_stratGraphMapBuild(mapping.get(), SCOTCH_STRATQUALITY,
                                  static_cast<SCOTCH_Num>(slots), 0.0),
        "stratGraphMapBuild");
  std::vector<SCOTCH_Num> part(n, 0);
  check(SCOTCH_graphMap(process_graph.get(), arch.get(), mapping.get(), part.data()), "graphMap");

  // One rank per slot: the first rank Scotch put on a slot keeps it.
  constexpr std::uint32_t kFree = std::numeric_limits<std::uint32_t>::max();
  std::vector<std::uint32_t> owner(slots, kFree);
  Mapping m(n, kFree);
  std::vector<std::uint32_t> displaced;
  for (std::uint32_t r = 0; r < n; ++r) {
    if (part[r] < 0 || static_cast<std::size_t>(part[r]) >= slots) {
      throw core::InternalError(
          fmt::format("Scotch mapped rank {} to terminal {} of {}", r, part[r], slots));
    }
    const auto s = static_cast<std::uint32_t>(part[r]);
    if (owner[s] == kFree) {
      owner[s] = r;
      m[r] = s;
    } else {
      displaced.push_back(r);
    }
  }
  for (const std::uint32_t r : displaced) {
    std::uint32_t best = kFree;
    double best_cost = std::numeric_limits<double>::infinity();
    for (std::uint32_t s = 0; s < slots; ++s) {
      if (owner[s] != kFree) {
        continue;
      }
      double c = 0.0;
      for (const std::uint32_t j : p.partners[r]) {
        if (m[j] == kFree) {
          continue;
        }
        const std::size_t out = std::size_t{s} * slots + m[j];
        const std::size_t in = std::size_t{m[j]} * slots + s;
        if (const std::uint64_t b = p.pattern.at(r, j); b > 0) {
          c += p.latency[out] + static_cast<double>(b) * p.seconds_per_byte[out];
        }
        if (const std::uint64_t b = p.pattern.at(j, r); b > 0) {
          c += p.latency[in] + static_cast<double>(b) * p.seconds_per_byte[in];
        }
      }
      if (c < best_cost) {
        best_cost = c;
        best = s;
      }
    }
    owner[best] = r;
    m[r] = best;
  }
  return m;
}

} // namespace collsim::analysis
