// `collsim place` (issue 20; docs/placement.md): before and after, the rankfile, bad input.

#include "cli_test_support.hpp"

#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <map>
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
  CHECK(j["placements"][1]["simulated_us"].get<double>() <
        j["placements"][0]["simulated_us"].get<double>());
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

TEST_CASE("collsim place: --format writes the chosen mapping for mpirun, mpiexec or srun",
          "[cli][placement][launchers]") {
  const TempScenario s("place_two_nodes_launchers", kTwoNodes);
  const std::string csv = cliques_csv();
  const std::string file = std::string(COLLSIM_SOURCE_DIR) + "/build/place_hosts.txt";
  const std::string args = "place --scenario " + s.path + " --pattern " + csv;
  const std::map<std::string, std::string> host_b{
      {"ompi-rankfile", "=b slot="}, {"mpich-hostfile", "\nb:1 binding=user:"}, {"slurm", "\nb\n"}};
  for (const auto& [format, b] : host_b) {
    CAPTURE(format);
    const Output o = run_collsim(args + " --format " + format + " -o " + file + " --hosts a,b");
    INFO(o.err);
    REQUIRE(o.code == 0);
    // The file went to -o: the report still comes to stdout.
    CHECK(o.out.find("# collsim place: ") == 0);
    CHECK(o.err.find("collsim: wrote " + file) != std::string::npos);
    std::ifstream f(file);
    std::stringstream text;
    text << f.rdbuf();
    CHECK(text.str().find("# Launch: ") != std::string::npos);
    CHECK(text.str().find(file + " ") != std::string::npos); // the launch names the file
    CHECK(text.str().find(b) != std::string::npos);          // and the hosts given
  }
  // Without -o the file is the output.
  const Output slurm = run_collsim(args + " --format slurm");
  CHECK(slurm.out.find("# collsim place: Slurm hostfile for ") == 0);
  CHECK(slurm.out.find("\nnode1\n") != std::string::npos);
  std::remove(file.c_str());
  std::remove(csv.c_str());
}

TEST_CASE("collsim place: bad launcher formats and host lists are one line and exit code 2",
          "[cli][placement][launchers][errors]") {
  const TempScenario s("place_two_nodes_launcher_errors", kTwoNodes);
  const std::string args = "place --scenario " + s.path + " --pattern halo2d:2x4:1KiB";
  const Output format = run_collsim(args + " --format slurn");
  CHECK(format.code == 2);
  CHECK(format.err == "collsim: error: unknown format 'slurn' (did you mean 'slurm'?); valid "
                      "values are: table, json, ompi-rankfile, mpich-hostfile, slurm\n");
  const Output unused = run_collsim(args + " --hosts a,b");
  CHECK(unused.code == 2);
  CHECK(unused.err == "collsim: error: --hosts names the hosts of a launcher file: give --format "
                      "ompi-rankfile, mpich-hostfile or slurm, or --rankfile\n");
  const Output few = run_collsim(args + " --format mpich-hostfile --hosts a");
  CHECK(few.code == 2);
  CHECK(few.err == "collsim: error: --hosts names 1 host, the placement uses 2 nodes\n");
}

TEST_CASE("collsim place --study: the NUMA study's cases, table, JSON and chart",
          "[cli][placement]") {
  const std::string study = std::string(COLLSIM_SOURCE_DIR) + "/studies/placement-numa-halo.yaml";
  const auto j = run_json("place --study " + study + " --format json");
  REQUIRE(j["cases"].size() == 4);
  // Issue 20's target: 64 ranks of a 3D halo on one nscc-aspire2a node, the placement found
  // beats Open MPI's by-core placement in the simulated exchange.
  CHECK(j["cases"][0]["label"] == "ASPIRE 2A, 64 ranks");
  CHECK(j["cases"][0]["chosen"] == "anneal");
  CHECK(j["cases"][0]["gain_percent"].get<double>() > 25.0);
  CHECK(j["cases"][1]["gain_percent"].get<double>() > 15.0);
  // On QiMing (one NUMA domain per socket) by-core placement already cuts the grid once.
  CHECK(j["cases"][3]["chosen"] == "block (by core/slot)");
  CHECK(j["cases"][3]["gain_percent"].get<double>() == 0.0);
  const Output t = run_collsim("place --study " + study);
  REQUIRE(t.code == 0);
  CHECK(t.out.find("ASPIRE 2A, 64 ranks") != std::string::npos);
  CHECK(t.out.find("(block kept)") != std::string::npos);
  CHECK(t.err.find("collsim: case 4/4: QiMing, 64 ranks") != std::string::npos);
}

TEST_CASE("collsim place: a collective's schedule and a workload's step as the traffic",
          "[cli][placement]") {
  // A ring allreduce on 2 QiMing nodes: block placement is already the best (one crossing).
  const auto ring = run_json("place --scenario qiming --collective allreduce --algorithm ring "
                             "--bytes 1MiB --ranks 128 --engine loggp --format json");
  CHECK(ring["pattern"] == "allreduce ring of 1048576 B (128)");
  CHECK(ring["chosen"] == "block (by core/slot)");
  CHECK(ring["placements"][0]["bytes_by_link_class"]["network"].get<double>() > 0.0);
  const auto w = run_json("place --scenario qiming --workload " + std::string(COLLSIM_SOURCE_DIR) +
                          "/workloads/hoomd-lj-qiming.yaml --ranks 128 --method greedy "
                          "--format json");
  CHECK(w["pattern"] == "workload hoomd-lj-qiming (2 x 64 ranks)");
  CHECK(w["ranks"] == 128);
}

TEST_CASE("collsim place: traffic and study mistakes are one line and exit code 2",
          "[cli][placement][errors]") {
  const Output none = run_collsim("place --scenario qiming");
  CHECK(none.code == 2);
  CHECK(none.err ==
        "collsim: error: give the traffic to place: --pattern, --workload or --collective\n");
  const Output ranks = run_collsim("place --scenario qiming --pattern halo2d:2x2:1KiB --ranks 4");
  CHECK(ranks.code == 2);
  CHECK(ranks.err == "collsim: error: --ranks goes with --workload or --collective: a pattern has "
                     "its own ranks\n");
  const Output bytes = run_collsim("place --scenario qiming --collective allreduce --ranks 8");
  CHECK(bytes.code == 2);
  CHECK(bytes.err == "collsim: error: --collective needs --bytes\n");
  const Output few = run_collsim("place --scenario qiming --collective allreduce --bytes 1KiB");
  CHECK(few.code == 2);
  CHECK(few.err == "collsim: error: --collective needs --ranks of at least 2\n");
  const Output objective =
      run_collsim("place --scenario qiming --pattern halo2d:2x2:1KiB --objective hops");
  CHECK(objective.code == 2);
  CHECK(objective.err.find("unknown placement objective 'hops'") != std::string::npos);
  const std::string study = std::string(COLLSIM_SOURCE_DIR) + "/studies/placement-numa-halo.yaml";
  const Output launcher = run_collsim("place --study " + study + " --format slurm");
  CHECK(launcher.code == 2);
  CHECK(launcher.err == "collsim: error: --study reports its cases as a table or JSON: launcher "
                        "files come from one placement (--scenario)\n");
  const Output plots = run_collsim("place --scenario qiming --pattern halo2d:2x2:1KiB --plots x");
  CHECK(plots.code == 2);
  CHECK(plots.err == "collsim: error: --plots draws a study's chart: give --study\n");
  const TempScenario bad("place_bad_study", "cases:\n  - label: x\n    scenario: qiming\n"
                                            "    pattern: halo2d:2x2\n");
  const Output spec = run_collsim("place --study " + bad.path);
  CHECK(spec.code == 2);
  CHECK(spec.err.find(": error: cases[0]: case 'x': --pattern 'halo2d:2x2': expected") !=
        std::string::npos);
}

TEST_CASE("collsim place: --method scotch and --method mip put each clique on a node of its own",
          "[cli][placement]") {
  const TempScenario s("place_two_nodes_methods", kTwoNodes);
  const std::string csv = std::string(COLLSIM_SOURCE_DIR) + "/build/place_methods_cliques.csv";
  {
    std::ofstream f(csv);
    for (int a = 0; a < 8; ++a) {
      for (int b = 0; b < 8; ++b) {
        f << (b > 0 ? "," : "") << (a != b && a % 2 == b % 2 ? "1MiB" : "0");
      }
      f << "\n";
    }
  }
  std::map<std::string, double> hop_bytes;
  for (const std::string method : {"scotch", "mip", "exhaustive"}) {
    CAPTURE(method);
    const Output o = run_collsim("place --scenario " + s.path + " --pattern " + csv + " --method " +
                                 method + " --format json");
    INFO(o.err);
    REQUIRE(o.code == 0);
    const auto j = nlohmann::json::parse(o.out); // nothing of CBC's or Scotch's on stdout
    REQUIRE(j["placements"].size() == 2);
    CHECK(j["placements"][1]["placement"] == method);
    const auto& m = j["placements"][1]["mapping"];
    for (int r = 0; r < 8; ++r) {
      CHECK(m[r]["node"] == m[r % 2]["node"]);
    }
    CHECK(m[0]["node"] != m[1]["node"]);
    hop_bytes[method] = j["placements"][1]["hop_bytes_us"].get<double>();
  }
  CHECK(hop_bytes["mip"] == Approx(hop_bytes["exhaustive"]).epsilon(1e-12));
  CHECK(hop_bytes["scotch"] == Approx(hop_bytes["exhaustive"]).epsilon(1e-12));
  const TempScenario wide("place_two_nodes_of_16",
                          "topology:\n  kind: system\n  nodes: 2\n"
                          "  node:\n    cpu: {sockets: 1, cores_per_socket: 16}\n"
                          "studies:\n  - name: s\n    collective: allreduce\n"
                          "    algorithms: [ring]\n    ranks: [8]\n    sizes: [1KiB]\n");
  const Output big =
      run_collsim("place --scenario " + wide.path + " --pattern halo2d:5x5:1KiB --method mip");
  CHECK(big.code == 2);
  CHECK(big.err == "collsim: error: mip placement of 25 ranks: the exact model takes at most 24 "
                   "ranks; use --method scotch or anneal\n");
  std::remove(csv.c_str());
}
