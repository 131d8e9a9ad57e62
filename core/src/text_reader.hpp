#pragma once
// The line reader under collsim's text forms (the schedule, core/src/schedule_text.cpp, and its
// protocol line, core/src/protocol_text.cpp): words, numbers and literals on one line, comments
// from '#', and errors at file:line:column.

#include "collsim/core/errors.hpp"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <fmt/format.h>
#include <string>
#include <string_view>
#include <system_error>

namespace collsim::core {

class TextReader {
public:
  TextReader(std::string_view text, std::string_view name) : text_(text), name_(name) {}

  bool at_end() const { return pos_ >= text_.size(); }
  char peek_char() const { return at_end() ? '\0' : text_[pos_]; }
  void skip_spaces() {
    while (!at_end() && (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\r')) {
      ++pos_;
      ++col_;
    }
  }
  bool at_line_end() {
    skip_spaces();
    return at_end() || text_[pos_] == '\n' || text_[pos_] == '#';
  }
  void end_line() {
    skip_spaces();
    if (!at_end() && text_[pos_] == '#') {
      while (!at_end() && text_[pos_] != '\n') {
        ++pos_;
      }
    }
    if (at_end()) {
      return;
    }
    if (text_[pos_] != '\n') {
      fail(fmt::format("unexpected '{}' at end of line", text_[pos_]));
    }
    ++pos_;
    ++line_;
    col_ = 1;
  }
  void skip_blank_lines() {
    while (true) {
      skip_spaces();
      if (at_end()) {
        return;
      }
      if (text_[pos_] == '\n' || text_[pos_] == '#') {
        end_line();
        continue;
      }
      return;
    }
  }
  std::string_view read_ident() {
    const std::size_t start = pos_;
    while (!at_end() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) != 0 ||
                         text_[pos_] == '_' || text_[pos_] == '-')) {
      ++pos_;
      ++col_;
    }
    return text_.substr(start, pos_ - start);
  }
  std::string_view peek_word() {
    skip_spaces();
    const auto save_pos = pos_;
    const auto save_col = col_;
    const auto w = read_ident();
    pos_ = save_pos;
    col_ = save_col;
    return w;
  }
  std::string_view read_word(std::string_view what) {
    skip_spaces();
    const auto w = read_ident();
    if (w.empty()) {
      fail(fmt::format("expected {}", what));
    }
    return w;
  }
  void expect_word(std::string_view word) {
    skip_spaces();
    const auto save_col = col_;
    const auto w = read_ident();
    if (w != word) {
      col_ = save_col;
      fail(fmt::format("expected '{}', got '{}'", word, w));
    }
  }
  void expect_literal(std::string_view lit) {
    skip_spaces();
    if (text_.substr(pos_, lit.size()) != lit) {
      fail(fmt::format("expected '{}'", lit));
    }
    pos_ += lit.size();
    col_ += static_cast<std::uint32_t>(lit.size());
  }
  /// A run of non-blank characters (device names contain '/').
  std::string_view read_token(std::string_view what) {
    skip_spaces();
    const std::size_t start = pos_;
    while (!at_end() && text_[pos_] != ' ' && text_[pos_] != '\t' && text_[pos_] != '\n' &&
           text_[pos_] != '\r' && text_[pos_] != '#') {
      ++pos_;
      ++col_;
    }
    if (pos_ == start) {
      fail(fmt::format("expected {}", what));
    }
    return text_.substr(start, pos_ - start);
  }
  double read_double(std::string_view what) {
    skip_spaces();
    double v = 0.0;
    const char* first = text_.data() + pos_;
    const char* last = text_.data() + text_.size();
    auto [ptr, ec] = std::from_chars(first, last, v);
    if (ec != std::errc{} || ptr == first || !(v >= 0.0) || v == HUGE_VAL) {
      fail(fmt::format("expected {} (a non-negative number)", what));
    }
    const auto n = static_cast<std::size_t>(ptr - first);
    pos_ += n;
    col_ += static_cast<std::uint32_t>(n);
    return v;
  }
  std::uint64_t read_uint(std::string_view what) {
    skip_spaces();
    std::uint64_t v = 0;
    const char* first = text_.data() + pos_;
    const char* last = text_.data() + text_.size();
    auto [ptr, ec] = std::from_chars(first, last, v);
    if (ec != std::errc{} || ptr == first) {
      fail(fmt::format("expected {}", what));
    }
    const auto n = static_cast<std::size_t>(ptr - first);
    pos_ += n;
    col_ += static_cast<std::uint32_t>(n);
    return v;
  }
  [[noreturn]] void fail(const std::string& msg, std::size_t back = 0) const {
    const auto col = col_ > back ? col_ - static_cast<std::uint32_t>(back) : 1;
    throw ScheduleError(fmt::format("{}:{}:{}: error: {}", name_, line_, col, msg));
  }
  /// Whether the rest of the text starts with `prefix` (no spaces skipped).
  [[nodiscard]] bool starts_with(std::string_view prefix) const {
    return text_.substr(pos_).starts_with(prefix);
  }

protected:
  std::string_view text_;
  std::string_view name_;
  std::size_t pos_ = 0;
  std::uint32_t line_ = 1;
  std::uint32_t col_ = 1;
};

struct Protocol;

/// Reads the rest of a schedule's `protocol` line, the word `protocol` already read, through its
/// end (core/src/protocol_text.cpp). Throws ScheduleError at the position of what is wrong.
Protocol read_protocol_line(TextReader& in);

} // namespace collsim::core
