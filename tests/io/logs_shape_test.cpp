// nccl-tests tables behind a wrapper's '#' (logs_nccl_commented.cpp) and rank and node counts
// given by the user (io::apply_log_shape, `--ranks` / `--nodes`). The derived log
// tests/data/logs/slurm_hash_prefixed_a100_1x8_allreduce_nccl-tests.txt is the a100 log with
// every output line behind "# " (its header says how it was made); its numbers are the a100 log's.

#include "collsim/core/errors.hpp"
#include "collsim/io/logs.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace {

using collsim::io::apply_log_shape;
using collsim::io::LogFormat;
using collsim::io::LogShape;
using collsim::io::Measurement;
using collsim::io::parse_log;
using collsim::io::ParsedLog;

const std::string kA100 = "a100sxm4_80gb_1x8_allreduce_128M_nccl-tests-2.19.4.txt";
const std::string kPrefixed = "slurm_hash_prefixed_a100_1x8_allreduce_nccl-tests.txt";
const std::string kHpc7g = "aws_hpc7g_cpu_efa_osu_allreduce_4-32nodes.txt";

ParsedLog parse_data(const std::string& name) {
  std::ifstream in(std::string(COLLSIM_TEST_DATA_DIR) + "/logs/" + name, std::ios::binary);
  REQUIRE(in);
  std::ostringstream s;
  s << in.rdbuf();
  return parse_log(s.str(), name);
}

std::vector<std::string> warning_texts(const ParsedLog& log) {
  std::vector<std::string> out;
  for (const auto& w : log.warnings) {
    out.push_back(std::to_string(w.line) + ": " + w.text);
  }
  return out;
}

const Measurement& at(const ParsedLog& log, std::size_t line, bool in_place = false) {
  for (const Measurement& m : log.measurements) {
    if (m.line == line && m.in_place == in_place) {
      return m;
    }
  }
  FAIL("no measurement at line " << line);
  return log.measurements.front();
}

/// what() of the UsageError that apply_log_shape throws, or "(no error)".
std::string shape_error(ParsedLog log, const LogShape& shape) {
  try {
    apply_log_shape(log, shape);
  } catch (const collsim::core::UsageError& e) {
    return e.what();
  }
  return "(no error)";
}

const std::string kHeader =
    "#       size         count      type   redop    root     time   algbw   busbw #wrong     "
    "time   algbw   busbw #wrong\n"
    "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            "
    "(us)  (GB/s)  (GB/s)\n";
const std::string kRow8 =
    "           8             2     float     sum      -1    36.47    0.00    0.00      0    34.74 "
    "   0.00    0.00      0\n";
const std::string kRow16 =
    "          16             4     float     sum      -1    38.86    0.00    0.00      0    35.65 "
    "   0.00    0.00      0\n";
const std::string kDevices =
    "# Using devices\n"
    "#  Rank  0 Group  0 Pid  31706 on nodeA device  0 [0000:b4:00] NVIDIA GeForce RTX 2080 Ti\n"
    "#  Rank  1 Group  0 Pid  31706 on nodeB device  1 [0000:b5:00] NVIDIA GeForce RTX 2080 Ti\n";
const std::string kFooter = "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 0\n";

} // namespace

// --- '#'-prefixed nccl-tests tables -------------------------------------------------------------

TEST_CASE("a nccl-tests table that a wrapper printed behind '#' is read with one warning",
          "[io][logs][nccl-tests][prefixed]") {
  const ParsedLog log = parse_data(kPrefixed);
  const ParsedLog original = parse_data(kA100);
  CHECK(log.format == LogFormat::nccl_tests);
  REQUIRE(log.runs.size() == 1);
  const auto& run = log.runs[0];
  CHECK(run.rows == 25); // lines 26-50: 8 B .. 128 MiB
  CHECK(log.measurements.size() == 50);
  CHECK(run.operation == "allreduce");
  CHECK(run.benchmark == "all_reduce_perf");
  CHECK(run.tool_version == "2.19.4");
  CHECK(run.nccl_version == "2.19.3");
  // The doubled '#' of the device lines does not hide them: ranks and nodes as in the original.
  CHECK(run.ranks == 8);
  CHECK(run.ranks_source == "device list");
  CHECK(run.nodes == 1);
  CHECK(run.nodes_source == "device list");
  CHECK(run.gpus == std::vector<std::string>{"NVIDIA A100-SXM4-80GB"});
  // Line 50: 128 MiB, out-of-place 1295.41 us, in-place 1284.21 us.
  CHECK(at(log, 50).bytes == 134217728);
  CHECK(at(log, 50).time_us == 1295.41);
  CHECK(at(log, 50, true).time_us == 1284.21);
  CHECK(at(log, 50).busbw_GBps == 181.32);
  // The same numbers at the same lines as the original (whose lines 9-55 were prefixed).
  CHECK(log.measurements == [&] {
    auto ms = original.measurements;
    for (auto& m : ms) {
      m.file = kPrefixed;
    }
    return ms;
  }());
  // One warning, at the column header; the footer was seen (no "may be truncated" warning).
  CHECK(warning_texts(log) ==
        std::vector<std::string>{"24: read 25 data rows from '#'-prefixed lines (lines 26-50): a "
                                 "wrapper printed the table behind '#'"});
}

TEST_CASE("a '#'-prefixed table whose own comment lines kept one '#' is read too",
          "[io][logs][nccl-tests][prefixed]") {
  // A wrapper that comments out only the lines nccl-tests did not comment itself.
  const ParsedLog log =
      parse_log("# nThread 1 nGpus 2 minBytes 8 maxBytes 16 step: 2(factor) warmup iters: 5\n" +
                    kDevices + kHeader + "# " + kRow8 + "#" + kRow16 + kFooter,
                "t.txt");
  REQUIRE(log.runs.size() == 1);
  CHECK(log.runs[0].rows == 2);
  CHECK(log.runs[0].ranks == 2); // the device lines are devices, not rows
  CHECK(log.runs[0].nodes == 2);
  CHECK(at(log, 7).bytes == 8);
  CHECK(at(log, 8).time_us == 38.86);
  CHECK(warning_texts(log) ==
        std::vector<std::string>{"5: read 2 data rows from '#'-prefixed lines (lines 7-8): a "
                                 "wrapper printed the table behind '#'"});
}

TEST_CASE("a row commented out among plain rows stays excluded, without a warning",
          "[io][logs][nccl-tests][prefixed]") {
  const ParsedLog log = parse_log(kHeader + "# " + kRow8 + kRow16 + kFooter, "t.txt");
  REQUIRE(log.runs.size() == 1);
  CHECK(log.runs[0].rows == 1);
  CHECK(log.measurements.front().bytes == 16);
  for (const auto& w : log.warnings) {
    CHECK(w.text.find("'#'-prefixed") == std::string::npos);
  }
}

TEST_CASE("nccl-tests' own comment lines are never read as '#'-prefixed rows",
          "[io][logs][nccl-tests][prefixed]") {
  // Every comment line a real run prints, behind one and two '#', under a header and no rows.
  const std::string comments = kDevices + "#\n# Out of bounds values : 0 OK\n"
                                          "# Avg bus bandwidth    : 34.9024\n"
                                          "# Collective test concluded: all_reduce_perf\n";
  std::string doubled;
  std::istringstream in(kHeader + comments);
  for (std::string line; std::getline(in, line);) {
    doubled += "# " + line + "\n";
  }
  for (const std::string& text : {kHeader + comments, doubled}) {
    try {
      (void)parse_log(text, "t.txt");
      FAIL("parsed a table without rows");
    } catch (const collsim::core::LogParseError& e) {
      CHECK(std::string(e.what()).rfind("t.txt:", 0) == 0);
      CHECK(std::string(e.what()).find("no nccl-tests data rows found") != std::string::npos);
    }
  }
}

// --- apply_log_shape: --ranks and --nodes ------------------------------------------------------

TEST_CASE("counts given with --ranks and --nodes fill in a rank count the log does not state",
          "[io][logs][shape]") {
  ParsedLog log = parse_data(kHpc7g);
  REQUIRE(log.runs.size() == 6);
  REQUIRE(log.runs[0].ranks == 0);
  apply_log_shape(log, LogShape{64, 4});
  for (const auto& run : log.runs) {
    CHECK(run.ranks == 64);
    CHECK(run.ranks_source == "--ranks");
    CHECK(run.nodes == 4);
    CHECK(run.nodes_source == "--nodes");
  }
  for (const auto& m : log.measurements) {
    CHECK(m.ranks == 64);
  }
  // The four "rank count is unknown" warnings are gone; the point-to-point tests, which the log
  // says run on 2 ranks, are named: the flag applies to every run.
  const auto texts = warning_texts(log);
  CHECK(texts.size() == 10 - 4 + 2);
  for (const auto& t : texts) {
    CHECK(t.find("the rank count is unknown") == std::string::npos);
  }
  CHECK(std::count(
            texts.begin(), texts.end(),
            std::to_string(log.runs[4].line) +
                ": --ranks 64 replaces the 2 ranks the log gives (from the point-to-point)") == 1);
}

TEST_CASE(
    "counts given with --ranks and --nodes win over the log's own, with a warning naming them",
    "[io][logs][shape]") {
  ParsedLog log = parse_data(kA100);
  apply_log_shape(log, LogShape{16, 2});
  CHECK(log.runs[0].ranks == 16);
  CHECK(log.runs[0].ranks_source == "--ranks");
  CHECK(log.runs[0].nodes == 2);
  CHECK(log.runs[0].nodes_source == "--nodes");
  CHECK(at(log, 50).ranks == 16);
  CHECK(warning_texts(log) ==
        std::vector<std::string>{
            "9: --ranks 16 replaces the 8 ranks the log gives (from the device list)",
            "9: --nodes 2 replaces the 1 node the log gives (from the device list)"});

  // The same counts as the log's: no warning, but the source is the flag.
  ParsedLog same = parse_data(kA100);
  apply_log_shape(same, LogShape{8, 1});
  CHECK(same.runs[0].ranks_source == "--ranks");
  CHECK(same.warnings.empty());

  // No flag: nothing changes.
  ParsedLog none = parse_data(kA100);
  apply_log_shape(none, LogShape{});
  CHECK(none == parse_data(kA100));
}

TEST_CASE("ranks that do not divide evenly over the nodes are an error naming both sources",
          "[io][logs][shape][errors]") {
  CHECK(shape_error(parse_data(kA100), LogShape{std::nullopt, 3}) ==
        kA100 + ":9: 8 ranks (from the device list) do not divide evenly over 3 nodes (--nodes) "
                "(ranks per node = ranks / nodes)");
  CHECK(shape_error(parse_data(kA100), LogShape{std::nullopt, 16}) ==
        kA100 + ":9: 16 nodes (--nodes) for 8 ranks (from the device list): every node runs at "
                "least one rank");
  // The log's 1 node (its device list) against --ranks alone divides anything.
  CHECK(shape_error(parse_data(kA100), LogShape{12, std::nullopt}) == "(no error)");
  // oci: 16 ranks on 2 hosts in the device list.
  CHECK(shape_error(parse_data("oci_2x8_a100_40gb_roce_allreduce_nccl-tests.txt"),
                    LogShape{9, std::nullopt})
            .ends_with(": 9 ranks (--ranks) do not divide evenly over 2 nodes (from the device "
                       "list) (ranks per node = ranks / nodes)"));
}
