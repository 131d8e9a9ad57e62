#pragma once
// collsim-gui's command line: `collsim-gui [SCENARIO] [--preset NAME] [--screenshot FILE]
// [--help]`. Qt-free, so it is checked before a display is needed.

#include <string>
#include <vector>

namespace collsim::gui {

struct GuiOptions {
  std::string scenario;   ///< a scenario file or a preset name; empty: none given
  std::string preset;     ///< --preset NAME
  std::string screenshot; ///< --screenshot FILE: grab the screen once the charts show, then exit
  bool help = false;
};

/// Parses the arguments after the program name. Qt's own options (-platform NAME, -display NAME,
/// -style NAME, -qwindowgeometry G, -reverse, ...) are skipped. Throws core::UsageError with a
/// one-line message for an unknown option, a missing value, or two scenarios.
GuiOptions parse_command_line(const std::vector<std::string>& args);

/// The --help text.
std::string usage_text();

} // namespace collsim::gui
