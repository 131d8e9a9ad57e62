#pragma once
// Placement study files (docs/placement.md, "Studies"): `collsim place --study FILE` runs every
// case (a scenario, or a variant of one, and the traffic to place on it) and draws the simulated
// time of block placement against the placement found, case by case.

#include "collsim/core/errors.hpp"
#include "collsim/core/scenario.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace collsim::io {

struct PlacementCase {
  std::string label;       ///< how the table and the chart name the case
  core::Scenario scenario; ///< a preset or file (`scenario:`), or a variant (`base:` + keys)
  // The traffic, exactly one of pattern, workload and collective (as `collsim place` takes them).
  std::string pattern;  ///< halo spec, or a CSV path resolved relative to the study file
  std::string workload; ///< a path resolved relative to the study file
  std::string collective;
  std::string algorithm = "auto";
  std::string bytes;
  std::vector<std::string> params; ///< NAME=VALUE
  std::uint32_t ranks = 0;
  std::string method = "anneal";
  std::string objective = "time";
  core::SourcePos pos;
};

struct PlacementStudySpec {
  std::string name;
  std::string description;
  std::vector<PlacementCase> cases;
};

/// Reads a placement study; a bad value is a core::ScenarioError with file:line:column.
PlacementStudySpec load_placement_study(const std::string& path);

} // namespace collsim::io
