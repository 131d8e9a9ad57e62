#pragma once
// A GOAL file as read (internal to io): the operations of every rank with their dependencies and
// source positions, and collsim's `// collsim:` comments. goal_reader.cpp parses it,
// goal_build.cpp turns it into a schedule.

#include "collsim/io/goal.hpp"

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace collsim::io::detail {

struct GoalOp {
  enum class Kind { send, recv, calc };
  Kind kind = Kind::send;
  std::uint64_t amount = 0; ///< bytes, or calc time units
  std::int64_t peer = 0;    ///< -1: any source
  std::int64_t tag = 0;     ///< -1: any tag
  std::uint32_t cpu = 0;
  std::uint32_t line = 0;
  std::uint32_t column = 0;
  std::vector<std::size_t> requires_;
  std::vector<std::size_t> irequires_;
};

/// Hashes labels by value, so that a label's string_view finds its std::string key.
struct LabelHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

struct GoalRank {
  std::vector<GoalOp> ops;
  std::unordered_map<std::string, std::size_t, LabelHash, std::equal_to<>> labels;
};

/// A `// collsim:` comment: its text and where that text starts in the file.
struct GoalAnnotation {
  std::string text;
  std::uint32_t line = 0;
  std::uint32_t column = 0; ///< 1-based column of the text's first character
};

struct GoalFile {
  std::string name;
  std::vector<GoalRank> ranks;
  std::vector<GoalAnnotation> annotated;
  std::vector<std::uint32_t> closes; ///< the line of each rank's '}'
};

/// Throws ScheduleError "name:line:column: error: msg".
[[noreturn]] void goal_fail(const std::string& name, std::uint32_t line, std::uint32_t column,
                            const std::string& msg);

/// A file without collsim's comments: the GOAL operations alone (goal.hpp, read_goal).
core::Schedule goal_schedule(const GoalFile& f, const GoalImportOptions& options);
/// A file with them: the schedule they spell, each GOAL operation checked against its comment.
core::Schedule goal_annotated_schedule(const GoalFile& f, const GoalImportOptions& options);

} // namespace collsim::io::detail
