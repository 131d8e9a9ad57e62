#pragma once
// The scenario loader for other io readers: a scenario that is a map inside another YAML document
// (a compare file's variants), with that document's positions in its errors.

#include "collsim/core/scenario.hpp"

#include <yaml-cpp/yaml.h>

#include <string>
#include <string_view>
#include <vector>

namespace collsim::io {

/// Reads the scenario map `node` of `file` (at `pos`) as parse_scenario reads a whole file: a
/// `base` is a preset or a file relative to `file`. Throws core::ScenarioError.
core::Scenario parse_scenario_node(const YAML::Node& node, const core::SourcePos& pos,
                                   const std::string& file);

/// How an entry of another document is named in messages and, as a variant, in reports.
struct EntryNames {
  std::string what;  ///< "machine", "case"
  std::string path;  ///< "variants[2]", "cases[0]"
  std::string label; ///< the name a variant takes when it sets none
};

/// The scenario of a map `entry` of `file` at `pos` that also has keys of its own (`own`): with
/// `scenario:`, that preset or file (relative to `file`) and no other scenario key; else `base:`
/// and the keys that are not the entry's own, read as a derived scenario named `names.label`
/// unless it sets a name. Throws core::ScenarioError.
core::Scenario entry_scenario(const YAML::Node& entry, const std::vector<std::string_view>& own,
                              const EntryNames& names, const core::SourcePos& pos,
                              const std::string& file);

/// `path` relative to the directory of `from_file` (absolute paths as they are).
std::string path_relative_to(const std::string& path, const std::string& from_file);

} // namespace collsim::io
