// `collsim place` (issue 20; docs/placement.md): before and after, the rankfile, bad input.

#include "cli_test_support.hpp"

#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

namespace {

using collsim::testing::Output;
using collsim::testing::run_collsim;
using collsim::testing::run_json;
using collsim::testing::TempScenario;

const char* kTwoNodes = "topology:\n  kind: system\n  nodes: 2\n"
                        "  node:\n    cpu: {sockets: 1, cores_per_socket: 4}\n"
                        "studies:\n  - name: s\n    collective: allreduce\n"
                        "    algorithms: [ring]\n    ranks: [8]\n    sizes: [1KiB]\n";

/// Two cliques of 4 ranks (even and odd), 1 MiB between the members of a clique.
std::string cliques_csv() {
  const std::string path = std::string(COLLSIM_SOURCE_DIR) + "/build/place_cliques.csv";
  std::ofstream f(path);
  for (int a = 0; a < 8; ++a) {
    for (int b = 0; b < 8; ++b) {
      f << (b > 0 ? "," : "") << (a != b && a % 2 == b % 2 ? "1MiB" : "0");
    }
    f << "\n";
  }
  return path;
}

} // namespace

TEST_CASE("collsim place: two cliques split by block placement are put one per node",
          "[cli][placement]") {
  const TempScenario s("place_two_nodes", kTwoNodes);
  const std::string csv = cliques_csv();
  const std::string rankfile = std::string(COLLSIM_SOURCE_DIR) + "/build/place_ranks.txt";
  const Output o = run_collsim("place --scenario " + s.path + " --pattern " + csv + " --rankfile " +
                               rankfile + " --format json");
  INFO(o.err);
  REQUIRE(o.code == 0);
  const auto j = nlohmann::json::parse(o.out);
  REQUIRE(j["placements"].size() == 2);
  CHECK(j["placements"][0]["placement"] == "block (by core/slot)");
  CHECK(j["chosen"] == "anneal");
  CHECK(j["placements"][1]["exchange_us"].get<double>() <
        j["placements"][0]["exchange_us"].get<double>());
  // Each clique on one node: the even ranks share rank 0's node, the odd ones rank 1's.
  const auto& m = j["placements"][1]["mapping"];
  for (int r = 0; r < 8; ++r) {
    CHECK(m[r]["node"] == m[r % 2]["node"]);
  }
  CHECK(m[0]["node"] != m[1]["node"]);
  std::ifstream f(rankfile);
  std::stringstream text;
  text << f.rdbuf();
  CHECK(text.str().find("rank 7=+n") != std::string::npos);
  CHECK(o.err.find("collsim: wrote " + rankfile) != std::string::npos);
  std::remove(rankfile.c_str());
  std::remove(csv.c_str());
}

TEST_CASE("collsim place: bad input is one line and exit code 2", "[cli][placement][errors]") {
  const TempScenario s("place_two_nodes_errors", kTwoNodes);
  const Output method =
      run_collsim("place --scenario " + s.path + " --pattern halo2d:2x4:1KiB --method magic");
  CHECK(method.code == 2);
  CHECK(method.err.find("unknown placement method 'magic'") != std::string::npos);
  const Output spec = run_collsim("place --scenario " + s.path + " --pattern halo3d:4x4:1KiB");
  CHECK(spec.code == 2);
  CHECK(spec.err == "collsim: error: --pattern 'halo3d:4x4:1KiB': '4x4' is not 3 positive "
                    "extents joined by 'x'\n");
  const Output uniform = run_collsim("place --scenario textbook --pattern halo2d:2x4:1KiB");
  CHECK(uniform.code == 2);
  CHECK(uniform.err.find("placement needs a system topology") != std::string::npos);
  const Output big = run_collsim("place --scenario " + s.path + " --pattern halo3d:8x8x8:1KiB");
  CHECK(big.code == 2);
  CHECK(big.err.find("512") != std::string::npos);
  const Output missing = run_collsim("place --scenario " + s.path + " --pattern no_such.csv");
  CHECK(missing.code == 2);
  CHECK(missing.err == "collsim: error: cannot open pattern file 'no_such.csv'\n");
}
