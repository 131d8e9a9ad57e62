// Workloads from NCCL_DEBUG=INFO output (io/workload_import.hpp): one phase per distinct call of
// one process, nccl-tests' byte convention, and one positioned error per bad line.

#include "collsim/core/errors.hpp"
#include "collsim/io/workload_import.hpp"
#include "collsim/io/workload_loader.hpp"

#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

namespace {

using collsim::io::import_nccl_debug;
using collsim::io::NcclDebugImport;

/// A line as NCCL 2.x prints it (src/enqueue.cc), for process host:pid on device dev.
std::string line(const std::string& proc, int dev, const std::string& op, int op_count,
                 std::uint64_t count, int dtype, int nranks) {
  return proc + ":" + std::to_string(dev + 100) + " [" + std::to_string(dev) + "] NCCL INFO " + op +
         ": opCount " + std::to_string(op_count) +
         " sendbuff 0x7f1a2c000000 recvbuff 0x7f1a2c000000 count " + std::to_string(count) +
         " datatype " + std::to_string(dtype) +
         " op 0 root 0 comm 0x55d0c8e1a2b0 [nranks=" + std::to_string(nranks) +
         "] stream 0x55d0c8f00000\n";
}

std::string error_of(const std::string& text, const NcclDebugImport& options = {}) {
  try {
    (void)import_nccl_debug(text, "run.log", options);
  } catch (const collsim::core::Error& e) {
    return e.what();
  }
  return "(no error)";
}

} // namespace

TEST_CASE("NCCL debug lines of one process become one phase per distinct call",
          "[io][workload][import]") {
  std::string log = "node1:7:7 [0] NCCL INFO NCCL version 2.18.3+cuda12.2\n";
  for (int step = 0; step < 2; ++step) {
    for (int i = 0; i < 3; ++i) {
      log += line("node1:7", 0, "AllReduce", 4 * step + i, 262144, 9, 16); // bf16
      log += line("node1:8", 1, "AllReduce", 4 * step + i, 262144, 9, 16); // another rank
    }
    log += line("node1:7", 0, "AllGather", 4 * step + 3, 1024, 7, 8); // float, 8 ranks
    log += line("node1:7", 0, "Send", 0, 4096, 6, 2);
    log += line("node1:7", 0, "Recv", 0, 4096, 6, 2);
    log += line("node1:7", 0, "AllReduce", 9, 0, 7, 16); // count 0: nothing moves
  }
  NcclDebugImport options;
  options.steps = 2;
  options.name = "two-steps";
  const auto s = import_nccl_debug(log, "run.log", options);
  CHECK(s.process == "node1:7");
  CHECK(s.others == std::vector<std::string>{"node1:8"});
  CHECK(s.lines == 14);
  CHECK(s.empty_calls == 2);
  REQUIRE(s.calls.size() == 3);
  CHECK(s.calls[0].collective == "allreduce");
  CHECK(s.calls[0].bytes == 262144 * 2);
  CHECK(s.calls[0].calls == 6);
  CHECK(s.calls[1].collective == "allgather");
  CHECK(s.calls[1].bytes == 1024 * 4 * 8); // one rank's count x nranks: nccl-tests' S
  CHECK(s.calls[2].collective == "bcast"); // a Send: one message between two ranks
  const auto w = collsim::io::parse_workload(s.yaml, "imported.yaml");
  CHECK(w.name == "two-steps");
  REQUIRE(w.phases.size() == 3);
  CHECK(w.phases[0].calls == 3); // 6 calls over 2 steps
  CHECK(w.phases[0].group == collsim::core::WorkloadGroup::world);
  CHECK(w.phases[0].ranks == 16); // the communicator as logged
  CHECK(w.phases[1].ranks == 8);  // a smaller communicator: the first 8 ranks
  CHECK(w.phases[2].group == collsim::core::WorkloadGroup::pair);
  CHECK(w.phases[2].bytes.value == 8192);

  NcclDebugImport other;
  other.process = "node1:8";
  const auto s8 = import_nccl_debug(log, "run.log", other);
  CHECK(s8.lines == 6);
  CHECK(s8.calls.size() == 1);
}

TEST_CASE("bad NCCL debug logs get one positioned error", "[io][workload][import][errors]") {
  CHECK(error_of("hello\nworld\n") ==
        "run.log:1:1: error: no NCCL collective lines ('NCCL INFO AllReduce: opCount "
        "...'): run with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=COLL");
  // Cut in the middle of the second line.
  const std::string full =
      line("n:1", 0, "AllReduce", 0, 8, 7, 2) + line("n:1", 0, "AllReduce", 1, 8, 7, 2);
  CHECK(error_of(full.substr(0, full.size() - 40)) ==
        "run.log:2:1: error: an NCCL collective line without its fields (expected '... count N "
        "datatype D op O "
        "root R comm C [nranks=N] stream S'; a truncated line?)");
  CHECK(error_of("0: " + line("n:1", 0, "AllReduce", 0, 8, 12, 2)) ==
        "run.log:1:112: error: datatype 12 is not an ncclDataType_t (0 to 11)");
  CHECK(error_of(line("n:1", 0, "AllToAll", 0, 8, 7, 2)) ==
        "run.log:1:23: error: unknown NCCL operation 'AllToAll'; valid values are: AllReduce, "
        "Broadcast, Reduce, "
        "AllGather, ReduceScatter, Send, Recv");
  // Found by fuzzing: digits past 64 bits (std::stoull threw) and a size past 64 bits (it wrapped).
  std::string huge = line("n:1", 0, "AllReduce", 0, 8, 7, 2);
  huge.replace(huge.find(" count 8 ") + 7, 1, "99999999999999999999999");
  CHECK(error_of(huge) == "run.log:1:" + std::to_string(huge.find("9999") + 1) +
                              ": error: 99999999999999999999999 is out of range");
  const std::string wraps = line("n:1", 0, "AllReduce", 0, 4611686018427387904ULL, 7, 2);
  CHECK(error_of(wraps) == "run.log:1:" + std::to_string(wraps.find("4611") + 1) +
                               ": error: count 4611686018427387904 x 2 ranks is beyond 64-bit "
                               "sizes and 32-bit rank counts");
  NcclDebugImport missing;
  missing.process = "n:9";
  CHECK(error_of(line("n:1", 0, "AllReduce", 0, 8, 7, 2), missing) ==
        "run.log:1:1: error: no NCCL collective lines of process n:9");
}

TEST_CASE("NCCL debug lines are found where NCCL's prefix is, wherever the line starts",
          "[io][workload][import]") {
  const std::string call = line("gpu-node1:7", 0, "AllReduce", 0, 1024, 7, 4);
  // Program output glued in front (no newline), a CRLF ending, and a false prefix earlier on the
  // line ("x] NCCL " without host:pid:tid [dev]): the first valid prefix is the line's.
  std::string log = call;
  log += "loss 0.25 step 3noise] NCCL INFO AllReduce: opCount 9 then" +
         call.substr(0, call.size() - 1) + "\r\n";
  log += "gpu-node1:7:9 [1] NCCL INFO Init COMPLETE\n";   // a second device of the process
  log += "host:x:1 [0] NCCL INFO AllReduce: opCount 1\n"; // not a prefix: pid is not a number
  const auto s = import_nccl_debug(log, "run.log", {});
  // The glued line's host reads "thengpu-node1": a longer host ending in the process's is its own.
  CHECK(s.process == "gpu-node1:7");
  CHECK(s.others.empty());
  CHECK(s.lines == 2);
  CHECK(s.ranks_in_process == 2);
  REQUIRE(s.calls.size() == 1);
  CHECK(s.calls[0].calls == 2);
  CHECK(s.calls[0].bytes == 4096);
  // The error column is the prefix's, where the glued host name starts.
  std::string cut = "ab " + call.substr(0, call.find(" datatype"));
  CHECK(error_of(cut).rfind("run.log:1:4: error: an NCCL collective line without its fields", 0) ==
        0);
}

namespace {

std::string data(const std::string& name) {
  return std::string(COLLSIM_TEST_DATA_DIR) + "/workloads/" + name;
}

std::string text_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

} // namespace

TEST_CASE("real NCCL debug logs: nccl-tests on 2 A100 (one process, 2 GPUs) and a Megatron-LM rank",
          "[io][workload][import]") {
  // all_reduce_perf -g 2: one process drives both ranks, 990 AllReduce lines over 11 sizes.
  const std::string nt = "nccl-debug-coll-nccltests-allreduce-2xA100-nccl2.27.7.log";
  const auto s = import_nccl_debug(text_of(data(nt)), nt, {});
  CHECK(s.process == "mew0:64904");
  CHECK(s.lines == 990); // 22 of them glued to the end of the benchmark's own output lines
  CHECK(s.ranks_in_process == 2);
  REQUIRE(s.calls.size() == 11);
  CHECK(s.calls.front().bytes == 8388608);
  CHECK(s.calls.back().bytes == 8589934592ULL);
  const auto w = collsim::io::parse_workload(s.yaml, nt);
  for (const auto& p : w.phases) {
    CHECK(p.calls == 45); // 90 lines per size, over the process's 2 ranks
  }
  // The last 76 lines of rank 0 of a Megatron-LM run on 4 GPUs.
  const std::string mg = "nccl-debug-coll-megatron-4xgpu-rank0-tail.log";
  const auto m = import_nccl_debug(text_of(data(mg)), mg, {});
  CHECK(m.lines == 62);
  REQUIRE(m.calls.size() == 7);
  CHECK(m.calls[0].op == "AllReduce");
  CHECK(m.calls[0].dtype == "half");
  CHECK(m.calls[0].calls == 49);
  CHECK(m.calls[6].op == "AllGather");
  CHECK(m.calls[6].bytes == 16); // 4 int8 per rank x 4 ranks
  const auto mw = collsim::io::parse_workload(m.yaml, mg);
  CHECK(mw.phases[0].ranks == 2); // 2 of the 4 ranks of the largest communicator
}

TEST_CASE("real PyTorch profiler traces: DDP buckets per ProfilerStep, vLLM's allgather",
          "[io][workload][import]") {
  // HolisticTraceAnalysis's 2 x A100 trace: 3 profiled steps, 5 gradient buckets and 2 buffer
  // broadcasts a step, and waits that move nothing.
  const auto s = collsim::io::import_kineto_trace(
      data("kineto-hta-nccl-data-2xA100-allreduce-broadcast.json.gz"), {});
  CHECK(s.rank == 0);
  CHECK(s.world == 2);
  CHECK(s.steps == 3);
  CHECK(s.skipped.at("wait") == 6);
  REQUIRE(s.calls.size() == 7);
  CHECK(s.calls[0].collective == "allreduce");
  CHECK(s.calls[0].bytes == 2049000ULL * 4);
  CHECK(s.calls[0].calls == 3);
  CHECK(s.calls[6].collective == "bcast");
  CHECK(s.calls[6].bytes == 53 * 8); // Long
  const auto w = collsim::io::parse_workload(s.yaml, "hta.yaml");
  CHECK(w.phases[0].calls == 1);
  // TraceLens's B200 vLLM trace: one _allgather_base, nccl-tests' S = the gathered output.
  const auto b = collsim::io::import_kineto_trace(
      data("kineto-tracelens-b200-8rank-vllm-allgather.json.gz"), {});
  REQUIRE(b.calls.size() == 1);
  CHECK(b.calls[0].collective == "allgather");
  CHECK(b.calls[0].bytes == 201088 * 2);
  CHECK(b.steps == 1);
}

TEST_CASE("bad profiler traces get one positioned error", "[io][workload][import][errors]") {
  const auto error = [](const std::string& path) {
    try {
      (void)collsim::io::import_kineto_trace(path, {});
    } catch (const collsim::core::Error& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  // HTA's sampled 128-rank trace is from a PyTorch that recorded no sizes.
  const std::string old = data("kineto-hta-sampled-rank0-128ranks-alltoall.json.gz");
  CHECK(
      error(old) ==
      old +
          ":1:1: error: the trace's 8 record_param_comms events carry no collective name or sizes "
          "(PyTorch records them from 2.1 on)");
  const std::string dir = std::string(COLLSIM_SOURCE_DIR) + "/build/";
  const std::string gz = text_of(data("kineto-hta-nccl-data-2xA100-allreduce-broadcast.json.gz"));
  std::ofstream(dir + "cut.json.gz", std::ios::binary) << gz.substr(0, gz.size() / 2);
  CHECK(error(dir + "cut.json.gz").find("cut.json.gz: error: not a complete gzip file") !=
        std::string::npos);
  std::ofstream(dir + "bad.json") << "{\"traceEvents\": [\n  {\"name\": \"x\",\n";
  CHECK(error(dir + "bad.json").find("bad.json:3:1: error: not a complete JSON trace") !=
        std::string::npos);
  std::ofstream(dir + "empty.json") << "{\"traceEvents\": []}\n";
  CHECK(error(dir + "empty.json") ==
        dir + "empty.json:1:1: error: no collective calls in the trace (no "
              "record_param_comms events): profile a torch.distributed job with "
              "torch.profiler");
  // Found by fuzzing: three ways nlohmann's other exceptions, or a silently wrapped size, got out.
  std::ofstream(dir + "huge_number.json") << "{\"traceEvents\": [],\n \"x\": 1e337}\n";
  CHECK(error(dir + "huge_number.json") ==
        dir + "huge_number.json:2:7: error: not a JSON trace collsim can read: number overflow "
              "parsing '1e337'");
  std::ofstream(dir + "rank_string.json")
      << "{\"traceEvents\": [], \"distributedInfo\": {\"rank\": \"0\"}}\n";
  CHECK(error(dir + "rank_string.json") ==
        dir + "rank_string.json: error: a field of the trace has an unexpected type: type must "
              "be number, but is string");
  std::ofstream(dir + "huge_world.json")
      << "{\"traceEvents\": [], \"distributedInfo\": {\"rank\": 0, \"world_size\": 2.5e49}}\n";
  CHECK(error(dir + "huge_world.json") ==
        dir + "huge_world.json: error: distributedInfo.world_size is 2.5e+49, not a rank count "
              "(0 to 4294967295)");
  std::ofstream(dir + "negative_rank.json")
      << "{\"traceEvents\": [], \"distributedInfo\": {\"rank\": -1}}\n";
  CHECK(error(dir + "negative_rank.json") ==
        dir + "negative_rank.json: error: distributedInfo.rank is -1, not a rank count (0 to "
              "4294967295)");
  std::ofstream(dir + "huge_call.json")
      << "{\"traceEvents\": [{\"name\": \"record_param_comms\", \"args\": {\"Collective "
         "name\": \"allreduce\", \"dtype\": \"Float\", \"In msg nelems\": "
         "9223372036854775807, \"Out msg nelems\": 1, \"Group size\": 8}}]}\n";
  CHECK(error(dir + "huge_call.json") == dir +
                                             "huge_call.json: error: record_param_comms: allreduce "
                                             "of 9223372036854775807 elements in a group "
                                             "of 8 is beyond 64-bit sizes and 32-bit rank counts");
  for (const char* f :
       {"cut.json.gz", "bad.json", "empty.json", "huge_number.json", "rank_string.json",
        "huge_world.json", "negative_rank.json", "huge_call.json"}) {
    std::remove((dir + f).c_str());
  }
}
