// `--ranks N` and `--nodes M` of collsim ingest, validate and calibrate (counts for logs that do
// not state them), and a '#'-prefixed nccl-tests table, as users run them: exact warnings and one
// exact error line with exit 2 for every bad value.

#include "cli_test_support.hpp"

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

using collsim::testing::run_collsim;

const std::string kA100 = "tests/data/logs/a100sxm4_80gb_1x8_allreduce_128M_nccl-tests-2.19.4.txt";
const std::string kOci = "tests/data/logs/oci_2x8_a100_40gb_roce_allreduce_nccl-tests.txt";
const std::string kHpc7g = "tests/data/logs/aws_hpc7g_cpu_efa_osu_allreduce_4-32nodes.txt";
const std::string kPrefixed =
    "tests/data/logs/slurm_hash_prefixed_a100_1x8_allreduce_nccl-tests.txt";

bool contains(const std::string& text, const std::string& what) {
  return text.find(what) != std::string::npos;
}

} // namespace

TEST_CASE("ingest --ranks --nodes: the flags win over the log's counts, with a warning each",
          "[cli][ingest][shape]") {
  const auto o = run_collsim("ingest " + kA100 + " --ranks 16 --nodes 2");
  INFO(o.err);
  REQUIRE(o.code == 0);
  CHECK(o.err == kA100 +
                     ":9: warning: --ranks 16 replaces the 8 ranks the log gives (from the "
                     "device list)\n" +
                     kA100 +
                     ":9: warning: --nodes 2 replaces the 1 node the log gives (from the "
                     "device list)\n");
  CHECK(contains(o.out, "# run 1: " + kA100 +
                            ":9, nccl-tests 2.19.4, all_reduce_perf: allreduce (from the program "
                            "name), 16 ranks (--ranks), 2 nodes (--nodes), NVIDIA "
                            "A100-SXM4-80GB, NCCL 2.19.3, float, 25 rows\n"));
  const auto j = run_collsim("ingest " + kA100 + " --ranks 16 --nodes 2 --format json");
  REQUIRE(j.code == 0);
  const auto doc = nlohmann::json::parse(j.out);
  CHECK(doc.at("logs").at(0).at("ranks") == 16);
  CHECK(doc.at("logs").at(0).at("ranks_source") == "--ranks");
  CHECK(doc.at("logs").at(0).at("nodes") == 2);
  CHECK(doc.at("logs").at(0).at("nodes_source") == "--nodes");
  CHECK(doc.at("measurements").at(48).at("ranks") == 16);
}

TEST_CASE("ingest --ranks gives OSU tables their rank count and drops the 'unknown' warnings",
          "[cli][ingest][shape]") {
  const auto before = run_collsim("ingest " + kHpc7g);
  REQUIRE(before.code == 0);
  CHECK(contains(before.err, "warning: the rank count is unknown"));
  const auto o = run_collsim("ingest " + kHpc7g + " --ranks 64 --format csv");
  INFO(o.err);
  REQUIRE(o.code == 0);
  CHECK(!contains(o.err, "the rank count is unknown"));
  // Line 27 of the log: run 1, 1 MiB, 704.31 us, now on 64 ranks.
  CHECK(contains(o.out, kHpc7g + ",27,1,osu,allreduce,allreduce,1048576,262144,MPI_FLOAT,sum,-1,"
                                 "64,false,704.31,"));
}

TEST_CASE("ingest reads a nccl-tests table printed behind '#' with one warning",
          "[cli][ingest][prefixed]") {
  const auto o = run_collsim("ingest " + kPrefixed);
  INFO(o.err);
  REQUIRE(o.code == 0);
  CHECK(o.err == kPrefixed + ":24: warning: read 25 data rows from '#'-prefixed lines (lines "
                             "26-50): a wrapper printed the table behind '#'\n");
  CHECK(contains(o.out, "# collsim ingest: 1 file, 1 run, 50 measurements, 1 warning\n"));
  CHECK(contains(o.out, "     allreduce     134217728      33554432      float    sum    -1      "
                        "8    out     1295.41           -           -    103.61    181.32      "
                        "50\n"));
}

TEST_CASE("validate --ranks: a log without a rank count is validated instead of skipped",
          "[cli][validate][shape]") {
  const std::string base = "validate --scenario cpu-hdr100-epyc --algorithm ring --format json "
                           "--log " +
                           kHpc7g;
  const auto before = run_collsim(base);
  REQUIRE(before.code == 0);
  // Only the osu_latency and osu_bw tables, whose 2 ranks OSU fixes.
  const auto pt2pt = nlohmann::json::parse(before.out).at("rows");
  CHECK(pt2pt.size() == 24 + 23);
  for (const auto& row : pt2pt) {
    CHECK((row.at("collective") == "osu_latency" || row.at("collective") == "osu_bw"));
    CHECK(row.at("ranks") == 2);
  }
  const auto o = run_collsim(base + " --ranks 64");
  INFO(o.err);
  REQUIRE(o.code == 0);
  const auto rows = nlohmann::json::parse(o.out).at("rows");
  // The four allreduce tables; --ranks 64 applies to latency and bw too, which run on 2 ranks.
  REQUIRE(rows.size() == 4 * 19);
  for (const auto& row : rows) {
    CHECK(row.at("ranks") == 64);
    CHECK(row.at("collective") == "allreduce");
  }
}

TEST_CASE("validate --nodes places ranks / nodes ranks on each node of the scenario",
          "[cli][validate][shape]") {
  const std::string rest = " --algorithm nccl_ring --format json --log " + kA100 + " --ranks 16";
  // The predicted times of the 25 rows (8 B .. 128 MiB) on 16 ranks.
  const auto predicted = [&](const std::string& scenario, const std::string& extra) {
    const auto o = run_collsim("validate --scenario " + scenario + rest + extra);
    INFO(o.err);
    REQUIRE(o.code == 0);
    const auto rows = nlohmann::json::parse(o.out).at("rows");
    REQUIRE(rows.size() == 25);
    std::vector<double> out;
    for (const auto& row : rows) {
      CHECK(row.at("ranks") == 16);
      out.push_back(row.at("predicted_us").get<double>());
    }
    return out;
  };
  // dgx-a100 fills its 8 GPUs per node: --nodes 2 is its own placement.
  const auto two = predicted("dgx-a100", " --nodes 2");
  CHECK(two == predicted("dgx-a100", ""));
  // --nodes 4 predicts what the scenario with 4 ranks per node predicts ...
  char name[] = "/tmp/collsim_rpn4_XXXXXX";
  const int fd = mkstemp(name);
  REQUIRE(fd >= 0);
  close(fd);
  {
    std::ofstream f(name);
    f << "name: dgx-a100-rpn4\nbase: dgx-a100\ntopology:\n  placement:\n    ranks_per_node: 4\n";
  }
  const auto four = predicted("dgx-a100", " --nodes 4");
  const auto file = predicted(name, "");
  std::remove(name);
  CHECK(four == file);
  // ... which crosses nodes more often: small messages take longer (the ring's hops are latency
  // bound; large ones are bound by the NICs either way).
  CHECK(four.front() > two.front());

  // NCCL's own estimate is summarised with --nodes as without it (the summary was missing with
  // --nodes until 2026-12-07; the rows had it).
  const auto library = [&](const std::string& extra) {
    const auto o = run_collsim("validate --scenario dgx-a100" + rest + extra);
    REQUIRE(o.code == 0);
    const auto summary = nlohmann::json::parse(o.out).at("summary");
    REQUIRE(summary.contains("library_estimate"));
    return summary.at("library_estimate");
  };
  CHECK(library(" --nodes 2").at("points") == 25);
  CHECK(library(" --nodes 2") == library(""));

  const auto full = run_collsim("validate --scenario dgx-a100" + rest + " --nodes 1");
  CHECK(full.code == 2);
  CHECK(full.out.empty());
  CHECK(contains(full.err, "collsim: error: --nodes 1 with 16 ranks: 16 ranks per node, but a "
                           "node has 8 GPUs (scenario 'dgx-a100')\n"));
}

TEST_CASE("validate --nodes on a uniform topology says that it has no nodes",
          "[cli][validate][shape]") {
  const auto o = run_collsim("validate --scenario textbook --algorithm ring --format json --log " +
                             kA100 + " --nodes 2");
  INFO(o.err);
  REQUIRE(o.code == 0);
  CHECK(contains(o.err, "collsim: warning: --nodes 2: scenario 'textbook' has a uniform topology, "
                        "which has no nodes; the node count does not change its predictions\n"));
}

TEST_CASE("calibrate --nodes needs one rank count over its logs", "[cli][calibrate][shape]") {
  const auto o = run_collsim("calibrate --scenario dgx-a100 --log " + kA100 + " --log " + kOci +
                             " --nodes 2 -o /dev/null");
  CHECK(o.code == 2);
  CHECK(o.out.empty());
  CHECK(contains(o.err, "collsim: error: --nodes 2: the logs have 2 rank counts (8, 16); "
                        "calibrate fits one placement, so give --ranks too or calibrate each rank "
                        "count on its own\n"));
}

TEST_CASE("bad --ranks and --nodes values give one error line and exit 2", "[cli][shape][errors]") {
  struct Case {
    std::string args;
    std::string error;
  };
  const std::vector<Case> cases{
      {"--ranks 0", "collsim: error: --ranks: a log needs at least 1 rank, got 0\n"},
      {"--ranks -4", "collsim: error: --ranks: a log needs at least 1 rank, got -4\n"},
      {"--ranks=-4", "collsim: error: --ranks: a log needs at least 1 rank, got -4\n"},
      {"--ranks abc",
       "collsim: error: --ranks: expected a whole number of ranks like '16', got 'abc'\n"},
      {"--ranks 8.5",
       "collsim: error: --ranks: expected a whole number of ranks like '16', got '8.5'\n"},
      {"--ranks 99999999999", "collsim: error: --ranks: at most 16777216 ranks, got 99999999999\n"},
      {"--nodes 0", "collsim: error: --nodes: a log needs at least 1 node, got 0\n"},
      {"--nodes -2", "collsim: error: --nodes: a log needs at least 1 node, got -2\n"},
      {"--nodes two",
       "collsim: error: --nodes: expected a whole number of nodes like '2', got 'two'\n"},
      {"--ranks 8 --nodes 16",
       "collsim: error: --nodes 16 is more than --ranks 8: every node runs at least one rank\n"},
      {"--ranks 30 --nodes 4", "collsim: error: --ranks 30 does not divide evenly over --nodes 4: "
                               "ranks per node = ranks / nodes must be a whole number\n"},
      {"--nodes 3", "collsim: error: " + kA100 +
                        ":9: 8 ranks (from the device list) do not divide evenly over 3 nodes "
                        "(--nodes) (ranks per node = ranks / nodes)\n"},
  };
  const std::vector<std::string> commands{
      "ingest " + kA100,
      "validate --scenario dgx-a100 --log " + kA100,
      "calibrate --scenario dgx-a100 -o /dev/null --log " + kA100,
  };
  for (const auto& command : commands) {
    for (const auto& c : cases) {
      INFO(command << " " << c.args);
      const auto o = run_collsim(command + " " + c.args);
      CHECK(o.code == 2);
      CHECK(o.out.empty());
      CHECK(o.err == c.error);
    }
  }
}
