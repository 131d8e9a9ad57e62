#pragma once
// Internal: what the readers of library environment variables share (nccl_env.cpp for NCCL_*,
// mpi_env.cpp for UCX_*): value normalisation, the error at the value's place, and the list of
// variables a model does not read.

#include "collsim/core/errors.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace collsim::stacks::detail {

/// `s` in lower case without spaces ("Ring, LL128" and "ring,ll128" read alike).
inline std::string lower_no_spaces(std::string_view s) {
  std::string out;
  for (const char c : s) {
    if (c != ' ') {
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
  }
  return out;
}

/// A bad value of variable `name`: ScenarioError at its position (`section.name`, e.g.
/// `nccl.env.NCCL_ALGO`) when it came from a file, else UsageError.
[[noreturn]] inline void env_fail(const std::map<std::string, core::SourcePos>& positions,
                                  std::string_view section, const std::string& name,
                                  const std::string& msg) {
  const auto it = positions.find(name);
  if (it == positions.end() || it->second.file.empty()) {
    throw core::UsageError(fmt::format("{}: {}", name, msg));
  }
  throw core::ScenarioError(it->second, fmt::format("{}.{}", section, name), msg);
}

/// The names of `env` that are not in `read`.
inline std::vector<std::string> unread(const std::map<std::string, std::string>& env,
                                       std::span<const std::string_view> read) {
  std::vector<std::string> out;
  for (const auto& [name, value] : env) {
    if (std::find(read.begin(), read.end(), name) == read.end()) {
      out.push_back(name);
    }
  }
  return out;
}

} // namespace collsim::stacks::detail
