#pragma once
// Running the real collsim binary from CLI tests.

#include <string>

namespace collsim::testing {

struct Output {
  int code = -1;
  std::string out;
  std::string err;
};

/// Runs collsim with `args` (shell-quoted by the caller) from the source directory; captures its
/// exit code, stdout and stderr.
Output run_collsim(const std::string& args);

} // namespace collsim::testing
