// Runs `collsim ingest` as users do, on the real logs of tests/data/logs/: the table, CSV and JSON
// forms of the same numbers, warnings on stderr, and exit code 2 with one line on bad input.

#include "cli_test_support.hpp"

#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

namespace {

using collsim::testing::run_collsim;

const std::string kA100 = "tests/data/logs/a100sxm4_80gb_1x8_allreduce_128M_nccl-tests-2.19.4.txt";
const std::string kOmpi = "tests/data/logs/ompi12318_p4d_osu_reduce_cuda_full.txt";
const std::string kAzure = "tests/data/logs/azure_32x44_cpu_ib_imb_allreduce_1408ranks.txt";

bool contains(const std::string& text, const std::string& what) {
  return text.find(what) != std::string::npos;
}

} // namespace

TEST_CASE("ingest prints a table with a header per run and one line per measurement",
          "[cli][ingest]") {
  const auto o = run_collsim("ingest " + kA100);
  INFO(o.err);
  REQUIRE(o.code == 0);
  CHECK(o.err.empty());
  CHECK(contains(o.out, "# collsim ingest: 1 file, 1 run, 50 measurements, 0 warnings\n"));
  CHECK(contains(o.out, "#    operation          size         count       type  redop  root  "
                        "ranks  place        time         min         max     algbw     busbw  "
                        "  line\n"
                        "#                        (B)    (elements)                             "
                        "                 (us)        (us)        (us)    (GB/s)    (GB/s)\n"));
  CHECK(contains(o.out, "# run 1: " + kA100 +
                            ":9, nccl-tests 2.19.4, all_reduce_perf: allreduce (from the program "
                            "name), 8 ranks (from the device list), 1 node, NVIDIA "
                            "A100-SXM4-80GB, NCCL 2.19.3, float, 25 rows\n"));
  // Line 50 of the log: the 128 MiB row, out-of-place then in-place.
  CHECK(contains(o.out, "     allreduce     134217728      33554432      float    sum    -1      "
                        "8    out     1295.41           -           -    103.61    181.32      "
                        "50\n"
                        "     allreduce     134217728      33554432      float    sum    -1      "
                        "8     in     1284.21           -           -    104.51     182.9      "
                        "50\n"));
}

TEST_CASE("ingest --format json has measurements, per-run metadata and warnings", "[cli][ingest]") {
  const auto o = run_collsim("ingest " + kA100 + " " + kOmpi + " --format json");
  INFO(o.err);
  REQUIRE(o.code == 0);
  const auto j = nlohmann::json::parse(o.out);
  // 50 nccl-tests measurements, then 10 + 11 + 12 OSU rows.
  REQUIRE(j.at("measurements").size() == 83);
  REQUIRE(j.at("logs").size() == 4);
  CHECK(j.at("warnings").size() == 7);
  const auto& first = j.at("measurements").at(48); // line 50, out-of-place
  CHECK(first.at("line") == 50);
  CHECK(first.at("run") == 1);
  CHECK(first.at("collective") == "allreduce");
  CHECK(first.at("bytes") == 134217728);
  CHECK(first.at("ranks") == 8);
  CHECK(first.at("in_place") == false);
  CHECK(first.at("time_us") == 1295.41);
  CHECK(first.at("busbw_GBps") == 181.32);
  CHECK(first.at("min_time_us").is_null());
  // Runs are numbered across files: the OSU reduce on 96 ranks is run 2.
  const auto& osu = j.at("measurements").at(50);
  CHECK(osu.at("run") == 2);
  CHECK(osu.at("operation") == "reduce");
  CHECK(osu.at("ranks") == 96);
  CHECK(osu.at("time_us") == 50.89);
  CHECK(osu.at("min_time_us") == 18.27);
  CHECK(osu.at("iterations") == 1000);
  const auto& run = j.at("logs").at(1);
  CHECK(run.at("format") == "osu");
  CHECK(run.at("benchmark") == "OSU MPI-CUDA Reduce Latency Test");
  CHECK(run.at("ranks_source") == "launch command");
  CHECK(run.at("accelerator") == "cuda");
  CHECK(j.at("logs").at(0).at("gpus") == nlohmann::json::array({"NVIDIA A100-SXM4-80GB"}));
  const auto& w = j.at("warnings").at(1);
  CHECK(w.at("file") == kOmpi);
  CHECK(w.at("line") == 24);
  CHECK(w.at("text") == "skipped a truncated row (3 of 5 columns): '1024                   46.39   "
                        "          17.17'");
}

TEST_CASE("ingest --format csv has a header row and one row per measurement", "[cli][ingest]") {
  const auto o = run_collsim("ingest " + kAzure + " --format csv");
  INFO(o.err);
  REQUIRE(o.code == 0);
  CHECK(o.out == "file,line,run,format,operation,collective,bytes,count,type,redop,root,ranks,"
                 "in_place,time_us,min_time_us,max_time_us,iterations,algbw_GBps,busbw_GBps\n" +
                     kAzure +
                     ",21,1,imb,allreduce,allreduce,0,0,MPI_FLOAT,sum,-1,1408,false,0.16,"
                     "0.13,0.41,10000,0,0\n" +
                     kAzure +
                     ",22,1,imb,allreduce,allreduce,8,2,MPI_FLOAT,sum,-1,1408,false,27.94,"
                     "24.06,30.77,10000,0,0\n" +
                     kAzure +
                     ",23,1,imb,allreduce,allreduce,16,4,MPI_FLOAT,sum,-1,1408,false,"
                     "27.28,26.13,29.28,10000,0,0\n" +
                     kAzure +
                     ",49,2,imb,allreduce,allreduce,0,0,MPI_FLOAT,sum,-1,1408,false,0.16,"
                     "0.13,0.57,10000,0,0\n" +
                     kAzure +
                     ",50,2,imb,allreduce,allreduce,8,2,MPI_FLOAT,sum,-1,1408,false,19.56,"
                     "18.24,21.05,10000,0,0\n" +
                     kAzure +
                     ",51,2,imb,allreduce,allreduce,16,4,MPI_FLOAT,sum,-1,1408,false,"
                     "19.43,18.52,20.74,10000,0,0\n");
}

TEST_CASE("ingest prints warnings on stderr as file:line: warning:", "[cli][ingest]") {
  const auto o = run_collsim("ingest " + kOmpi);
  REQUIRE(o.code == 0);
  CHECK(contains(o.err, kOmpi + ":24: warning: skipped a truncated row (3 of 5 columns): '1024     "
                                "              46.39             17.17'\n"));
  CHECK(contains(o.err, kOmpi + ":25: warning: skipped a line that is not OSU output: '[... "
                                "truncated ...]'\n"));
  CHECK(contains(o.out, "# collsim ingest: 1 file, 3 runs, 33 measurements, 7 warnings\n"));
}

TEST_CASE("ingest exits 2 with one line when a log has no data", "[cli][ingest]") {
  char name[] = "/tmp/collsim_ingest_test_XXXXXX";
  const int fd = mkstemp(name);
  REQUIRE(fd >= 0);
  {
    std::ofstream f(name);
    f << "# OSU MPI Allreduce Latency Test v7.4\n# Size       Avg Latency(us)\n";
  }
  const auto o = run_collsim(std::string("ingest ") + kA100 + " " + name);
  std::remove(name);
  CHECK(o.code == 2);
  CHECK(o.out.empty());
  CHECK(o.err == std::string(name) + ":1:1: error: no OSU data rows found; expected lines like "
                                     "'1024                   11.73' (the size in bytes, then the "
                                     "latency in us or the bandwidth in MB/s)\n");
}

TEST_CASE("ingest exits 2 on a missing file, a non-log and a bad --format", "[cli][ingest]") {
  const auto missing = run_collsim("ingest tests/data/logs/missing.txt");
  CHECK(missing.code == 2);
  CHECK(missing.err ==
        "tests/data/logs/missing.txt: error: cannot read the file: No such file or directory\n");
  const auto readme = run_collsim("ingest tests/data/logs/README.md");
  CHECK(readme.code == 2);
  CHECK(readme.err.rfind("tests/data/logs/README.md:1:1: error: not a nccl-tests, OSU "
                         "micro-benchmarks or IMB-MPI1 log; expected a line like",
                         0) == 0);
  const auto format = run_collsim("ingest " + kA100 + " --format xml");
  CHECK(format.code == 2);
  CHECK(format.err == "collsim: error: unknown format 'xml'; valid values are: table, csv, json\n");
}
