// The measured-log parsers on the real logs of tests/data/logs/ (provenance in its README.md) and
// on small texts that break them on purpose. Every expected number below was read by hand from
// the log file named in the test, at the line given in the comment.

#include "collsim/core/errors.hpp"
#include "collsim/io/logs.hpp"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace {

using collsim::core::CollectiveKind;
using collsim::core::LogParseError;
using collsim::io::LogFormat;
using collsim::io::LogWarning;
using collsim::io::Measurement;
using collsim::io::parse_log;
using collsim::io::ParsedLog;

std::string logs_dir() {
  return std::string(COLLSIM_TEST_DATA_DIR) + "/logs";
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

/// A log of tests/data/logs, named by its file name alone in positions.
ParsedLog parse_data(const std::string& name) {
  return parse_log(read_text(logs_dir() + "/" + name), name);
}

/// The measurement of one side of the row at `line`.
const Measurement& at(const ParsedLog& log, std::size_t line, bool in_place = false) {
  for (const Measurement& m : log.measurements) {
    if (m.line == line && m.in_place == in_place) {
      return m;
    }
  }
  FAIL("no measurement at line " << line << (in_place ? " (in-place)" : ""));
  return log.measurements.front();
}

std::vector<std::string> warning_texts(const ParsedLog& log) {
  std::vector<std::string> out;
  for (const LogWarning& w : log.warnings) {
    out.push_back(std::to_string(w.line) + ": " + w.text);
  }
  return out;
}

/// what() of the LogParseError that parsing `text` as `file` throws.
std::string error_of(const std::string& text, const std::string& file = "log.txt") {
  try {
    (void)parse_log(text, file);
  } catch (const LogParseError& e) {
    return e.what();
  }
  return "(no error)";
}

/// What each shipped log must give, run by run: operation, rank count, data rows.
struct Run {
  std::string operation;
  std::uint32_t ranks;
  std::size_t rows;
};
struct Expected {
  LogFormat format;
  std::vector<Run> runs;
};

// clang-format off
const std::map<std::string, Expected>& expected_logs() {
  static const std::map<std::string, Expected> kLogs{
    // 8 B .. 128 MiB in powers of two = 25 rows; 8 device lines.
    {"a100sxm4_80gb_1x8_allreduce_128M_nccl-tests-2.19.4.txt", {LogFormat::nccl_tests, {{"allreduce", 8, 25}}}},
    // Five programs at 8 B .. 1 GiB (28 rows each), reduce_perf twice (-g2, then one GPU).
    {"autodl_1x2_rtx2080ti_pcie_nop2p_nccl-tests_multi.txt", {LogFormat::nccl_tests,
        {{"allreduce", 2, 28}, {"allgather", 2, 28}, {"bcast", 2, 28}, {"reduce", 2, 28},
         {"reduce", 1, 28}, {"alltoall", 2, 28}}}},
    // 8 B .. 1 GiB (28 rows; the 2 GiB row of the announced range is missing); busbw/algbw 1.875.
    {"aws_2x_p4de_a100_efa_allreduce_nccl-tests.txt", {LogFormat::nccl_tests, {{"allreduce", 16, 28}}}},
    // Four osu_allreduce runs of 4 B .. 1 MiB (19 rows), osu_latency 0 B .. 4 MiB (24), osu_bw 1 B .. 4 MiB (23).
    {"aws_hpc7g_cpu_efa_osu_allreduce_4-32nodes.txt", {LogFormat::osu,
        {{"allreduce", 0, 19}, {"allreduce", 0, 19}, {"allreduce", 0, 19}, {"allreduce", 0, 19},
         {"latency", 2, 24}, {"bw", 2, 23}}}},
    // Two IMB Allreduce tables of 0, 8, 16 B at "#processes = 1408".
    {"azure_32x44_cpu_ib_imb_allreduce_1408ranks.txt", {LogFormat::imb, {{"allreduce", 1408, 3}, {"allreduce", 1408, 3}}}},
    // 256 MiB .. 2 GiB = 4 rows; 8 device lines.
    {"bitdeer_1x8_h100_sxm_allreduce_nccl-tests.txt", {LogFormat::nccl_tests, {{"allreduce", 8, 4}}}},
    // 1 MiB .. 4 GiB = 13 rows; busbw/algbw = 191.05/98.61 = 1.9374 -> 32.
    {"deepops_4x8_dgxa100_hdr_ib_allreduce_nccl-tests.txt", {LogFormat::nccl_tests, {{"allreduce", 32, 13}}}},
    // osu_bw 1 B .. 32 MiB = 26 rows.
    {"eessi_a100_nvlink_osu_bw_cuda_DD.txt", {LogFormat::osu, {{"bw", 2, 26}}}},
    // 8 MiB .. 8 GiB = 11 rows; 8388608 / (131072 x 4) = 16.
    {"gcp_a3mega_2x8_h100_tcpxo_allgather_nccl-tests.txt", {LogFormat::nccl_tests, {{"allgather", 16, 11}}}},
    // 8 B .. 2 GiB = 29 rows; busbw/algbw = 696.06/371.23 = 1.875 -> 16.
    {"lambda_2x8_b200_ib_allreduce_nccl-tests.txt", {LogFormat::nccl_tests, {{"allreduce", 16, 29}}}},
    // 8 B .. 8 GiB = 31 rows; 16 device lines on 2 hosts.
    {"oci_2x8_a100_40gb_roce_allreduce_nccl-tests.txt", {LogFormat::nccl_tests, {{"allreduce", 16, 31}}}},
    // mpirun -np 96 / -np 192 / -np 96; complete rows 1..512 B, 1..1024 B, 1..2048 B before each cut row.
    {"ompi12318_p4d_osu_reduce_cuda_full.txt", {LogFormat::osu, {{"reduce", 96, 10}, {"reduce", 192, 11}, {"allreduce", 96, 12}}}},
    // The a100 log with every output line behind "# " (a wrapper's output; derived, see its header).
    {"slurm_hash_prefixed_a100_1x8_allreduce_nccl-tests.txt", {LogFormat::nccl_tests, {{"allreduce", 8, 25}}}},
    // -H b3115:128,b3142:128,b3331:128,b4132:128 = 512 ranks; 1 B .. 1 MiB = 21 rows.
    {"ucc981_4x128_cpu_hdr100_osu_allreduce_hcoll.txt", {LogFormat::osu, {{"allreduce", 512, 21}}}},
  };
  return kLogs;
}
// clang-format on

} // namespace

TEST_CASE("every shipped log parses with its format, operations, rank counts and row counts",
          "[io][logs]") {
  std::size_t seen = 0;
  for (const auto& entry : std::filesystem::directory_iterator(logs_dir())) {
    const std::string name = entry.path().filename().string();
    if (entry.path().extension() != ".txt") {
      continue;
    }
    INFO(name);
    const auto it = expected_logs().find(name);
    REQUIRE(it != expected_logs().end()); // a new log needs its hand-read expectations above
    ++seen;
    const ParsedLog log = parse_data(name);
    const Expected& want = it->second;
    CHECK(log.format == want.format);
    REQUIRE(log.runs.size() == want.runs.size());
    std::size_t measurements = 0;
    for (std::size_t r = 0; r < want.runs.size(); ++r) {
      INFO("run " << r);
      CHECK(log.runs[r].format == want.format);
      CHECK(log.runs[r].operation == want.runs[r].operation);
      CHECK(log.runs[r].ranks == want.runs[r].ranks);
      CHECK(log.runs[r].rows == want.runs[r].rows);
      // nccl-tests rows carry an out-of-place and an in-place measurement.
      measurements += want.runs[r].rows * (want.format == LogFormat::nccl_tests ? 2 : 1);
    }
    CHECK(log.measurements.size() == measurements);
    for (const Measurement& m : log.measurements) {
      CHECK(m.file == name);
      CHECK(m.ranks == log.runs.at(m.run).ranks);
      CHECK(m.operation == log.runs.at(m.run).operation);
    }
  }
  CHECK(seen == expected_logs().size());
}

TEST_CASE("a100 nccl-tests 2.19.4 log: metadata from the banner and the device list",
          "[io][logs][nccl-tests]") {
  const ParsedLog log = parse_data("a100sxm4_80gb_1x8_allreduce_128M_nccl-tests-2.19.4.txt");
  REQUIRE(log.runs.size() == 1);
  const auto& run = log.runs[0];
  CHECK(run.benchmark == "all_reduce_perf");
  CHECK(run.operation_source == "program name");
  CHECK(run.collective == CollectiveKind::allreduce);
  CHECK(run.tool_version == "2.19.4");
  CHECK(run.nccl_version == "2.19.3"); // nccl-library=21903
  CHECK(run.ranks_source == "device list");
  CHECK(run.nodes == 1); // every device line says "on dkh"
  CHECK(run.gpus == std::vector<std::string>{"NVIDIA A100-SXM4-80GB"});
  CHECK(run.datatype == "float");
  CHECK(run.out_of_place);
  CHECK(run.in_place);
  CHECK(run.line == 9); // "# nccl-tests version 2.19.4 ..."
  CHECK(log.warnings.empty());
  // Line 50: 134217728 33554432 float sum -1 | 1295.41 103.61 181.32 0 | 1284.21 104.51 182.90 0
  const Measurement& out = at(log, 50);
  CHECK(out.bytes == 134217728);
  CHECK(out.count == 33554432);
  CHECK(out.type == "float");
  CHECK(out.redop == "sum");
  CHECK(out.root == -1);
  CHECK(out.time_us == 1295.41);
  CHECK(out.algbw_GBps == 103.61);
  CHECK(out.busbw_GBps == 181.32);
  CHECK_FALSE(out.min_time_us.has_value());
  const Measurement& in = at(log, 50, true);
  CHECK(in.time_us == 1284.21);
  CHECK(in.algbw_GBps == 104.51);
  CHECK(in.busbw_GBps == 182.90);
  // Line 26: the 8 B row.
  CHECK(at(log, 26).time_us == 34.84);
  CHECK(at(log, 26, true).time_us == 36.18);
}

TEST_CASE("autodl log: six nccl-tests runs told apart by their prompts", "[io][logs][nccl-tests]") {
  const ParsedLog log = parse_data("autodl_1x2_rtx2080ti_pcie_nop2p_nccl-tests_multi.txt");
  REQUIRE(log.runs.size() == 6);
  CHECK(log.runs[0].benchmark == "all_reduce_perf");
  CHECK(log.runs[1].benchmark == "all_gather_perf");
  CHECK(log.runs[2].benchmark == "broadcast_perf");
  CHECK(log.runs[5].benchmark == "alltoall_perf");
  CHECK(log.runs[4].gpus == std::vector<std::string>{"NVIDIA GeForce RTX 2080 Ti"});
  // Line 59: allreduce 1 GiB, 268588 us, 4.00 / 4.00 GB/s (busbw = algbw on 2 ranks).
  CHECK(at(log, 59).time_us == 268588);
  CHECK(at(log, 59).busbw_GBps == 4.0);
  CHECK(at(log, 59).run == 0);
  // Line 101: allgather 1 GiB (count 134217728 per rank), 141614 us, 7.58 / 3.79 GB/s.
  CHECK(at(log, 101).count == 134217728);
  CHECK(at(log, 101).algbw_GBps == 7.58);
  CHECK(at(log, 101).busbw_GBps == 3.79);
  CHECK(at(log, 101).redop == "none");
  // Line 143: broadcast, root 0.
  CHECK(at(log, 143).root == 0);
  CHECK(at(log, 143).collective == CollectiveKind::bcast);
  // Line 227: the one-GPU reduce_perf, whose in-place columns are misaligned in the log.
  CHECK(at(log, 227).run == 4);
  CHECK(at(log, 227, true).time_us == 0.19);
  CHECK(at(log, 227, true).algbw_GBps == 5706839.35);
  CHECK(warning_texts(log) ==
        std::vector<std::string>{"6: skipped 9 lines that are not nccl-tests output (lines 6-18), "
                                 "the first: '1. **硬件配置**：'"});
}

TEST_CASE("aws p4de log: srun prefixes stripped, allreduce and 16 ranks from the columns",
          "[io][logs][nccl-tests]") {
  const ParsedLog log = parse_data("aws_2x_p4de_a100_efa_allreduce_nccl-tests.txt");
  const auto& run = log.runs.at(0);
  CHECK(run.operation_source == "columns");
  CHECK(run.ranks_source == "busbw / algbw");
  CHECK(run.benchmark.empty());
  CHECK(run.gpus.empty());
  CHECK(run.nodes == 0);
  // Line 35: "0:   1073741824 268435456 float sum -1 26217 40.96 76.79 0 26194 40.99 76.86 0".
  CHECK(at(log, 35).bytes == 1073741824);
  CHECK(at(log, 35).time_us == 26217);
  CHECK(at(log, 35).busbw_GBps == 76.79);
  CHECK(at(log, 35, true).busbw_GBps == 76.86);
  CHECK(warning_texts(log) ==
        std::vector<std::string>{
            "4: skipped a line that is not nccl-tests output: 'All_reduce performance test will be "
            "executed from 8B to 2GB on 2x p4de.24xlarg, ...'",
            "35: the table ends without nccl-tests' footer ('# Out of bounds values ...'): the log "
            "may be truncated after this row"});
}

TEST_CASE("bitdeer log: an indented markdown block with the 2022 device lines",
          "[io][logs][nccl-tests]") {
  const ParsedLog log = parse_data("bitdeer_1x8_h100_sxm_allreduce_nccl-tests.txt");
  const auto& run = log.runs.at(0);
  CHECK(run.gpus == std::vector<std::string>{"NVIDIA H100 80GB HBM3"});
  CHECK(run.nodes == 1);
  // Line 30: 2 GiB, out-of-place 7983.5 us, 268.99 / 470.73 GB/s.
  CHECK(at(log, 30).time_us == 7983.5);
  CHECK(at(log, 30).algbw_GBps == 268.99);
  CHECK(at(log, 30).busbw_GBps == 470.73);
}

TEST_CASE("deepops log: the pre-2022 columns (no root, 'error' instead of '#wrong')",
          "[io][logs][nccl-tests]") {
  const ParsedLog log = parse_data("deepops_4x8_dgxa100_hdr_ib_allreduce_nccl-tests.txt");
  const auto& run = log.runs.at(0);
  CHECK(run.operation_source == "columns");
  CHECK(run.ranks_source == "busbw / algbw");
  // Line 23: 4294967296 1073741824 float sum 43557 98.61 191.05 1e-06 43440 98.87 191.56 1e-06
  const Measurement& m = at(log, 23);
  CHECK(m.bytes == 4294967296ULL);
  CHECK(m.root == -1);
  CHECK(m.time_us == 43557);
  CHECK(m.busbw_GBps == 191.05);
  CHECK(at(log, 23, true).time_us == 43440);
}

TEST_CASE("gcp log: allgather from the command in a YAML block, 16 ranks from size / count",
          "[io][logs][nccl-tests]") {
  const ParsedLog log = parse_data("gcp_a3mega_2x8_h100_tcpxo_allgather_nccl-tests.txt");
  const auto& run = log.runs.at(0);
  CHECK(run.benchmark == "all_gather_perf");
  CHECK(run.collective == CollectiveKind::allgather);
  CHECK(run.ranks_source == "size / (count x type size)");
  // Line 86: 8 GiB, count 134217728, 42713 us, 201.11 / 188.54 GB/s, #wrong N/A (-c 0).
  CHECK(at(log, 86).count == 134217728);
  CHECK(at(log, 86).time_us == 42713);
  CHECK(at(log, 86).algbw_GBps == 201.11);
  CHECK(at(log, 86).busbw_GBps == 188.54);
}

TEST_CASE("lambda log: '#' stripped by markdown, versions from the 2025 banner",
          "[io][logs][nccl-tests]") {
  const ParsedLog log = parse_data("lambda_2x8_b200_ib_allreduce_nccl-tests.txt");
  const auto& run = log.runs.at(0);
  CHECK(run.tool_version == "2.17.6");
  CHECK(run.nccl_version == "2.26.2"); // nccl-library=22602
  CHECK(run.benchmark == "all_reduce_perf");
  CHECK(run.ranks_source == "busbw / algbw");
  // Line 86: 2 GiB, 5784.75 us, 371.23 / 696.06 GB/s; in-place 5728.40.
  CHECK(at(log, 86).time_us == 5784.75);
  CHECK(at(log, 86).busbw_GBps == 696.06);
  CHECK(at(log, 86, true).time_us == 5728.40);
}

TEST_CASE("oci log: two hosts in the device list, allreduce from the columns",
          "[io][logs][nccl-tests]") {
  const ParsedLog log = parse_data("oci_2x8_a100_40gb_roce_allreduce_nccl-tests.txt");
  const auto& run = log.runs.at(0);
  CHECK(run.nodes == 2);
  CHECK(run.ranks_source == "device list");
  CHECK(run.operation_source == "columns");
  CHECK(run.gpus == std::vector<std::string>{"NVIDIA A100-SXM4-40GB"});
  // Line 58: 2 GiB, 18289 us (printed without decimals), 117.42 / 220.16 GB/s.
  CHECK(at(log, 58).time_us == 18289);
  CHECK(at(log, 58).busbw_GBps == 220.16);
  // Line 60: 8 GiB, 67689 us.
  CHECK(at(log, 60).bytes == 8589934592ULL);
  CHECK(at(log, 60).time_us == 67689);
}

TEST_CASE("aws hpc7g log: OSU 5.8 allreduce on MPI_FLOAT, latency and bandwidth tables",
          "[io][logs][osu]") {
  const ParsedLog log = parse_data("aws_hpc7g_cpu_efa_osu_allreduce_4-32nodes.txt");
  REQUIRE(log.runs.size() == 6);
  CHECK(log.runs[0].benchmark == "OSU MPI Allreduce Latency Test");
  CHECK(log.runs[0].tool_version == "5.8");
  CHECK(log.runs[0].datatype == "MPI_FLOAT");
  CHECK(log.runs[0].ranks_source.empty());
  CHECK(log.runs[4].datatype == "MPI_CHAR");
  CHECK(log.runs[4].ranks_source == "point-to-point");
  // Line 27: 1048576 B, 704.31 us: 262144 floats.
  CHECK(at(log, 27).time_us == 704.31);
  CHECK(at(log, 27).count == 262144);
  CHECK(at(log, 27).redop == "sum");
  CHECK(at(log, 96).time_us == 874.60); // the 32-node run
  CHECK(at(log, 96).run == 3);
  CHECK(at(log, 121).operation == "latency"); // 1048576 B, 7.72e1 us
  CHECK(at(log, 121).time_us == 77.72);
  // Line 149: osu_bw 4 MiB at 24211.33 MB/s = 24.21133 GB/s.
  CHECK(at(log, 149).algbw_GBps == 24.21133);
  CHECK(at(log, 149).time_us == 0.0);
  CHECK(log.warnings.size() == 10); // 6 file separators, 4 unknown rank counts
  CHECK(log.warnings[1].text == "the rank count is unknown: OSU does not print it and no launch "
                                "command with a process count precedes the table");
}

TEST_CASE("eessi log: osu_bw with CUDA device buffers and the 7.x datatype line",
          "[io][logs][osu]") {
  const ParsedLog log = parse_data("eessi_a100_nvlink_osu_bw_cuda_DD.txt");
  const auto& run = log.runs.at(0);
  CHECK(run.benchmark == "OSU MPI-CUDA Bandwidth Test");
  CHECK(run.tool_version == "7.2");
  CHECK(run.accelerator == "cuda");
  CHECK(run.buffers == "D D");
  CHECK(run.datatype == "MPI_CHAR");
  CHECK(run.command == "$ mpirun -np 2 osu_bw -d cuda -m 33554432 D D");
  // Line 35: 32 MiB at 93130.52 MB/s.
  CHECK(at(log, 35).bytes == 33554432);
  CHECK(at(log, 35).algbw_GBps == 93.13052);
  CHECK(log.warnings.empty());
}

TEST_CASE("ompi 12318 log: OSU -f rows under a short header, truncated rows skipped",
          "[io][logs][osu]") {
  const ParsedLog log = parse_data("ompi12318_p4d_osu_reduce_cuda_full.txt");
  REQUIRE(log.runs.size() == 3);
  CHECK(log.runs[0].ranks_source == "launch command");
  CHECK(log.runs[0].accelerator == "cuda");
  CHECK(log.runs[2].collective == CollectiveKind::allreduce);
  // Line 23: 512 B, avg 46.62, min 17.25, max 83.92, 1000 iterations; reduce root 0.
  const Measurement& m = at(log, 23);
  CHECK(m.time_us == 46.62);
  CHECK(m.min_time_us == 17.25);
  CHECK(m.max_time_us == 83.92);
  CHECK(m.iterations == 1000u);
  CHECK(m.root == 0);
  CHECK(m.count == 512);
  // Line 65: allreduce 512 B, 4960.26 us.
  CHECK(at(log, 65).time_us == 4960.26);
  CHECK(at(log, 65).ranks == 96);
  CHECK(warning_texts(log) ==
        std::vector<std::string>{
            "14: the rows have 5 columns but the header names 2: read as OSU -f columns (average, "
            "minimum and maximum latency, iterations)",
            "24: skipped a truncated row (3 of 5 columns): '1024                   46.39         "
            "    17.17'",
            "25: skipped a line that is not OSU output: '[... truncated ...]'",
            "43: skipped a truncated row (4 of 5 columns): '2048                   58.17         "
            "    25.93            167.34'",
            "44: skipped a line that is not OSU output: '[... truncated ...]'",
            "68: skipped a truncated row (2 of 5 columns): '4096                 1920.09'",
            "69: skipped a line that is not OSU output: '[... truncated ...]'"});
}

TEST_CASE("ucc 981 log: ranks and nodes from mpirun -H host:slots", "[io][logs][osu]") {
  const ParsedLog log = parse_data("ucc981_4x128_cpu_hdr100_osu_allreduce_hcoll.txt");
  const auto& run = log.runs.at(0);
  CHECK(run.nodes == 4);
  CHECK(run.tool_version == "7.4");
  // Line 27: the 32 KiB outlier, 498.13 us; line 32: 1 MiB, 1519.43 us.
  CHECK(at(log, 27).time_us == 498.13);
  CHECK(at(log, 32).time_us == 1519.43);
  CHECK(at(log, 32).type == "MPI_CHAR");
  CHECK(at(log, 32).count == 1048576);
}

TEST_CASE("azure log: two IMB-MPI1 tables with t_min, t_max and t_avg", "[io][logs][imb]") {
  const ParsedLog log = parse_data("azure_32x44_cpu_ib_imb_allreduce_1408ranks.txt");
  REQUIRE(log.runs.size() == 2);
  CHECK(log.runs[0].benchmark == "IMB-MPI1 Allreduce");
  CHECK(log.runs[0].ranks_source == "#processes");
  CHECK(log.runs[0].datatype == "MPI_FLOAT");
  // Line 22: 8 B, 10000 repetitions, t_min 24.06, t_max 30.77, t_avg 27.94.
  const Measurement& m = at(log, 22);
  CHECK(m.bytes == 8);
  CHECK(m.count == 2);
  CHECK(m.iterations == 10000u);
  CHECK(m.min_time_us == 24.06);
  CHECK(m.max_time_us == 30.77);
  CHECK(m.time_us == 27.94);
  // Line 51: after stopping the agent, 16 B in 19.43 us on average (trailing blanks in the log).
  CHECK(at(log, 51).time_us == 19.43);
  CHECK(at(log, 51).run == 1);
}

// --- robustness: small texts that break the parsers on purpose ---------------------------------

namespace {

const std::string kNcclHeader =
    "#       size         count      type   redop    root     time   algbw   busbw #wrong     "
    "time   algbw   busbw #wrong\n"
    "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            "
    "(us)  (GB/s)  (GB/s)\n";
const std::string kNcclRow8 =
    "           8             2     float     sum      -1    36.47    0.00    0.00      0    34.74 "
    "   0.00    0.00      0\n";
const std::string kNcclRow16 =
    "          16             4     float     sum      -1    38.86    0.00    0.00      0    35.65 "
    "   0.00    0.00      0\n";
const std::string kFooter = "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 0\n";

} // namespace

TEST_CASE("a truncated nccl-tests row is skipped with a warning naming its line",
          "[io][logs][robustness]") {
  const ParsedLog log = parse_log(kNcclHeader + kNcclRow8 +
                                      "          16             4     float"
                                      "     sum      -1    38.86\n",
                                  "t.txt");
  CHECK(log.measurements.size() == 2);
  CHECK(
      warning_texts(log) ==
      std::vector<std::string>{
          "1: the rank count is unknown: no device list, and neither the sizes, busbw / algbw "
          "nor a launch command tell it",
          "3: the table ends without nccl-tests' footer ('# Out of bounds values ...'): the log "
          "may be truncated after this row",
          "4: skipped a truncated row (6 of 13 columns): '16             4     float     sum      "
          "-1    38.86'"});
}

TEST_CASE("a warning interleaved in a table is skipped and the rows around it are kept",
          "[io][logs][robustness]") {
  const ParsedLog log =
      parse_log(kNcclHeader + kNcclRow8 + "node1:123:456 [0] NCCL WARN NET/IB : Got async event\n" +
                    kNcclRow16 + kFooter,
                "t.txt");
  CHECK(log.measurements.size() == 4);
  CHECK(at(log, 5).time_us == 38.86);
  CHECK(log.warnings.at(1).line == 4);
  CHECK(log.warnings.at(1).text == "skipped a line that is not nccl-tests output: 'node1:123:456 "
                                   "[0] NCCL WARN NET/IB : Got async event'");
}

TEST_CASE("Windows line endings read like Unix ones", "[io][logs][robustness]") {
  const std::string unix_text =
      read_text(logs_dir() + "/a100sxm4_80gb_1x8_allreduce_128M_nccl-tests-2.19.4.txt");
  std::string windows_text;
  for (const char c : unix_text) {
    windows_text += c == '\n' ? std::string("\r\n") : std::string(1, c);
  }
  CHECK(parse_log(windows_text, "a.txt") == parse_log(unix_text, "a.txt"));
}

TEST_CASE("launcher prefixes, prompts and ANSI colours are stripped", "[io][logs][robustness]") {
  const std::string text = "user@host:~$ mpirun -np 4 ./build/all_reduce_perf -b 8 -e 16\n"
                           "[1,0]<stdout>:" +
                           kNcclHeader.substr(0, kNcclHeader.find('\n') + 1) + "0: \x1b[32m" +
                           kNcclRow8 + kFooter;
  const ParsedLog log = parse_log(text, "t.txt");
  REQUIRE(log.runs.size() == 1);
  CHECK(log.runs[0].benchmark == "all_reduce_perf");
  CHECK(log.runs[0].ranks == 4);
  CHECK(log.runs[0].ranks_source == "launch command");
  CHECK(log.measurements.size() == 2);
  CHECK(log.warnings.empty());
}

TEST_CASE("binary garbage after a log is skipped with a warning", "[io][logs][robustness]") {
  const std::string garbage("\x7f"
                            "ELF\x02\x01\x01\x00\x00\xff\xfe",
                            11);
  const ParsedLog log = parse_log(kNcclHeader + kNcclRow8 + kFooter + garbage, "t.txt");
  CHECK(log.measurements.size() == 2);
  CHECK(log.warnings.back().text == "skipped a line that is not nccl-tests output: "
                                    "'\\x7fELF\\x02\\x01\\x01\\x00\\x00\\xff\\xfe'");
}

TEST_CASE("nccl-tests rows with #wrong elements are kept and reported", "[io][logs][robustness]") {
  const ParsedLog log = parse_log(
      kNcclHeader +
          "           8             2     float     sum      -1    36.47    0.00    0.00      2    "
          "34.74    0.00    0.00      0\n" +
          kFooter,
      "t.txt");
  CHECK(log.measurements.size() == 2);
  CHECK(log.warnings.at(1).text == "the out-of-place result has 2 wrong elements (#wrong): the "
                                   "run did not compute correctly");
}

TEST_CASE("several nccl-tests runs in one file are separate runs", "[io][logs][robustness]") {
  const std::string run =
      "# nThread 1 nGpus 2 minBytes 8 maxBytes 16 step: 2(factor) warmup iters: 5 iters: 20\n"
      "# Using devices\n"
      "#  Rank  0 Group  0 Pid  31706 on nodeA device  0 [0000:b4:00] NVIDIA GeForce RTX 2080 Ti\n"
      "#  Rank  1 Group  0 Pid  31706 on nodeB device  1 [0000:b5:00] NVIDIA GeForce RTX 2080 "
      "Ti\n" +
      kNcclHeader + kNcclRow8 + kNcclRow16 + kFooter;
  const ParsedLog log = parse_log(run + run, "t.txt");
  REQUIRE(log.runs.size() == 2);
  CHECK(log.runs[1].line == 11);
  CHECK(log.runs[1].ranks == 2);
  CHECK(log.runs[1].nodes == 2);
  CHECK(log.measurements.size() == 8);
  CHECK(log.measurements.back().run == 1);
}

TEST_CASE("OSU 7.x: one table per datatype of -T", "[io][logs][robustness]") {
  const ParsedLog log = parse_log("# OSU MPI Allreduce Latency Test v7.4\n"
                                  "# Datatype: MPI_CHAR.\n"
                                  "# Size       Avg Latency(us)\n"
                                  "4                       7.66\n"
                                  "# Datatype: MPI_INT.\n"
                                  "# Size       Avg Latency(us)\n"
                                  "4                       7.70\n",
                                  "t.txt");
  REQUIRE(log.runs.size() == 2);
  CHECK(log.runs[1].datatype == "MPI_INT");
  CHECK(log.measurements[1].count == 1);
  CHECK(log.measurements[0].count == 4);
}

TEST_CASE("collsim-probe output: ranks, nodes and the MPI library from its header, barrier's "
          "size-less row",
          "[io][logs][osu]") {
  // The header and tables as collsim-probe prints them (docs/probe.md, "Output").
  const ParsedLog log =
      parse_log("# collsim-probe 1.0: ranks 6, nodes 2, ranks per node 3\n"
                "# MPI library: Open MPI v4.1.4, package: Debian OpenMPI, ident: 4.1.4\n"
                "# options: --collective allreduce,barrier --sizes 4:8 --full\n"
                "\n"
                "# OSU MPI Allreduce Latency Test v7.3\n"
                "# Datatype: MPI_CHAR.\n"
                "# Size       Avg Latency(us)   Min Latency(us)   Max Latency(us)  Iterations\n"
                "4                      12.20             10.12             14.51          50\n"
                "8                       9.31              7.07             10.98          50\n"
                "\n"
                "# OSU MPI Barrier Latency Test v7.3\n"
                "# Avg Latency(us)\n"
                "             5.25\n",
                "probe.txt");
  CHECK(log.warnings.empty());
  REQUIRE(log.runs.size() == 2);
  CHECK(log.runs[0].ranks == 6);
  CHECK(log.runs[0].ranks_source == "collsim-probe header");
  CHECK(log.runs[0].nodes == 2);
  CHECK(log.runs[0].mpi_version == "Open MPI v4.1.4, package: Debian OpenMPI, ident: 4.1.4");
  CHECK(log.runs[1].operation == "barrier");
  CHECK(log.runs[1].ranks == 6);
  REQUIRE(log.measurements.size() == 3);
  CHECK(log.measurements[1].time_us == 9.31);
  CHECK(log.measurements[1].max_time_us == 10.98);
  CHECK(log.measurements[2].collective == collsim::core::CollectiveKind::barrier);
  CHECK(log.measurements[2].bytes == 0);
  CHECK(log.measurements[2].time_us == 5.25);
  CHECK(log.measurements[2].ranks == 6);
}

TEST_CASE("a collsim-probe header without a rank count is reported", "[io][logs][robustness]") {
  const ParsedLog log = parse_log("# collsim-probe 1.0: ranks ?, nodes 1\n"
                                  "# OSU MPI Allreduce Latency Test v7.3\n"
                                  "# Size       Avg Latency(us)\n"
                                  "4                       7.66\n",
                                  "p.txt");
  REQUIRE(log.runs.size() == 1);
  CHECK(log.runs[0].ranks == 0);
  REQUIRE(log.warnings.size() == 2);
  CHECK(log.warnings[0].line == 1);
  CHECK(log.warnings[0].text.find("without a rank count") != std::string::npos);
}

TEST_CASE("IMB: failed samples and several process counts", "[io][logs][robustness]") {
  const ParsedLog log =
      parse_log("#    Intel(R) MPI Benchmarks 2021.3, MPI-1 part\n"
                "# MPI Version                 : 3.1\n"
                "# Benchmarking PingPong\n"
                "# #processes = 2\n"
                "       #bytes #repetitions      t[usec]   Mbytes/sec\n"
                "            0         1000         0.21         0.00\n"
                "      4194304           10       350.70     11959.83\n"
                "      8388608 out-of-mem.; needed X=   0.031 GB; use flag \"-mem X\" to overcome\n"
                "# Benchmarking Bcast\n"
                "# #processes = 4\n"
                "       #bytes #repetitions  t_min[usec]  t_max[usec]  t_avg[usec]\n"
                "            1         1000         0.50         0.90         0.70\n",
                "imb.txt");
  REQUIRE(log.runs.size() == 2);
  CHECK(log.runs[0].operation == "pingpong");
  CHECK(log.runs[0].tool_version == "2021.3");
  CHECK(log.runs[0].mpi_version == "3.1");
  CHECK(log.runs[1].collective == CollectiveKind::bcast);
  CHECK(log.runs[1].ranks == 4);
  CHECK(at(log, 7).algbw_GBps == 11.95983);
  CHECK(at(log, 7).time_us == 350.70);
  CHECK(at(log, 12).type == "MPI_BYTE");
  CHECK(warning_texts(log) ==
        std::vector<std::string>{"8: skipped a row without a measurement (IMB reports a failed "
                                 "sample): '8388608 out-of-mem.; needed X=   0.031 GB; use flag "
                                 "\"-mem X\" to overcome'"});
}

TEST_CASE("a device list that disagrees with busbw / algbw is reported", "[io][logs][robustness]") {
  // 2 device lines, but busbw / algbw = 175 / 100 = 1.75 is allreduce on 8 ranks: a partial paste.
  const ParsedLog log = parse_log(
      "# Using devices\n"
      "#  Rank  0 Group  0 Pid  1 on a device  0 [0x1b] NVIDIA H100 80GB HBM3\n"
      "#  Rank  1 Group  0 Pid  1 on a device  1 [0x43] NVIDIA H100 80GB HBM3\n" +
          kNcclHeader +
          "   134217728      33554432     float     sum      -1   1342.2  100.00  175.00      0   "
          "1342.2  100.00  175.00      0\n" +
          kFooter,
      "t.txt");
  CHECK(log.runs.at(0).ranks == 2);
  CHECK(warning_texts(log) ==
        std::vector<std::string>{"1: the device list has 2 ranks but busbw / algbw gives 8"});
}

TEST_CASE("a log cut at any byte or with random bytes parses or fails with a LogParseError",
          "[io][logs][robustness]") {
  std::mt19937 random(20240601);
  for (const auto& [name, want] : expected_logs()) {
    INFO(name);
    const std::string text = read_text(logs_dir() + "/" + name);
    const std::size_t full = parse_log(text, name).measurements.size();
    const std::size_t step = name.rfind("a100", 0) == 0 ? 1 : 97; // every byte of one log
    for (std::size_t cut = 0; cut <= text.size(); cut += step) {
      std::size_t got = 0;
      try {
        got = parse_log(text.substr(0, cut), name).measurements.size();
      } catch (const LogParseError&) {
        // a clear error is a valid answer to a cut log; anything else fails the test
      }
      CHECK(got <= full);
    }
    for (int trial = 0; trial < 50; ++trial) {
      std::string mutated = text;
      for (int k = 0; k < 20; ++k) {
        mutated[random() % mutated.size()] = static_cast<char>(random() % 256);
      }
      try {
        (void)parse_log(mutated, name);
      } catch (const LogParseError&) {
      }
    }
  }
}

// --- one test per error message, with its exact text ------------------------------------------

TEST_CASE("an empty file is an error", "[io][logs][errors]") {
  CHECK(error_of("") == "log.txt:1:1: error: the file is empty; expected the output of "
                        "nccl-tests, OSU micro-benchmarks or IMB-MPI1");
  CHECK(error_of("\n  \r\n\t\n") == "log.txt:1:1: error: the file has only blank lines; expected "
                                    "the output of nccl-tests, OSU micro-benchmarks or IMB-MPI1");
}

TEST_CASE("binary garbage is an error at its first non-text byte", "[io][logs][errors]") {
  const std::string garbage("PK\x03\x04\x14\x00\x06\x00", 8);
  CHECK(error_of(garbage) == "log.txt:1:3: error: binary data (byte 0x03); expected the text "
                             "output of nccl-tests, OSU micro-benchmarks or IMB-MPI1");
}

TEST_CASE("text of no known format is an error", "[io][logs][errors]") {
  CHECK(error_of("hello\nworld\n") ==
        "log.txt:1:1: error: not a nccl-tests, OSU micro-benchmarks or IMB-MPI1 log; expected a "
        "line like '#       size         count      type   redop    root     time   algbw   busbw "
        "...' (nccl-tests), '# OSU MPI Allreduce Latency Test v7.4' (OSU) or '# Benchmarking "
        "Allreduce' (IMB-MPI1)");
}

TEST_CASE("a nccl-tests log with only headers is an error", "[io][logs][errors]") {
  CHECK(error_of("# nThread 1 nGpus 8 minBytes 8 maxBytes 128\n" + kNcclHeader + kFooter) ==
        "log.txt:2:1: error: no nccl-tests data rows found; expected lines like '           8      "
        "       2     float     sum      -1    34.84    0.00    0.00       0    36.18    0.00    "
        "0.00       0'");
  // Truncated rows do not count as data.
  CHECK(error_of(kNcclHeader + "           8             2     float\n") ==
        "log.txt:1:1: error: no nccl-tests data rows found; expected lines like '           8      "
        "       2     float     sum      -1    34.84    0.00    0.00       0    36.18    0.00    "
        "0.00       0'");
}

TEST_CASE("an OSU log with only headers is an error", "[io][logs][errors]") {
  CHECK(error_of("\n# OSU MPI Allreduce Latency Test v5.8\n# Size       Avg Latency(us)\n") ==
        "log.txt:2:1: error: no OSU data rows found; expected lines like '1024                   "
        "11.73' (the size in bytes, then the latency in us or the bandwidth in MB/s)");
}

TEST_CASE("an IMB-MPI1 log with only headers is an error", "[io][logs][errors]") {
  CHECK(
      error_of("# Benchmarking Allreduce\n# #processes = 2\n"
               "       #bytes #repetitions  t_min[usec]  t_max[usec]  t_avg[usec]\n") ==
      "log.txt:3:1: error: no IMB-MPI1 data rows found; expected lines like '            8        "
      "10000        24.06        30.77        27.94' (#bytes #repetitions t_min t_max t_avg)");
}

TEST_CASE("a log file that cannot be read is an error", "[io][logs][errors]") {
  const std::string missing = logs_dir() + "/no_such_log.txt";
  try {
    (void)collsim::io::load_log(missing);
    FAIL("no error");
  } catch (const LogParseError& e) {
    CHECK(std::string(e.what()) == missing + ": error: cannot read the file: No such file or "
                                             "directory");
  }
  try {
    (void)collsim::io::load_log(logs_dir());
    FAIL("no error");
  } catch (const LogParseError& e) {
    CHECK(std::string(e.what()) == logs_dir() + ": error: cannot read the file: it is a "
                                                "directory");
  }
}
