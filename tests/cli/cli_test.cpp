// Runs the built `collsim` binary: exit codes, JSON results and error messages as users see them.

#include "collsim/core/schedule.hpp"
#include "collsim/core/verify.hpp"

#include "cli_test_support.hpp"
#include <array>

#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace {

using collsim::testing::Output;
using collsim::testing::run_collsim;

} // namespace

TEST_CASE("collsim sim prints one JSON object with a results array", "[cli]") {
  const auto o =
      run_collsim("sim --scenario scenarios/textbook.yaml --collective allreduce "
                  "--algorithm ring --ranks 16 --sizes 8B:1GiB:x2 --engine loggp --format json");
  INFO(o.err);
  REQUIRE(o.code == 0);
  const auto j = nlohmann::json::parse(o.out);
  const auto& results = j.at("results");
  REQUIRE(results.size() == 28);
  const auto& last = results.back();
  CHECK(last.at("collective") == "allreduce");
  CHECK(last.at("algorithm") == "ring");
  CHECK(last.at("engine") == "loggp");
  CHECK(last.at("ranks") == 16);
  CHECK(last.at("bytes") == 1073741824);
  // 2(p-1) alpha + 2(p-1)/p n beta + (p-1)/p n gamma with alpha 2 us, 10 GB/s, 20 GB/s.
  const double n = 1073741824.0;
  const double t = 30 * 2e-6 + 30.0 / 16 * n / 10e9 + 15.0 / 16 * n / 20e9;
  CHECK(last.at("time_us").get<double>() == Approx(t * 1e6).epsilon(1e-9));
  CHECK(last.at("algbw_GBps").get<double>() == Approx(n / t / 1e9).epsilon(1e-9));
  CHECK(last.at("busbw_GBps").get<double>() == Approx(n / t / 1e9 * 30 / 16).epsilon(1e-9));
}

TEST_CASE("the analytic engine gives the closed form through the CLI", "[cli]") {
  const auto o = run_collsim("sim --scenario scenarios/textbook.yaml --algorithm rabenseifner "
                             "--ranks 8 --sizes 1MiB --engine analytic --format csv");
  INFO(o.err);
  REQUIRE(o.code == 0);
  CHECK(o.out.starts_with("collective,algorithm,engine,ranks,bytes,count,type,root,time_us,"));
  CHECK(o.out.find("allreduce,rabenseifner,analytic,8,1048576,262144,float,") != std::string::npos);
}

TEST_CASE("an unknown algorithm exits 2 and suggests the closest name", "[cli]") {
  const auto o =
      run_collsim("sim --scenario scenarios/textbook.yaml --algorithm rign --ranks 4 --sizes 1KiB");
  CHECK(o.code == 2);
  CHECK(o.out.empty());
  CHECK(o.err ==
        "collsim: error: unknown allreduce algorithm 'rign' (did you mean 'ring'?); valid "
        "values are: reduce_bcast, recursive_doubling, ring, rabenseifner, basic_linear, "
        "segmented_ring, allgather_reduce, rab2, recursive_multiplying, recexch, "
        "k_reduce_scatter_allgather, tree, sra_knomial, hcoll, han, mpich_ch4, recursive_knomial, "
        "arrival_tree, "
        "swing_latency, "
        "swing_bandwidth, "
        "ring_reordered, collnet_direct, collnet_chain, nvls, sharp, two_level, "
        "hierarchical_ring, torus, nccl_ring, nccl_tree, nvls_tree\n");
}

TEST_CASE("bad flag values exit 2 with the flag named", "[cli]") {
  const auto sizes = run_collsim(
      "sim --scenario scenarios/textbook.yaml --algorithm ring --ranks 4 --sizes 1KiB:8B:x2");
  CHECK(sizes.code == 2);
  CHECK(sizes.err == "collsim: error: --sizes: size sweep '1KiB:8B:x2' ends before it starts\n");
  const auto ranks =
      run_collsim("sim --scenario scenarios/textbook.yaml --algorithm ring --ranks 0 --sizes 1KiB");
  CHECK(ranks.code == 2);
  CHECK(ranks.err == "collsim: error: --ranks: a collective needs at least 1 rank, got 0\n");
  const auto missing = run_collsim("sim --ranks 4");
  CHECK(missing.code == 2);
  CHECK(missing.err.find("--algorithm is required") != std::string::npos);
}

TEST_CASE("a sweep's memory budget (--max-memory) is a size above 0 and does not change the output",
          "[cli]") {
  const std::string sim =
      "sim --scenario scenarios/textbook.yaml --algorithm ring,rabenseifner --ranks 4,16 "
      "--sizes 8B:1MiB:x16 --threads 2";
  const auto zero = run_collsim(sim + " --max-memory 0");
  CHECK(zero.code == 2);
  CHECK(zero.err == "collsim: error: --max-memory: must be more than 0 bytes\n");
  const auto word = run_collsim(sim + " --max-memory plenty");
  CHECK(word.code == 2);
  CHECK(word.err.rfind("collsim: error: --max-memory: ", 0) == 0);
  const auto plain = run_collsim(sim);
  const auto tight = run_collsim(sim + " --max-memory 1B");
  REQUIRE(plain.code == 0);
  CHECK(tight.code == 0);
  CHECK(tight.out == plain.out);
  const auto tune = run_collsim("tune --scenario dgx-a100 --ranks 8 --sizes 1KiB:1MiB:x8 "
                                "--format ompi-rules --max-memory 1KiB");
  CHECK(tune.code == 0);
  CHECK(tune.out == run_collsim("tune --scenario dgx-a100 --ranks 8 --sizes 1KiB:1MiB:x8 "
                                "--format ompi-rules")
                        .out);
}

TEST_CASE("a broken scenario exits 2 with file:line:column", "[cli]") {
  const auto o = run_collsim("run tests/data/cli/bad_bandwidth.yaml");
  CHECK(o.code == 2);
  CHECK(o.err == "tests/data/cli/bad_bandwidth.yaml:5:14: error: topology.bandwidth: expected a "
                 "bandwidth like '25 GB/s' or '200 Gb/s', got '10'\n");
  const auto missing = run_collsim("run tests/data/cli/does_not_exist.yaml");
  CHECK(missing.code == 2);
  CHECK(missing.err.starts_with(
      "tests/data/cli/does_not_exist.yaml: error: cannot open scenario file"));
}

TEST_CASE("collsim run prints a table per study and a crossover summary", "[cli]") {
  const auto o = run_collsim("run scenarios/textbook.yaml");
  INFO(o.err);
  REQUIRE(o.code == 0);
  CHECK(o.out.find("# collsim run: scenario 'textbook'") != std::string::npos);
  CHECK(o.out.find("algbw") != std::string::npos);
  CHECK(o.out.find("# Crossover summary") != std::string::npos);
  CHECK(o.out.find("recursive_doubling") != std::string::npos);
}

TEST_CASE("collsim schedule prints text that parses back and verifies", "[cli]") {
  const auto o =
      run_collsim("schedule --collective allreduce --algorithm ring --ranks 4 --bytes 1MiB");
  REQUIRE(o.code == 0);
  const auto s = collsim::core::parse_schedule(o.out);
  CHECK(s.ranks() == 4);
  CHECK(s.header().algorithm == "ring");
  CHECK(s.op_count() == 4 * 4 * 3);
  CHECK(collsim::core::check_semantics(s).ok());
}

TEST_CASE("collsim verify checks the registry and exits 0 when all is well", "[cli]") {
  const auto o = run_collsim("verify --ranks 1..12");
  INFO(o.err);
  CHECK(o.code == 0);
  CHECK(o.out.find("all schedules verified") != std::string::npos);
  CHECK(o.out.find("rabenseifner") != std::string::npos);
}

TEST_CASE("collsim algorithms lists names, aliases and costs, as JSON too", "[cli]") {
  const auto o = run_collsim("algorithms --collective allreduce --format json");
  REQUIRE(o.code == 0);
  const auto j = nlohmann::json::parse(o.out);
  bool found = false;
  for (const auto& a : j.at("algorithms")) {
    if (a.at("name") == "ring") {
      found = true;
      CHECK(a.at("collective") == "allreduce");
      CHECK(a.at("cost").get<std::string>().find("(p-1)") != std::string::npos);
      CHECK(std::find(a.at("aliases").begin(), a.at("aliases").end(), "ompi:4") !=
            a.at("aliases").end());
    }
  }
  CHECK(found);
}

TEST_CASE("every command has --help and exits 0", "[cli]") {
  for (const char* cmd : {"", "run ", "sim ", "algorithms ", "schedule ", "verify "}) {
    const auto o = run_collsim(std::string(cmd) + "--help");
    INFO(cmd);
    CHECK(o.code == 0);
    CHECK(o.out.find("Usage") != std::string::npos);
  }
}

TEST_CASE("the README's first example shows the real output of the command it shows",
          "[cli][docs]") {
  std::ifstream f(std::string(COLLSIM_SOURCE_DIR) + "/README.md");
  REQUIRE(f);
  const std::string readme((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  const std::string prompt = "$ collsim sim --scenario scenarios/textbook.yaml";
  const auto start = readme.find(prompt);
  REQUIRE(start != std::string::npos);
  // The command may continue on the next line after a backslash.
  const auto first_nl = readme.find('\n', start);
  auto cmd_end = first_nl;
  std::string command = readme.substr(start + 2, first_nl - start - 2);
  if (!command.empty() && command.back() == '\\') {
    cmd_end = readme.find('\n', first_nl + 1);
    command.pop_back();
    command += readme.substr(first_nl + 1, cmd_end - first_nl - 1);
  }
  const auto block_end = readme.find("```", cmd_end);
  REQUIRE(block_end != std::string::npos);
  const std::string shown = readme.substr(cmd_end + 1, block_end - cmd_end - 1);
  const auto o = run_collsim(command.substr(std::string("collsim ").size()));
  REQUIRE(o.code == 0);
  CHECK(o.out == shown);
}

TEST_CASE("docs/algorithms.md is the registry's current markdown", "[cli][docs]") {
  std::ifstream f(std::string(COLLSIM_SOURCE_DIR) + "/docs/algorithms.md");
  REQUIRE(f);
  const std::string doc((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  const auto o = run_collsim("algorithms --format markdown");
  REQUIRE(o.code == 0);
  INFO("docs/algorithms.md is stale: regenerate it with "
       "`build/release/cli/collsim algorithms --format markdown > docs/algorithms.md`");
  CHECK(o.out == doc);
}

TEST_CASE("no test case name holds a semicolon, where ctest cuts it and runs nothing",
          "[cli][tests]") {
  // catch_discover_tests hands ctest a list separated by ';': a name with one becomes two tests
  // whose filters match no test case, and both "pass" without running anything.
  const std::regex name(R"re(TEST_CASE\(\s*((?:"(?:[^"\\]|\\.)*"\s*)+))re");
  std::vector<std::string> bad;
  for (const auto& entry :
       std::filesystem::recursive_directory_iterator(std::string(COLLSIM_SOURCE_DIR) + "/tests")) {
    if (entry.path().extension() != ".cpp") {
      continue;
    }
    std::ifstream f(entry.path());
    const std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    for (auto it = std::sregex_iterator(text.begin(), text.end(), name);
         it != std::sregex_iterator(); ++it) {
      if ((*it)[1].str().find(';') != std::string::npos) {
        bad.push_back(entry.path().filename().string() + ": " + (*it)[1].str());
      }
    }
  }
  CAPTURE(bad);
  CHECK(bad.empty());
}
