// NCCL environment variables a log shows its run set (io::LogInfo::env): the forms users write
// them in (export, a prefix of the command, mpirun -x, Hydra -genv, srun --export,
// NCCL_DEBUG=INFO's "set by environment" lines), where each is, which run it belongs to, and what
// is not a setting.

#include "collsim/io/logs.hpp"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

namespace {

using collsim::io::EnvSetting;
using collsim::io::parse_log;
using collsim::io::ParsedLog;

const std::string kTable =
    "# nThread 1 nGpus 1 minBytes 1048576 maxBytes 2097152 step: 2(factor) warmup iters: 5 "
    "iters: 20 agg iters: 1 validation: 1 graph: 0\n"
    "#\n"
    "#       size         count      type   redop    root     time   algbw   busbw #wrong     "
    "time   algbw   busbw #wrong\n"
    "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            "
    "(us)  (GB/s)  (GB/s)\n"
    "     1048576        262144     float     sum      -1    60.00   17.48   30.58      0    "
    "60.00   17.48   30.58      0\n"
    "# Avg bus bandwidth    : 30.58\n";

std::string names(const std::vector<EnvSetting>& env) {
  std::string out;
  for (const EnvSetting& e : env) {
    out += (out.empty() ? "" : " ") + e.name + "=" + e.value + "@" + std::to_string(e.line) + ":" +
           std::to_string(e.column);
  }
  return out;
}

} // namespace

TEST_CASE("a log's NCCL variables: exports hold for later runs, a command's and NCCL's INFO "
          "lines for their own run",
          "[io][logs][env]") {
  const std::string text =
      "$ export NCCL_DEBUG=INFO\n"                           // 1
      "# export NCCL_ALGO=Tree   (a comment sets nothing)\n" // 2
      "$ NCCL_ALGO=Ring mpirun -np 8 -x NCCL_PROTO=\"Simple\" -x NCCL_IB_HCA=$HCA "
      "./all_reduce_perf -b 1M -e 2M -g 1\n" +                                           // 3
      kTable +                                                                           // 4-9
      "$ export NCCL_MAX_NCHANNELS=4\n"                                                  // 10
      "$ mpiexec -genv NCCL_MIN_NCHANNELS 2 -n 8 ./all_reduce_perf -b 1M -e 2M\n"        // 11
      "node1:1:1 [0] NCCL INFO NCCL_NVLS_ENABLE set by environment to 0\n" +             // 12
      kTable +                                                                           // 13-18
      "$ srun -n 8 --export=ALL,NCCL_COLLNET_ENABLE=1 ./all_reduce_perf -b 1M -e 2M\n" + // 19
      kTable;
  const ParsedLog log = parse_log(text, "env.txt");
  REQUIRE(log.runs.size() == 3);
  CHECK(names(log.runs[0].env) == "NCCL_DEBUG=INFO@1:10 NCCL_ALGO=Ring@3:3 NCCL_PROTO=Simple@3:34");
  CHECK(names(log.runs[1].env) == "NCCL_DEBUG=INFO@1:10 NCCL_MAX_NCHANNELS=4@10:10 "
                                  "NCCL_MIN_NCHANNELS=2@11:17 NCCL_NVLS_ENABLE=0@12:25");
  CHECK(names(log.runs[2].env) ==
        "NCCL_DEBUG=INFO@1:10 NCCL_MAX_NCHANNELS=4@10:10 NCCL_COLLNET_ENABLE=1@19:26");
  // A value the shell computes is not read, and the log says so at its line.
  bool warned = false;
  for (const auto& w : log.warnings) {
    warned = warned || (w.line == 3 && w.text.find("NCCL_IB_HCA=$HCA: the shell computes this "
                                                   "value") != std::string::npos);
  }
  CHECK(warned);
}

TEST_CASE("a log without NCCL variables has none, and shell variables that merely mention NCCL "
          "are not settings",
          "[io][logs][env]") {
  const std::string text = "$ export NCCL_LIB_DIR_X=/opt/nccl MY_NCCL_ALGO=Tree nccl_algo=ring\n"
                           "$ ./all_reduce_perf -b 1M -e 2M -g 8\n" +
                           kTable;
  const ParsedLog log = parse_log(text, "plain.txt");
  REQUIRE(log.runs.size() == 1);
  CHECK(names(log.runs[0].env) == "NCCL_LIB_DIR_X=/opt/nccl@1:10");
}

TEST_CASE("a launch command's Open MPI MCA parameters, in every form, up to the benchmark",
          "[io][logs][env][mca]") {
  const std::string osu = "# OSU MPI Allreduce Latency Test v7.4\n"
                          "# Datatype: MPI_CHAR.\n"
                          "# Size       Avg Latency(us)\n"
                          "1024                   30.00\n";
  const std::string text =
      "$ OMPI_MCA_coll_tuned_use_dynamic_rules=1 mpirun -np 16 --mca "
      "coll_tuned_allreduce_algorithm 4 -mca btl ^openib -x "
      "OMPI_MCA_coll_tuned_allreduce_algorithm_segmentsize=64k -x OMPI_MCA_pml=$PML "
      "./osu_allreduce --mca not_mine 1\n" +                                        // 1
      osu +                                                                         // 2-5
      "$ srun -n 16 --export=ALL,OMPI_MCA_coll_tuned_allreduce_algorithm=ring \\\n" // 6
      "   ./osu_allreduce\n" +                                                      // 7
      osu +                                                                         // 8-11
      "$ mpiexec -genv OMPI_MCA_coll_tuned_use_dynamic_rules true -n 16 /opt/osu/osu_allreduce\n" +
      osu;
  const ParsedLog log = parse_log(text, "mca.txt");
  REQUIRE(log.runs.size() == 3);
  CHECK(names(log.runs[0].mca) ==
        "coll_tuned_use_dynamic_rules=1@1:12 coll_tuned_allreduce_algorithm=4@1:63 "
        "btl=^openib@1:101 coll_tuned_allreduce_algorithm_segmentsize=64k@1:125");
  CHECK(names(log.runs[1].mca) == "coll_tuned_allreduce_algorithm=ring@6:36");
  CHECK(names(log.runs[2].mca) == "coll_tuned_use_dynamic_rules=true@12:26");
  // NCCL's variables are not MCA parameters, nor the other way round.
  CHECK(log.runs[0].env.empty());
}
