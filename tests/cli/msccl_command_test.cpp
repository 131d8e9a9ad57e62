// Issue 22 from the command line, MSCCL XML: `collsim import FILE.xml --check` on published files,
// `--algorithm file:PATH` beside the built-in algorithms, `schedule --format msccl-xml` and its
// exact round trip, and the errors (one line, exit 2; a wrong algorithm exit 1 with its step).

#include "cli_test_support.hpp"

#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <string>

namespace {

using collsim::testing::run_collsim;

const std::string kData = std::string(COLLSIM_TEST_DATA_DIR) + "/msccl/";
std::string scratch(const std::string& name) {
  return std::string(COLLSIM_SOURCE_DIR) + "/build/" + name;
}

} // namespace

TEST_CASE("import --check on a published MSCCL allreduce", "[cli][import][msccl]") {
  const auto o = run_collsim("import " + kData + "mt_ring_8_1.xml --check --bytes 8MiB");
  INFO(o.err);
  REQUIRE(o.code == 0);
  CHECK(o.out.find("collective allreduce\nalgorithm allreduce_ring_8channelsperring\nranks "
                   "8\nbytes 8388608\n") != std::string::npos);
  CHECK(o.err.find("allreduce_ring_8channelsperring allreduce on 8 GPUs, 8 channels, LL128 at "
                   "8388608 B (1048576 B "
                   "chunks, 2 loop iterations)") != std::string::npos);
  CHECK(o.err.find("checked: matched, no deadlock, no read before a write, the collective's "
                   "result") != std::string::npos);
}

TEST_CASE("import names the step of a wrong MSCCL file", "[cli][import][msccl]") {
  const auto o = run_collsim("import " + kData + "mt_ar_multi_1.xml");
  CHECK(o.code == 1);
  CHECK(o.err.find("warning: 'rrs' takes its local operand from i[5] but names i[4]") !=
        std::string::npos);
  CHECK(o.err.find("the algorithm is wrong:") != std::string::npos);
  CHECK(o.err.find("[gpu ") != std::string::npos);
  CHECK(o.err.find("mt_ar_multi_1.xml:") != std::string::npos);
  const auto unchecked = run_collsim("import " + kData + "mt_ar_multi_1.xml --no-check");
  CHECK(unchecked.code == 0);
  CHECK(unchecked.out.find("ranks 8\n") != std::string::npos);
}

TEST_CASE("algorithm file:PATH runs an MSCCL file beside the built-in algorithms",
          "[cli][msccl][sim]") {
  const auto o = run_collsim("sim --scenario scenarios/dgx-h100.yaml --collective allreduce "
                             "--algorithm nccl_ring --algorithm file:" +
                             kData + "mt_ring_8_1.xml --ranks 8 --sizes 1MiB,64MiB --format csv");
  INFO(o.err);
  REQUIRE(o.code == 0);
  CHECK(o.out.find("allreduce,nccl_ring,") != std::string::npos);
  CHECK(o.out.find("allreduce,file:" + kData + "mt_ring_8_1.xml,") != std::string::npos);
  // A rank count the file is not for is skipped with the reason.
  const auto wrong =
      run_collsim("sim --scenario scenarios/dgx-h100.yaml --algorithm file:" + kData +
                  "mt_ring_8_1.xml --ranks 4 --sizes 1MiB");
  CHECK(wrong.out.find("the file is for 8 GPUs (ngpus), not 4 ranks") != std::string::npos);
}

TEST_CASE("schedule --format msccl-xml, then import, gives the schedule back",
          "[cli][import][msccl]") {
  const std::string xml = scratch("msccl_round_trip.xml");
  const std::string args =
      "schedule --collective allreduce --algorithm ring --ranks 6 --bytes 6KiB";
  const auto out = run_collsim(args + " --format msccl-xml -o " + xml);
  INFO(out.err);
  REQUIRE(out.code == 0);
  const auto text = run_collsim(args);
  const auto back = run_collsim("import " + xml + " --check");
  INFO(back.err);
  REQUIRE(back.code == 0);
  CHECK(back.out == text.out);
  CHECK(back.err.find("the same data movement as its XML; checked") != std::string::npos);
  std::remove(xml.c_str());
}

TEST_CASE("MSCCL input errors: one line, exit 2", "[cli][msccl][errors]") {
  const std::string bad = scratch("msccl_bad.xml");
  {
    std::ofstream f(bad);
    f << "<algo name=\"x\" proto=\"Simple\" nchannels=\"1\" nchunksperloop=\"1\" ngpus=\"2\" "
         "coll=\"allreduce\" inplace=\"1\">\n  <gpu id=\"0\" i_chunks=\"1\" o_chunks=\"0\" "
         "s_chunks=\"0\">\n";
  }
  const auto o = run_collsim("import " + bad);
  CHECK(o.code == 2);
  CHECK(o.err.find(bad + ":") == 0);
  CHECK(o.err.find("not well-formed XML") != std::string::npos);
  const auto sim = run_collsim("sim --scenario scenarios/dgx-h100.yaml --algorithm file:" + bad +
                               " --ranks 2 --sizes 1MiB");
  CHECK(sim.code == 2);
  CHECK(sim.err.find("not well-formed XML") != std::string::npos);
  std::remove(bad.c_str());
  const auto missing = run_collsim("sim --scenario scenarios/dgx-h100.yaml --algorithm "
                                   "file:no_such.xml --ranks 2 --sizes 1MiB");
  CHECK(missing.code == 2);
  CHECK(missing.err.find("file:no_such.xml: cannot read the algorithm file") != std::string::npos);
  const auto custom =
      run_collsim("sim --scenario scenarios/dgx-h100.yaml --algorithm file:" + kData +
                  "mt_alltonext_2in.xml --ranks 24 --sizes 1MiB");
  CHECK(custom.code == 2);
  CHECK(custom.err.find("coll=\"custom\" is no collective collsim simulates") != std::string::npos);
  // A wrong algorithm is refused when it is named, never timed.
  const auto wrong =
      run_collsim("sim --scenario scenarios/dgx-h100.yaml --algorithm file:" + kData +
                  "mt_ar_multi_1.xml --ranks 8 --sizes 1MiB");
  CHECK(wrong.code == 2);
  CHECK(wrong.err.find("mt_ar_multi_1.xml: the algorithm is wrong") != std::string::npos);
  CHECK(wrong.err.find("combines misaligned elements") != std::string::npos);
  CHECK(wrong.err.find("[gpu 6 tb ") != std::string::npos);
  const auto kind = run_collsim("sim --scenario scenarios/dgx-h100.yaml --collective allgather "
                                "--algorithm file:" +
                                kData + "mt_ring_8_1.xml --ranks 8 --sizes 1MiB");
  CHECK(kind.code == 2);
  CHECK(kind.err.find("the file's algorithm is a allreduce, not a allgather") != std::string::npos);
  const auto size = run_collsim("import " + kData + "mt_ring_8_1.xml --bytes 100");
  CHECK(size.code == 2);
  CHECK(size.err.find("100 B is not a multiple of 8 B") != std::string::npos);
  const auto ranks = run_collsim("import " + kData + "mt_ring_8_1.xml --ranks 4");
  CHECK(ranks.code == 1);
  CHECK(ranks.err.find("the algorithm is for 8 GPUs (ngpus), not --ranks 4") != std::string::npos);
  const auto agents = run_collsim("schedule --algorithm nvls --ranks 8 --scenario dgx-h100 "
                                  "--format msccl-xml");
  CHECK(agents.code == 2);
  CHECK(agents.err.find("MSCCL XML cannot express this schedule: it has in-network agents") !=
        std::string::npos);
}

TEST_CASE("a scenario study names an MSCCL file beside built-in algorithms, and a GOAL file runs "
          "as a fixed schedule",
          "[cli][msccl][run]") {
  const std::string yaml = scratch("msccl_study.yaml");
  {
    std::ofstream f(yaml);
    f << "name: msccl-study\nbase: dgx-h100\nstudies:\n  - collective: allreduce\n"
         "    algorithms: [nccl_ring, file:" +
             kData + "mt_ring_8_1.xml]\n    ranks: [8]\n    sizes: [1MiB, 16MiB]\n";
  }
  const auto o = run_collsim("run " + yaml + " --format csv");
  INFO(o.err);
  REQUIRE(o.code == 0);
  CHECK(o.out.find("allreduce,file:" + kData + "mt_ring_8_1.xml,loggp,8,16777216,") !=
        std::string::npos);
  std::remove(yaml.c_str());
  const std::string goal = std::string(COLLSIM_TEST_DATA_DIR) + "/goal/pingpong_calc.goal";
  const auto g = run_collsim("sim --scenario scenarios/textbook.yaml --algorithm file:" + goal +
                             " --ranks 3 --sizes 1KiB,1MiB --format csv");
  INFO(g.err);
  REQUIRE(g.code == 0);
  CHECK(g.out.find(",file:" + goal + ",loggp,3,1024,") != std::string::npos);
  CHECK(g.out.find(",file:" + goal + ",loggp,3,1048576,") != std::string::npos);
}
