#include "collsim/core/errors.hpp"

#include <algorithm>
#include <fmt/format.h>

namespace collsim::core {

std::string to_string(const SourcePos& pos) {
  if (pos.line == 0) {
    return pos.file;
  }
  if (pos.column == 0) {
    return fmt::format("{}:{}", pos.file, pos.line);
  }
  return fmt::format("{}:{}:{}", pos.file, pos.line, pos.column);
}

ScenarioError::ScenarioError(SourcePos pos, std::string yaml_path, std::string message)
    : Error(fmt::format("{}: error: {}{}{}", to_string(pos), yaml_path,
                        yaml_path.empty() ? "" : ": ", message)),
      pos_(std::move(pos)), yaml_path_(std::move(yaml_path)), message_(std::move(message)) {}

LogParseError::LogParseError(SourcePos pos, const std::string& message)
    : Error(fmt::format("{}: error: {}", to_string(pos), message)), pos_(std::move(pos)) {}

namespace {
std::string unknown_name_message(std::string_view what, std::string_view name,
                                 const std::vector<std::string>& valid) {
  std::string msg = fmt::format("unknown {} '{}'", what, name);
  const std::string close = closest_match(name, valid);
  if (!close.empty()) {
    msg += fmt::format(" (did you mean '{}'?)", close);
  }
  msg += fmt::format("; valid values are: {}", fmt::join(valid, ", "));
  return msg;
}
} // namespace

UnknownNameError::UnknownNameError(std::string_view what, std::string_view name,
                                   std::vector<std::string> valid)
    : Error(unknown_name_message(what, name, valid)), valid_(std::move(valid)) {}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> prev(b.size() + 1);
  std::vector<std::size_t> cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) {
    prev[j] = j;
  }
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t subst = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, subst});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string closest_match(std::string_view name, std::span<const std::string> valid) {
  std::string best;
  std::size_t best_dist = std::string::npos;
  for (const auto& v : valid) {
    const std::size_t d = edit_distance(name, v);
    if (d < best_dist) {
      best_dist = d;
      best = v;
    }
  }
  // Suggest only when at most about a third of the name differs (and never for wild guesses).
  const std::size_t limit = std::max<std::size_t>(2, name.size() / 3);
  if (best_dist > limit) {
    return {};
  }
  return best;
}

} // namespace collsim::core
