#pragma once
// The scenario loader for other io readers: a scenario that is a map inside another YAML document
// (a compare file's variants), with that document's positions in its errors.

#include "collsim/core/scenario.hpp"

#include <yaml-cpp/yaml.h>

#include <string>

namespace collsim::io {

/// Reads the scenario map `node` of `file` (at `pos`) as parse_scenario reads a whole file: a
/// `base` is a preset or a file relative to `file`. Throws core::ScenarioError.
core::Scenario parse_scenario_node(const YAML::Node& node, const core::SourcePos& pos,
                                   const std::string& file);

/// `path` relative to the directory of `from_file` (absolute paths as they are).
std::string path_relative_to(const std::string& path, const std::string& from_file);

} // namespace collsim::io
