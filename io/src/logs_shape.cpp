// io::apply_log_shape: the rank and node counts a user gives with `--ranks N` and `--nodes M`
// (collsim ingest, validate, calibrate) for logs that do not state them. The given count wins over
// the log's own, and a warning names the log's value where the two differ (docs/logs.md, "How the
// operation and the rank count are found").

#include "collsim/io/logs.hpp"

#include "logs_common.hpp"

#include "collsim/core/errors.hpp"

#include <algorithm>
#include <fmt/format.h>

namespace collsim::io {
namespace {

std::string plural(std::uint32_t n, std::string_view word) {
  return fmt::format("{} {}{}", n, word, n == 1 ? "" : "s");
}

/// "(--ranks)" for a flag, "(from the device list)" for what the log says.
std::string origin(const std::string& source) {
  if (logs::starts_with(source, "--")) {
    return fmt::format("({})", source);
  }
  return source.empty() ? std::string() : fmt::format("(from the {})", source);
}

/// `what` ("rank", "node") of the log replaced by the flag's value, or nothing when they agree.
std::optional<std::string> replaced(std::string_view flag, std::uint32_t given,
                                    std::uint32_t logged, const std::string& source,
                                    std::string_view what) {
  if (logged == 0 || logged == given) {
    return std::nullopt;
  }
  return fmt::format("{} {} replaces the {} the log gives {}", flag, given, plural(logged, what),
                     origin(source));
}

} // namespace

void apply_log_shape(ParsedLog& log, const LogShape& shape) {
  if (!shape.ranks && !shape.nodes) {
    return;
  }
  std::vector<LogWarning> added;
  for (LogInfo& info : log.runs) {
    if (shape.ranks) {
      if (auto w = replaced("--ranks", *shape.ranks, info.ranks, info.ranks_source, "rank")) {
        added.push_back({info.line, std::move(*w)});
      }
      info.ranks = *shape.ranks;
      info.ranks_source = "--ranks";
    }
    if (shape.nodes) {
      if (auto w = replaced("--nodes", *shape.nodes, info.nodes, info.nodes_source, "node")) {
        added.push_back({info.line, std::move(*w)});
      }
      info.nodes = *shape.nodes;
      info.nodes_source = "--nodes";
    }
    if (info.ranks == 0 || info.nodes == 0) {
      continue;
    }
    // Ranks per node = ranks / nodes is what places the ranks; it has to be a whole number.
    if (info.nodes > info.ranks) {
      throw core::UsageError(
          fmt::format("{}:{}: {} {} for {} {}: every node runs at least one rank", log.file,
                      info.line, plural(info.nodes, "node"), origin(info.nodes_source),
                      plural(info.ranks, "rank"), origin(info.ranks_source)));
    }
    if (info.ranks % info.nodes != 0) {
      throw core::UsageError(fmt::format(
          "{}:{}: {} {} do not divide evenly over {} {} (ranks per node = ranks / nodes)", log.file,
          info.line, plural(info.ranks, "rank"), origin(info.ranks_source),
          plural(info.nodes, "node"), origin(info.nodes_source)));
    }
  }
  if (shape.ranks) {
    for (Measurement& m : log.measurements) {
      m.ranks = *shape.ranks;
    }
    // The parsers' "the rank count is unknown: ..." no longer holds.
    std::erase_if(log.warnings, [](const LogWarning& w) {
      return logs::starts_with(w.text, "the rank count is unknown");
    });
  }
  log.warnings.insert(log.warnings.end(), added.begin(), added.end());
  std::stable_sort(log.warnings.begin(), log.warnings.end(),
                   [](const LogWarning& a, const LogWarning& b) { return a.line < b.line; });
}

} // namespace collsim::io
