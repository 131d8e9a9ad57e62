#include "command_line.hpp"

#include "collsim/core/errors.hpp"
#include "collsim/io/presets.hpp"

#include <algorithm>
#include <array>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <string_view>

namespace collsim::gui {
namespace {

/// Options QGuiApplication reads itself (QGuiApplication's documentation), with a value or not.
constexpr std::array<std::string_view, 8> kQtWithValue{
    "-platform",        "-platformpluginpath", "-platformtheme", "-plugin",
    "-qwindowgeometry", "-qwindowtitle",       "-display",       "-style"};
constexpr std::array<std::string_view, 4> kQtAlone{"-reverse", "-nograb", "-dograb", "-sync"};

} // namespace

GuiOptions parse_command_line(const std::vector<std::string>& args) {
  GuiOptions o;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    const auto value = [&](const char* option) -> std::string {
      if (i + 1 >= args.size() || args[i + 1].empty()) {
        throw core::UsageError(fmt::format("{} needs a value; see --help", option));
      }
      return args[++i];
    };
    if (a == "--help" || a == "-h") {
      o.help = true;
    } else if (a == "--preset") {
      o.preset = value("--preset");
    } else if (a.starts_with("--preset=")) {
      o.preset = a.substr(9);
    } else if (a == "--screenshot") {
      o.screenshot = value("--screenshot");
    } else if (a.starts_with("--screenshot=")) {
      o.screenshot = a.substr(13);
    } else if (std::find(kQtWithValue.begin(), kQtWithValue.end(), a) != kQtWithValue.end()) {
      ++i;
    } else if (std::find(kQtAlone.begin(), kQtAlone.end(), a) != kQtAlone.end()) {
      continue;
    } else if (a.size() > 1 && a.front() == '-') {
      throw core::UsageError(fmt::format("unknown option '{}'; see --help", a));
    } else if (!o.scenario.empty()) {
      throw core::UsageError(
          fmt::format("give one scenario, got '{}' and '{}'; see --help", o.scenario, a));
    } else {
      o.scenario = a;
    }
  }
  if (!o.scenario.empty() && !o.preset.empty()) {
    throw core::UsageError(fmt::format(
        "give a scenario or --preset, not both (got '{}' and --preset {})", o.scenario, o.preset));
  }
  if (o.preset.empty() && o.scenario.empty() && !o.help) {
    o.preset = "default";
  }
  return o;
}

std::string usage_text() {
  return fmt::format(
      "Usage: collsim-gui [SCENARIO] [--preset NAME] [--screenshot FILE] [--help]\n"
      "\n"
      "The collsim explorer: crossover, bus bandwidth and scaling charts of a study, measured\n"
      "logs against predictions, tuning tables, per-rank timelines, and what-if changes of\n"
      "link rates, latencies and node shape, recomputed as you change them.\n"
      "\n"
      "  SCENARIO           a scenario file, or the name of a preset (default: the preset\n"
      "                     'default')\n"
      "  --preset NAME      open a preset: {}\n"
      "  --screenshot FILE  once the first sweep's charts show, save the screen to FILE (PNG)\n"
      "                     and exit; exit 1 when no result came within 60 s\n"
      "  --help             show this text\n",
      fmt::join(io::preset_names(), ", "));
}

} // namespace collsim::gui
