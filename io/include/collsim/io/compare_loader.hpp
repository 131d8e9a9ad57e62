#pragma once
// Compare files (docs/workload-format.md, "Variants"): one workload on several machines, each a
// scenario or a variant of one (a few keys changed from a base), with its node count and price.

#include "collsim/core/errors.hpp"
#include "collsim/core/scenario.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace collsim::io {

struct CompareMachine {
  std::string label;           ///< how the report names it
  core::Scenario scenario;     ///< the scenario, or the variant built on its base
  std::uint32_t nodes = 0;     ///< 0: the file's `nodes`
  std::optional<double> price; ///< per node-hour
  std::string workload;        ///< empty: the file's; else a path relative to the compare file
  core::SourcePos pos;
};

struct CompareSpec {
  std::string name;
  std::string workload; ///< relative to the compare file, resolved
  std::uint32_t nodes = 1;
  std::uint64_t steps = 1000;
  std::vector<CompareMachine> machines;
};

/// Reads a compare file; a bad value is a core::ScenarioError with file:line:column.
CompareSpec load_compare(const std::string& path);

} // namespace collsim::io
