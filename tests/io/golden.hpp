#pragma once
// Golden files of the writer tests (tests/data/io/, tests/data/tuning/): compare, or regenerate
// with COLLSIM_UPDATE_GOLDEN=1 (then review the diff).

#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace collsim::testing {

/// Compares `actual` with the golden file `path`, or rewrites the file when
/// COLLSIM_UPDATE_GOLDEN=1.
inline void check_golden_file(const std::string& path, const std::string& actual) {
  const char* update = std::getenv("COLLSIM_UPDATE_GOLDEN");
  if (update != nullptr && std::string(update) == "1") {
    std::ofstream(path, std::ios::binary) << actual;
    WARN("rewrote " << path);
    return;
  }
  std::ifstream in(path, std::ios::binary);
  INFO("golden file " << path << " (set COLLSIM_UPDATE_GOLDEN=1 to regenerate)");
  REQUIRE(in.good());
  std::stringstream expected;
  expected << in.rdbuf();
  CHECK(actual == expected.str());
}

} // namespace collsim::testing
