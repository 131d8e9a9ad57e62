// The measured-log parsers on the real logs of tests/data/logs/ (provenance in its README.md);
// texts that break them on purpose: logs_robustness_test.cpp. Every expected number below was
// read by hand from the log file named in the test, at the line given in the comment.

#include "logs_test_support.hpp"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

using namespace collsim::testing::logs;

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
  CHECK(run.gpus_per_thread == 8); // "# nThread 1 nGpus 8 ..."
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
  CHECK(run.gpus_per_thread == 0); // no banner, no command
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
  CHECK(run.gpus_per_thread == 1); // the command's -g 1
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
