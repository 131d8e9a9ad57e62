// Issue 22 from the command line: `collsim schedule --format goal` and `collsim import` (LogGOPSim
// GOAL), their round trip, and their errors (one line, exit 2).

#include "cli_test_support.hpp"

#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <string>

namespace {

using collsim::testing::run_collsim;

const std::string kData = std::string(COLLSIM_TEST_DATA_DIR) + "/goal/";
/// Where a test writes a file collsim reads (collsim runs in the source directory).
std::string scratch(const std::string& name) {
  return std::string(COLLSIM_SOURCE_DIR) + "/build/" + name;
}

} // namespace

TEST_CASE("schedule --format goal then import gives the schedule back, checked",
          "[cli][import][goal]") {
  const std::string goal = scratch("import_round_trip.goal");
  const auto out = run_collsim("schedule --collective allreduce --algorithm nccl_ring --ranks 8 "
                               "--bytes 1MiB --scenario dgx-h100 --format goal -o " +
                               goal);
  INFO(out.err);
  REQUIRE(out.code == 0);
  const auto text = run_collsim("schedule --collective allreduce --algorithm nccl_ring --ranks 8 "
                                "--bytes 1MiB --scenario dgx-h100");
  REQUIRE(text.code == 0);
  const auto back = run_collsim("import " + goal + " --check");
  INFO(back.err);
  REQUIRE(back.code == 0);
  CHECK(back.out == text.out);
  CHECK(back.err.find("import_round_trip.goal: 8 ranks") != std::string::npos);
  CHECK(back.err.find("checked: matched, no deadlock, the collective's result") !=
        std::string::npos);
  std::remove(goal.c_str());
}

TEST_CASE("import reads hand-written GOAL and checks its matching", "[cli][import][goal]") {
  const auto o =
      run_collsim("import " + kData + "pingpong_calc.goal --check --collective bcast --bytes 1KiB");
  INFO(o.err);
  REQUIRE(o.code == 0);
  CHECK(o.out.find("collective bcast\nalgorithm goal\nranks 3\nbytes 1024\n") != std::string::npos);
  CHECK(o.err.find("3 ranks, 7 operations, 2 messages; checked: matched, no deadlock (GOAL "
                   "carries no data)") != std::string::npos);
  const auto us = run_collsim("import " + kData + "pingpong_calc.goal --time-unit us");
  REQUIRE(us.code == 0);
  CHECK(us.out.find("calc 2000000ns") != std::string::npos);
}

TEST_CASE("import's bad input: one positioned line, exit 2", "[cli][import][goal][errors]") {
  const std::string bad = scratch("import_bad.goal");
  {
    std::ofstream f(bad);
    f << "num_ranks 2\nrank 0 {\n  send 8b to 1\n}\nrank 1 {\n  recv 8b from 1\n}\n";
  }
  const auto o = run_collsim("import " + bad);
  CHECK(o.code == 2);
  CHECK(o.err == bad + ":6:3: error: rank 1 receives from itself\n");
  std::remove(bad.c_str());
  const auto xml = run_collsim("import algo.xml");
  CHECK(xml.code == 2);
  CHECK(xml.err.find("algo.xml: cannot open the file") != std::string::npos);
  const auto ext = run_collsim("import algo.json");
  CHECK(ext.code == 2);
  CHECK(ext.err.find("unknown schedule format '.json'") != std::string::npos);
  const auto missing = run_collsim("import no_such_file.goal");
  CHECK(missing.code == 2);
  CHECK(missing.err.find("no_such_file.goal: cannot open the file") != std::string::npos);
  const auto fmt = run_collsim("schedule --algorithm ring --format xml");
  CHECK(fmt.code == 2);
  CHECK(fmt.err.find("unknown schedule format 'xml'") != std::string::npos);
}

TEST_CASE("schedule --format chakra writes one ET file per rank, and says why it cannot",
          "[cli][chakra]") {
  const std::string prefix = scratch("chakra_ring");
  const auto o = run_collsim("schedule --algorithm ring --ranks 4 --bytes 1MiB --scenario "
                             "cpu-hdr100-epyc --format chakra -o " +
                             prefix);
  INFO(o.err);
  REQUIRE(o.code == 0);
  CHECK(o.err.find("wrote 4 Chakra ET files") != std::string::npos);
  for (int r = 0; r < 4; ++r) {
    const std::string path = prefix + "." + std::to_string(r) + ".et";
    std::ifstream f(path, std::ios::binary);
    CHECK(f.good());
    f.close();
    std::remove(path.c_str());
  }
  const auto no_prefix = run_collsim("schedule --algorithm ring --format chakra");
  CHECK(no_prefix.code == 2);
  CHECK(no_prefix.err.find("give their prefix with -o PREFIX") != std::string::npos);
  const auto agents = run_collsim("schedule --algorithm nvls --ranks 8 --scenario dgx-h100 "
                                  "--format chakra -o " +
                                  prefix);
  CHECK(agents.code == 2);
  CHECK(agents.err.find("Chakra has no in-network agent") != std::string::npos);
}
