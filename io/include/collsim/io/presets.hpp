#pragma once
// The scenarios shipped in scenarios/ are compiled into collsim, so `collsim run juwels-booster`
// and `base: juwels-booster` work wherever the binary is, without the source tree.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace collsim::io {

/// The YAML text of the preset `name` (a file stem of scenarios/), if there is one.
std::optional<std::string_view> preset_text(std::string_view name);
/// Every preset name, sorted.
std::vector<std::string> preset_names();
/// The file name messages use for a preset: "scenarios/<name>.yaml".
std::string preset_file(std::string_view name);

} // namespace collsim::io
