#pragma once
// Running the real collsim binary from CLI tests.

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace collsim::testing {

struct Output {
  int code = -1;
  std::string out;
  std::string err;
};

/// Runs collsim with `args` (shell-quoted by the caller) from the source directory; captures its
/// exit code, stdout and stderr.
Output run_collsim(const std::string& args);

/// The whole file at `path` ("" where it cannot be read).
std::string slurp(const std::string& path);

/// What a shell command (a bench/validation script) prints on standard output; fails the test
/// when it exits non-zero.
std::string script_output(const std::string& cmd);

/// The lines of `out` (a script's table) that `doc` does not contain verbatim, and how many of
/// `out`'s lines contain `row_marker` (the table's rows).
struct DocLines {
  std::vector<std::string> missing;
  std::size_t rows = 0;
};
DocLines lines_in_doc(const std::string& out, const std::string& doc,
                      const std::string& row_marker);

/// Runs collsim with `args`, which must exit 0, and parses its stdout as JSON.
nlohmann::json run_json(const std::string& args);

/// A scenario file `name` under the build directory with `body` (YAML after its name line),
/// removed at the end of the scope.
struct TempScenario {
  std::string path;
  TempScenario(const std::string& name, const std::string& body) {
    path = std::string(COLLSIM_SOURCE_DIR) + "/build/" + name + ".yaml";
    std::ofstream(path) << "name: " << name << "\n" << body;
  }
  TempScenario(const TempScenario&) = delete;
  TempScenario& operator=(const TempScenario&) = delete;
  ~TempScenario() { std::remove(path.c_str()); }
};

} // namespace collsim::testing
