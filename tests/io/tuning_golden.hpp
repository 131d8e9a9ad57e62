#pragma once
// Golden files of the tuning-table writers (tests/data/tuning/): compare, or regenerate with
// COLLSIM_UPDATE_GOLDEN=1 (then review the diff).

#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace collsim::testing {

inline void check_tuning_golden(const std::string& name, const std::string& actual) {
  const std::string path = std::string(COLLSIM_TEST_DATA_DIR) + "/tuning/" + name;
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
