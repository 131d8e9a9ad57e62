#pragma once
// Typed errors (ARCHITECTURE.md, "Errors"). Every error a user can cause carries the user's
// coordinates; `main` maps the type to an exit code (2 for bad input, 1 for failures while
// running).

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace collsim::core {

/// Base of all collsim errors; what() is the complete one-line message shown to the user.
class Error : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
  /// True when the user's input is at fault (exit code 2), false for failures while running (1).
  [[nodiscard]] virtual bool is_input_error() const { return true; }
};

/// A position in a text file (1-based line and column; 0 means unknown).
struct SourcePos {
  std::string file;
  std::uint32_t line = 0;
  std::uint32_t column = 0;
  bool operator==(const SourcePos&) const = default;
};

/// "file:line:column" (or a prefix of it when parts are unknown).
std::string to_string(const SourcePos& pos);

/// Bad scenario YAML: "file:line:col: error: yaml.path: message".
class ScenarioError : public Error {
public:
  ScenarioError(SourcePos pos, std::string yaml_path, std::string message);
  [[nodiscard]] const SourcePos& pos() const { return pos_; }
  [[nodiscard]] const std::string& yaml_path() const { return yaml_path_; }
  [[nodiscard]] const std::string& message() const { return message_; }

private:
  SourcePos pos_;
  std::string yaml_path_;
  std::string message_;
};

/// Bad measured log: "file:line: error: message".
class LogParseError : public Error {
public:
  LogParseError(SourcePos pos, const std::string& message);
  [[nodiscard]] const SourcePos& pos() const { return pos_; }

private:
  SourcePos pos_;
};

/// A schedule that is malformed or does not implement its collective.
class ScheduleError : public Error {
public:
  using Error::Error;
};

/// A name (algorithm, collective, topology kind, key) that is not known; lists the valid ones.
class UnknownNameError : public Error {
public:
  UnknownNameError(std::string_view what, std::string_view name, std::vector<std::string> valid);
  [[nodiscard]] const std::vector<std::string>& valid() const { return valid_; }

private:
  std::vector<std::string> valid_;
};

/// Bad command-line usage or an invalid request (e.g. ranks = 0, a constraint an algorithm
/// declares).
class UsageError : public Error {
public:
  using Error::Error;
};

/// An engine could not time a schedule.
class EngineError : public Error {
public:
  using Error::Error;
  [[nodiscard]] bool is_input_error() const override { return false; }
};

/// A broken internal invariant: a collsim bug, never the user's fault.
class InternalError : public Error {
public:
  using Error::Error;
  [[nodiscard]] bool is_input_error() const override { return false; }
};

/// Levenshtein distance, for "did you mean".
std::size_t edit_distance(std::string_view a, std::string_view b);
/// The closest name in `valid` to `name`, or empty when none is close enough to suggest.
std::string closest_match(std::string_view name, std::span<const std::string> valid);

} // namespace collsim::core
