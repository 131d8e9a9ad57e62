#pragma once
// Small text helpers for option and control values ("8, 16,64", "a=1, b=2").

#include <string_view>
#include <vector>

namespace collsim::core {

/// `s` without leading and trailing blanks (spaces and tabs).
inline std::string_view trim_blanks(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) {
    s.remove_prefix(1);
  }
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) {
    s.remove_suffix(1);
  }
  return s;
}

/// The pieces of `s` between `sep`s, each trimmed; "" gives one empty piece, "a," two.
inline std::vector<std::string_view> split_trimmed(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  while (true) {
    const auto at = s.find(sep);
    out.push_back(trim_blanks(s.substr(0, at)));
    if (at == std::string_view::npos) {
      return out;
    }
    s.remove_prefix(at + 1);
  }
}

} // namespace collsim::core
