#pragma once
// Reading the node-description test inputs of tests/data/topology/.

#include <fstream>
#include <sstream>
#include <string>

namespace collsim::testing {

/// The path of tests/data/topology/`name`.
inline std::string topology_data(const std::string& name) {
  return std::string(COLLSIM_TEST_DATA_DIR) + "/topology/" + name;
}

/// The whole text of the file at `path`.
inline std::string text_of(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

} // namespace collsim::testing
