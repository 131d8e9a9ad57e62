#pragma once
// What a real library picks for one collective call, expressed in collsim's terms, so that a
// library's default-selection model (ompi_defaults.hpp, and any other library) can be compared
// with collsim's own predictions and resolved in the algorithm registry.

#include "collsim/algorithms/registry.hpp"

#include <string>

namespace collsim::analysis {

/// One library decision: the collsim algorithm (and parameters) that reproduces what the library
/// runs, plus the library's own name for it and the rule that fired.
struct LibraryChoice {
  std::string library;          ///< e.g. "Open MPI 4.1.x coll/tuned (fixed rules)"
  std::string algorithm;        ///< collsim canonical algorithm name (resolvable in the registry)
  algorithms::RawParams params; ///< parameter values that reproduce the library's run
  std::string library_name;     ///< the library's id and name, e.g. "ompi:6 rabenseifner"
  std::string reason;           ///< the rule that fired, and any fallback taken

  friend bool operator==(const LibraryChoice&, const LibraryChoice&) = default;
};

} // namespace collsim::analysis
