// The placement methods by name, and one placement run: block placement, the search's mapping,
// both simulated, the faster kept (placement.hpp; docs/placement.md).

#include "collsim/analysis/placement.hpp"

#include "collsim/core/errors.hpp"

#include <numeric>

namespace collsim::analysis {

const std::vector<PlacementMethod>& placement_methods() {
  // An immutable table: methods are found here, never by comparing names at call sites.
  static const std::vector<PlacementMethod> table{
      {"greedy", "graph growing: the rank most attached to those placed, where it adds least",
       [](const PlacementProblem& p, const SearchOptions&) { return place_greedy(p); }},
      {"anneal", "greedy, then simulated annealing of pairwise swaps on the objective",
       [](const PlacementProblem& p, const SearchOptions& o) {
         const std::uint64_t moves = o.moves > 0 ? o.moves : 2000ULL * p.pattern.ranks;
         return place_anneal(p, place_greedy(p), o.seed, moves, o.objective);
       }},
      {"scotch", "Scotch's static mapping of the process graph onto the slots",
       [](const PlacementProblem& p, const SearchOptions& o) { return place_scotch(p, o.seed); }},
      {"mip", "exact mixed-integer model of the hop-bytes objective, solved by CBC",
       [](const PlacementProblem& p, const SearchOptions&) { return place_mip(p); }},
      {"exhaustive", "every assignment of ranks to classes of equivalent slots (hop-bytes)",
       [](const PlacementProblem& p, const SearchOptions&) { return place_exhaustive(p); }},
  };
  return table;
}

std::vector<std::string> placement_method_names() {
  std::vector<std::string> out;
  for (const PlacementMethod& m : placement_methods()) {
    out.push_back(m.name);
  }
  return out;
}

const PlacementMethod& find_placement_method(std::string_view name) {
  for (const PlacementMethod& m : placement_methods()) {
    if (m.name == name) {
      return m;
    }
  }
  throw core::UnknownNameError("placement method", name, placement_method_names());
}

PlacementOutcome evaluate_placement(const PlacementProblem& p, const EngineChoice& engine,
                                    std::string label, Mapping m) {
  PlacementOutcome out;
  out.label = std::move(label);
  out.hop_bytes = surrogate_seconds(p, m);
  out.time = simulate_exchange(p, m, engine);
  out.bytes = bytes_by_link_class(p, m);
  out.hottest = hottest_links(p, m, 3);
  out.mapping = std::move(m);
  return out;
}

PlacementResult run_placement(const PlacementProblem& p, const SearchOptions& options,
                              const EngineChoice& engine) {
  const PlacementMethod& method = find_placement_method(options.method);
  Mapping block(p.pattern.ranks);
  std::iota(block.begin(), block.end(), 0U);
  PlacementResult r;
  r.block = evaluate_placement(p, engine, "block (by core/slot)", block);
  r.found = evaluate_placement(p, engine, method.name, method.run(p, options));
  return r;
}

} // namespace collsim::analysis
