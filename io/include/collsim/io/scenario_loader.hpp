#pragma once
// Scenario files (schema v1, docs/scenario-format.md) into plain core::Scenario values. The loader
// is strict on purpose: an unknown key, a value without its unit or an out-of-range count is a
// core::ScenarioError that names the file, line, column and YAML path, never a silent default.

#include "collsim/core/scenario.hpp"

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace collsim::io {

/// Engine names a study may ask for (checked here; the engines themselves are resolved later).
inline constexpr std::array<std::string_view, 3> kScenarioEngines{"loggp", "analytic", "simgrid"};

/// The largest rank count a study may ask for (2^24).
inline constexpr std::uint32_t kMaxScenarioRanks = 1U << 24;

/// Reads and validates the scenario file at `path`; Scenario::file is set to `path`.
/// Throws core::ScenarioError ("path:line:col: error: yaml.path: message"), also when the file
/// cannot be read ("path: error: cannot open scenario file: <reason>").
core::Scenario load_scenario(const std::string& path);

/// Parses and validates scenario text; `file_name` is used in error messages and as Scenario::file.
/// Throws core::ScenarioError.
core::Scenario parse_scenario(std::string_view yaml_text, std::string_view file_name);

} // namespace collsim::io
