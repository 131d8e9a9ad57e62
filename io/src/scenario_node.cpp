// The scenario of an entry of another document (scenario_node.hpp): a compare file's machine, a
// placement study's case.

#include "scenario_node.hpp"

#include "collsim/core/errors.hpp"
#include "collsim/io/scenario_loader.hpp"

#include <algorithm>
#include <fmt/format.h>

namespace collsim::io {

core::Scenario entry_scenario(const YAML::Node& entry, const std::vector<std::string_view>& own,
                              const EntryNames& names, const core::SourcePos& pos,
                              const std::string& file) {
  const auto at = [&](const YAML::Mark& m) -> core::SourcePos {
    if (m.is_null() || m.line < 0) {
      return {file, 0, 0};
    }
    return {file, static_cast<std::uint32_t>(m.line) + 1, static_cast<std::uint32_t>(m.column) + 1};
  };
  // The entry's keys that are not its own belong to the scenario.
  YAML::Node scenario(YAML::NodeType::Map);
  for (auto it = entry.begin(); it != entry.end(); ++it) {
    if (std::find(own.begin(), own.end(), it->first.Scalar()) == own.end()) {
      scenario[it->first] = it->second;
    }
  }
  if (const YAML::Node named = entry["scenario"]; named) {
    if (scenario.size() > 0) {
      const YAML::Node extra = scenario.begin()->first;
      throw core::ScenarioError(at(extra.Mark()), names.path + "." + extra.Scalar(),
                                fmt::format("a {} names a whole scenario with 'scenario'; to "
                                            "change keys of it, write 'base' instead",
                                            names.what));
    }
    if (!named.IsScalar()) {
      throw core::ScenarioError(at(named.Mark()), names.path + ".scenario",
                                "expected a text value");
    }
    const std::string name = named.Scalar();
    const bool is_file = name.find('/') != std::string::npos || name.find('.') != std::string::npos;
    return load_scenario(is_file ? path_relative_to(name, file) : name);
  }
  if (!entry["base"]) {
    throw core::ScenarioError(pos, names.path,
                              fmt::format("a {} needs 'scenario' (a preset or a file) or 'base' "
                                          "and the keys it changes",
                                          names.what));
  }
  core::Scenario s = parse_scenario_node(scenario, pos, file);
  if (s.name.empty() || !entry["name"]) {
    s.name = names.label;
  }
  return s;
}

} // namespace collsim::io
