#pragma once
// Percentages as users write them ("7.4 %", "7.4%", "7.4"): the scenario's accuracy: section and
// the --tolerance of collsim check and expect.

#include <charconv>
#include <cmath>
#include <optional>
#include <string_view>

namespace collsim::io {

/// The number of a percentage, a finite value >= 0; nullopt for anything else.
inline std::optional<double> parse_percent(std::string_view text) {
  if (text.ends_with('%')) {
    text.remove_suffix(1);
    while (text.ends_with(' ')) {
      text.remove_suffix(1);
    }
  }
  double value = 0.0;
  const char* last = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), last, value);
  if (text.empty() || ec != std::errc() || ptr != last || !std::isfinite(value) || value < 0.0) {
    return std::nullopt;
  }
  return value;
}

} // namespace collsim::io
