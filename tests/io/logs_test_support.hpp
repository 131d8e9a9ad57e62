#pragma once
// What the measured-log tests share (logs_test.cpp: the shipped logs; logs_robustness_test.cpp:
// texts that break the parsers on purpose): reading tests/data/logs, finding a row's measurement,
// the warnings and the error a text gives, and what every shipped log must give.

#include "collsim/core/errors.hpp"
#include "collsim/io/logs.hpp"

#include <catch2/catch.hpp>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace collsim::testing::logs {

using collsim::core::CollectiveKind;
using collsim::core::LogParseError;
using collsim::io::LogFormat;
using collsim::io::LogWarning;
using collsim::io::Measurement;
using collsim::io::parse_log;
using collsim::io::ParsedLog;

inline std::string logs_dir() {
  return std::string(COLLSIM_TEST_DATA_DIR) + "/logs";
}

inline std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

/// A log of tests/data/logs, named by its file name alone in positions.
inline ParsedLog parse_data(const std::string& name) {
  return parse_log(read_text(logs_dir() + "/" + name), name);
}

/// The measurement of one side of the row at `line`.
inline const Measurement& at(const ParsedLog& log, std::size_t line, bool in_place = false) {
  for (const Measurement& m : log.measurements) {
    if (m.line == line && m.in_place == in_place) {
      return m;
    }
  }
  FAIL("no measurement at line " << line << (in_place ? " (in-place)" : ""));
  return log.measurements.front();
}

inline std::vector<std::string> warning_texts(const ParsedLog& log) {
  std::vector<std::string> out;
  for (const LogWarning& w : log.warnings) {
    out.push_back(std::to_string(w.line) + ": " + w.text);
  }
  return out;
}

/// what() of the LogParseError that parsing `text` as `file` throws.
inline std::string error_of(const std::string& text, const std::string& file = "log.txt") {
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
inline const std::map<std::string, Expected>& expected_logs() {
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

} // namespace collsim::testing::logs
