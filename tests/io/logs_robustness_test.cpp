// The measured-log parsers on texts that break them on purpose: truncated rows, interleaved
// warnings, line endings, launcher prefixes, binary garbage, several runs per file, random cuts
// and bytes, and every error message (the shipped logs: logs_test.cpp).

#include "logs_test_support.hpp"

#include <catch2/catch.hpp>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

using namespace collsim::testing::logs;

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
