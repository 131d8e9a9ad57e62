#include "cli_test_support.hpp"

#include <array>
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

namespace collsim::testing {

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

Output run_collsim(const std::string& args) {
  char err_template[] = "/tmp/collsim_cli_test_XXXXXX";
  const int fd = mkstemp(err_template);
  REQUIRE(fd >= 0);
  close(fd);
  const std::string err_file = err_template;
  const std::string cmd = std::string("cd '") + COLLSIM_SOURCE_DIR + "' && '" + COLLSIM_BINARY +
                          "' " + args + " 2>'" + err_file + "'";
  Output o;
  FILE* pipe = popen(cmd.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::array<char, 4096> buf{};
  std::size_t n = 0;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) {
    o.out.append(buf.data(), n);
  }
  const int status = pclose(pipe);
  o.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (FILE* f = std::fopen(err_file.c_str(), "r")) {
    while ((n = fread(buf.data(), 1, buf.size(), f)) > 0) {
      o.err.append(buf.data(), n);
    }
    std::fclose(f);
  }
  std::remove(err_file.c_str());
  return o;
}

nlohmann::json run_json(const std::string& args) {
  const Output o = run_collsim(args);
  INFO(args << "\n" << o.err);
  REQUIRE(o.code == 0);
  return nlohmann::json::parse(o.out);
}

std::string script_output(const std::string& cmd) {
  FILE* pipe = popen(cmd.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::string out;
  char buf[4096];
  while (std::fgets(buf, sizeof buf, pipe) != nullptr) {
    out += buf;
  }
  REQUIRE(pclose(pipe) == 0);
  return out;
}

DocLines lines_in_doc(const std::string& out, const std::string& doc,
                      const std::string& row_marker) {
  DocLines r;
  std::istringstream lines(out);
  std::string line;
  while (std::getline(lines, line)) {
    if (doc.find(line) == std::string::npos) {
      r.missing.push_back(line);
    }
    r.rows += line.find(row_marker) != std::string::npos ? 1 : 0;
  }
  return r;
}

} // namespace collsim::testing
