// Named library stacks on the command line and in scenarios (docs/stacks.md): `--stack` and
// `stack:` choose the stack, `stacks:` compares them in a study, the JSC "MPI as API" preset
// orders its three stacks as measured, and bad names are one error with their place, exit 2.

#include "cli_test_support.hpp"

#include <catch2/catch.hpp>
#include <cstdio>
#include <fmt/format.h>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

namespace {

using collsim::testing::run_collsim;
using collsim::testing::run_json;
using collsim::testing::script_output;
using collsim::testing::slurp;
using collsim::testing::TempScenario;
using nlohmann::json;

double time_us(const std::string& stack, std::uint32_t ranks, const std::string& size) {
  const json j =
      run_json("sim --scenario juwels-booster --stack " + stack + " --algorithm auto --ranks " +
               std::to_string(ranks) + " --sizes " + size + " --format json");
  const json& row = j.at("results").at(0);
  CHECK(row.at("stack") == stack);
  return row.at("time_us").get<double>();
}

} // namespace

TEST_CASE("the JSC study's three stacks at 2 to 16 GPUs: plain Open MPI > UCC > UCC + NCCL",
          "[cli][stacks][jsc]") {
  const json j = run_json("run jsc-mpi-as-api --format json");
  std::map<std::pair<std::string, int>, double> t; // (algorithm label, ranks) at 1 GB
  for (const json& row : j.at("results")) {
    if (row.at("bytes") == 1000000000) {
      t[{row.at("algorithm"), row.at("ranks")}] = row.at("time_us");
      CHECK(row.at("algorithm").get<std::string>() == "auto@" + row.at("stack").get<std::string>());
    }
  }
  for (const int p : {2, 4, 8, 16}) {
    CAPTURE(p);
    const double mpi = t.at({"auto@openmpi-4.1", p});
    const double ucc = t.at({"auto@openmpi-4.1+ucc", p});
    const double nccl = t.at({"auto@openmpi-4.1+ucc+nccl", p});
    CHECK(mpi > 10 * ucc); // "an order of magnitude faster at every GPU count"
    CHECK(ucc > nccl);
  }
  // At 8 GPUs, sim with each stack gives the run's numbers.
  CHECK(time_us("openmpi-4.1", 8, "1000000000") ==
        Approx(t.at({"auto@openmpi-4.1", 8})).epsilon(1e-12));
  CHECK(time_us("openmpi-4.1+ucc+nccl", 8, "1000000000") ==
        Approx(t.at({"auto@openmpi-4.1+ucc+nccl", 8})).epsilon(1e-12));
}

TEST_CASE("auto under a stack is that library's choice", "[cli][stacks]") {
  const json mpi = run_json("sim --scenario juwels-booster --stack openmpi-4.1 --algorithm auto "
                            "--ranks 8 --sizes 1MiB --format json");
  CHECK(mpi.at("results").at(0).at("params") == "algorithm=rabenseifner");
  const json ucc = run_json("sim --scenario juwels-booster --stack openmpi-4.1+ucc --algorithm "
                            "auto --ranks 8 --sizes 1KiB,1MiB --format json");
  CHECK(ucc.at("results").at(0).at("params") == "algorithm=recursive_knomial,radix=4");
  CHECK(ucc.at("results").at(1).at("params") == "algorithm=sra_knomial,radix=4");
  const json nccl = run_json("sim --scenario juwels-booster --stack openmpi-4.1+ucc+nccl "
                             "--algorithm auto --ranks 8 --sizes 1MiB --format json");
  CHECK(nccl.at("results").at(0).at("params").get<std::string>().rfind("algorithm=nccl_", 0) == 0);
  // The stack is a CSV column when named.
  const auto csv = run_collsim("sim --scenario juwels-booster --stack openmpi-4.1 --algorithm "
                               "ring --ranks 4 --sizes 1KiB --format csv");
  REQUIRE(csv.code == 0);
  CHECK(csv.out.find(",busbw_GBps,stack\n") != std::string::npos);
  CHECK(csv.out.find(",openmpi-4.1\n") != std::string::npos);
}

TEST_CASE("host buffers skip the staging that device buffers pay", "[cli][stacks]") {
  const std::string args = "sim --scenario juwels-booster --stack openmpi-4.1 --algorithm ring "
                           "--ranks 8 --sizes 64MiB --format json";
  const double device = run_json(args).at("results").at(0).at("time_us");
  const double host = run_json(args + " --buffers host").at("results").at(0).at("time_us");
  const double direct = run_json("sim --scenario juwels-booster --algorithm ring --ranks 8 "
                                 "--sizes 64MiB --format json")
                            .at("results")
                            .at(0)
                            .at("time_us");
  // On host buffers the ring's 8 MiB steps move by UCX's rendezvous: two more latencies each.
  CHECK(host > direct);
  CHECK(host < 1.01 * direct);
  CHECK(device > 5 * host);
  // With rendezvous off (UCX_RNDV_THRESH=inf) host buffers are exactly the direct stack.
  const TempScenario eager("jsc_eager",
                           "base: juwels-booster\nmpi: {env: {UCX_RNDV_THRESH: inf}}\n");
  const double eager_host = run_json("sim --scenario " + eager.path +
                                     " --stack openmpi-4.1 --buffers host --algorithm ring "
                                     "--ranks 8 --sizes 64MiB --format json")
                                .at("results")
                                .at(0)
                                .at("time_us");
  CHECK(eager_host == Approx(direct).epsilon(1e-12));
}

TEST_CASE("bad stack names and refused algorithms are one error, exit 2", "[cli][stacks]") {
  const auto unknown = run_collsim("sim --scenario juwels-booster --stack openmpi-4 --algorithm "
                                   "ring --ranks 4 --sizes 1KiB");
  CHECK(unknown.code == 2);
  CHECK(unknown.err.find("unknown stack 'openmpi-4'") != std::string::npos);
  CHECK(unknown.err.find("openmpi-4.1") != std::string::npos);
  const auto refused = run_collsim("sim --scenario juwels-booster --stack openmpi-4.1 "
                                   "--algorithm nccl_ring --ranks 4 --sizes 1KiB");
  CHECK(refused.code == 2);
  CHECK(refused.err ==
        "collsim: error: stack 'openmpi-4.1' runs MPI algorithms; nccl_ring is NCCL's "
        "(use --stack nccl or openmpi-4.1+ucc+nccl)\n");
  const auto buffers = run_collsim("sim --scenario juwels-booster --buffers gpu --algorithm "
                                   "ring --ranks 4 --sizes 1KiB");
  CHECK(buffers.code == 2);
  CHECK(buffers.err == "collsim: error: --buffers: expected device or host, got 'gpu'\n");

  const TempScenario stack("bad_stack", "base: juwels-booster\nstack: nccl2\n");
  const auto s = run_collsim("run " + stack.path);
  CHECK(s.code == 2);
  CHECK(s.err.rfind(stack.path + ":3:8: error: stack: unknown stack 'nccl2'", 0) == 0);
  const TempScenario study("bad_study_stack",
                           "base: juwels-booster\nstudies:\n  - collective: allreduce\n"
                           "    algorithms: [auto]\n    stacks: [nccl, openmpi]\n"
                           "    ranks: [4]\n    sizes: [1KiB]\n");
  const auto st = run_collsim("run " + study.path);
  CHECK(st.code == 2);
  CHECK(st.err.rfind(study.path + ":6:20: error: studies[0].stacks[1]: unknown stack 'openmpi'",
                     0) == 0);
  const TempScenario buf("bad_buffers", "base: juwels-booster\nbuffers: gpu\n");
  const auto b = run_collsim("run " + buf.path);
  CHECK(b.code == 2);
  CHECK(b.err.rfind(buf.path + ":3:10: error:", 0) == 0);
}

TEST_CASE("explain, tune and validate run under --stack", "[cli][stacks]") {
  // explain: auto is the stack's library; a library the stack does not run is refused.
  const json e = run_json("explain --scenario juwels-booster --collective allreduce --ranks 8 "
                          "--bytes 1000000000 --stack openmpi-4.1+ucc --format json");
  CHECK(e.at("library") == "ucc");
  CHECK(e.at("library_default").at("algorithm") == "sra_knomial");
  const json ranked = e.at("ranking");
  for (const json& r : ranked) {
    CHECK(r.at("algorithm").get<std::string>().rfind("nccl_", 0) != 0);
  }
  const auto refused = run_collsim("explain --scenario juwels-booster --collective allreduce "
                                   "--ranks 8 --bytes 1MiB --stack openmpi-4.1 --library nccl");
  CHECK(refused.code == 2);
  CHECK(refused.err.find("stack 'openmpi-4.1' runs MPI algorithms") != std::string::npos);
  // tune: NCCL's algorithms are skipped under an MPI stack, with the stack's reason.
  const json t = run_json("tune --scenario juwels-booster --stack openmpi-4.1 --ranks 8 --sizes "
                          "1MiB --format json");
  const std::string skipped = t.at("skipped").dump();
  CHECK(skipped.find("nccl_ring: stack 'openmpi-4.1' runs MPI algorithms") != std::string::npos);
  // The table and the tuning files it writes name the stack they were swept under.
  CHECK(t.at("stack") == "openmpi-4.1");
  const auto rules = run_collsim("tune --scenario juwels-booster --stack openmpi-4.1 --ranks 8 "
                                 "--sizes 1MiB --candidates ompi --format ompi-rules");
  CHECK(rules.code == 0);
  CHECK(rules.out.find("written by collsim tune (scenario 'juwels-booster', engine loggp, stack "
                       "openmpi-4.1)") != std::string::npos);
  CHECK(run_json("tune --scenario juwels-booster --ranks 8 --sizes 1MiB --format json")
            .at("stack")
            .is_null());
  // validate: the named stack's choice predicts the rows, on its data path.
  const json v = run_json("validate --scenario dgx-a100 --stack openmpi-4.1 --format json --log "
                          "tests/data/logs/a100sxm4_80gb_1x8_allreduce_128M_nccl-tests-2.19.4.txt");
  const json& row = v.at("rows").at(0);
  CHECK(row.at("chosen_by").get<std::string>().rfind("Open MPI 4.1", 0) == 0);
}

TEST_CASE("hpcx runs HCOLL's allreduce under auto, and a log with coll/hcoll enabled names it",
          "[cli][stacks][hpcx]") {
  const json j = run_json("sim --scenario cpu-hdr100-epyc --stack hpcx --algorithm auto --ranks "
                          "512 --sizes 8,1MiB --format json");
  for (const json& row : j.at("results")) {
    CHECK(row.at("stack") == "hpcx");
    CHECK(row.at("params").get<std::string>().find("algorithm=hcoll") != std::string::npos);
  }
  // 1 MiB is 256 fragments of 4 KiB, two in flight: far slower than one 8 B fragment.
  CHECK(j.at("results").at(1).at("time_us").get<double>() >
        100 * j.at("results").at(0).at("time_us").get<double>());
  // The ucc#981 log's launch command enables coll/hcoll: validate runs it under hpcx.
  const json v = run_json("validate --scenario cpu-hdr100-epyc --log "
                          "tests/data/logs/ucc981_4x128_cpu_hdr100_osu_allreduce_hcoll.txt "
                          "--format json");
  for (const json& row : v.at("rows")) {
    CHECK(row.at("algorithm") == "hcoll");
    CHECK(row.at("chosen_by").get<std::string>().find("stack hpcx from the log") !=
          std::string::npos);
  }
}

TEST_CASE("the mpi section's UCX variables: a bad value is one error at its place, exit 2",
          "[cli][stacks][mpi]") {
  const TempScenario tls("bad_ucx_tls", "base: cpu-hdr100-epyc\nstack: openmpi-4.1\nmpi:\n"
                                        "  env: {UCX_TLS: \"rc,sm,shmem\"}\n");
  const auto t =
      run_collsim("sim --scenario " + tls.path + " --algorithm ring --ranks 4 --sizes 1KiB");
  CHECK(t.code == 2);
  CHECK(t.err.rfind(tls.path + ":5:18: error: mpi.env.UCX_TLS: unknown UCX transport 'shmem'", 0) ==
        0);
  const TempScenario thresh("bad_ucx_rndv", "base: cpu-hdr100-epyc\nstack: hpcx\nmpi:\n"
                                            "  env: {UCX_RNDV_THRESH: 8 KiB}\n");
  const auto r =
      run_collsim("sim --scenario " + thresh.path + " --algorithm ring --ranks 4 --sizes 1KiB");
  CHECK(r.code == 2);
  CHECK(r.err.rfind(thresh.path + ":5:26: error: mpi.env.UCX_RNDV_THRESH: expected a size such "
                                  "as 8k",
                    0) == 0);
  // A good threshold moves the eager/rendezvous step: a 16 KiB ring step is eager under 64k.
  const TempScenario eager("ucx_rndv_64k", "base: cpu-hdr100-epyc\nstack: openmpi-4.1\nmpi:\n"
                                           "  env: {UCX_RNDV_THRESH: 64k}\n");
  const auto time = [](const std::string& scenario) {
    return run_json("sim --scenario " + scenario +
                    " --algorithm ring --ranks 8 --sizes 128KiB --format json")
        .at("results")
        .at(0)
        .at("time_us")
        .get<double>();
  };
  const TempScenario rndv("ucx_rndv_auto", "base: cpu-hdr100-epyc\nstack: openmpi-4.1\n");
  CHECK(time(eager.path) < time(rndv.path));
  // libfabric's thresholds on EFA, the same way (docs/stacks.md).
  const TempScenario efa("bad_fi_efa", "base: aws-hpc7g\nstack: openmpi-4.1\nmpi:\n"
                                       "  env: {FI_EFA_INTER_MAX_MEDIUM_MESSAGE_SIZE: 64k}\n");
  const auto e =
      run_collsim("sim --scenario " + efa.path + " --algorithm ring --ranks 32 --sizes 1MiB");
  CHECK(e.code == 2);
  CHECK(e.err.rfind(efa.path + ":5:47: error: mpi.env.FI_EFA_INTER_MAX_MEDIUM_MESSAGE_SIZE: "
                               "expected a whole number (libfabric reads it as a decimal count), "
                               "got '64k'",
                    0) == 0);
}

TEST_CASE("openmpi-5.0 runs coll/han's allreduce across nodes and coll/tuned on one node",
          "[cli][stacks][ompi5]") {
  const json across = run_json("sim --scenario cpu-hdr100-epyc --stack openmpi-5.0 --algorithm "
                               "auto --ranks 512 --sizes 1MiB --format json");
  const std::string params = across.at("results").at(0).at("params");
  CHECK(params.find("algorithm=han") != std::string::npos);
  CHECK(params.find("low_reduce=") != std::string::npos);
  const json one = run_json("sim --scenario cpu-hdr100-epyc --stack openmpi-5.0 --algorithm "
                            "auto --ranks 64 --sizes 1MiB --format json");
  CHECK(one.at("results").at(0).at("params").get<std::string>().find("algorithm=han") ==
        std::string::npos);
}

TEST_CASE("mpich-4 runs ch4's allreduce composition under auto, and explain --library mpich",
          "[cli][stacks][mpich]") {
  const json j = run_json("sim --scenario cpu-hdr100-epyc --stack mpich-4 --algorithm auto "
                          "--ranks 512 --sizes 8,1MiB --format json");
  for (const json& row : j.at("results")) {
    CHECK(row.at("stack") == "mpich-4");
    CHECK(row.at("params").get<std::string>().find("algorithm=mpich_ch4") != std::string::npos);
  }
  const json e = run_json("explain --scenario cpu-hdr100-epyc --collective allreduce --ranks 256 "
                          "--bytes 8B --library mpich --format json");
  CHECK(e.at("library_default").at("algorithm") == "mpich_ch4");
  const json b = run_json("explain --scenario cpu-hdr100-epyc --collective bcast --ranks 256 "
                          "--bytes 8B --library mpich --format json");
  CHECK(b.at("library_default")
            .at("reason")
            .get<std::string>()
            .find("MPICH's own selection for bcast is not modelled") != std::string::npos);
  // Under a named stack, auto counts elements in the log's datatype: the ucc#981 log measured
  // MPI_CHAR, so MPIR's choice among node roots sees one element per byte (MPI_FLOAT's 4 in sim).
  CHECK(j.at("results").at(0).at("params").get<std::string>().find("element_bytes=4") !=
        std::string::npos);
  const json v = run_json("validate --scenario cpu-hdr100-epyc --stack mpich-4 --log "
                          "tests/data/logs/ucc981_4x128_cpu_hdr100_osu_allreduce_hcoll.txt "
                          "--format json");
  for (const json& row : v.at("rows")) {
    CHECK(row.at("params").at("element_bytes") == "1");
  }
}

TEST_CASE("explain --library names the stack that adds an MPI library's data path when the "
          "scenario names none",
          "[cli][stacks][explain]") {
  // Without a stack UCC's choice runs on collsim's direct data path: 30.8 ms on JUWELS, where
  // the openmpi-4.1+ucc stack's cuda_ipc streams give 18.4 ms (docs/validation.md).
  const std::string call =
      "explain --scenario juwels-booster --collective allreduce --ranks 8 --bytes 1000000000 ";
  const json bare = run_json(call + "--library ucc --format json");
  CHECK(bare.at("stack_note").get<std::string>().find("--stack openmpi-4.1+ucc adds") !=
        std::string::npos);
  const json stacked = run_json(call + "--library ucc --stack openmpi-4.1+ucc --format json");
  CHECK_FALSE(stacked.contains("stack_note"));
  CHECK(stacked.at("library_default").at("time_us").get<double>() <
        bare.at("library_default").at("time_us").get<double>());
  CHECK_FALSE(run_json(call + "--library nccl --format json").contains("stack_note"));
  const json hcoll = run_json("explain --scenario cpu-hdr100-epyc --collective allreduce "
                              "--ranks 256 --bytes 8B --library hcoll --format json");
  CHECK(hcoll.at("stack_note").get<std::string>().find("--stack hpcx adds") != std::string::npos);
}

TEST_CASE("bench/validation/cpu_logs.sh prints the CPU logs' table docs/validation.md shows",
          "[cli][stacks][validate]") {
  // Each shared CPU log under the stacks the docs name (issue 18's CPU target: aws_hpc7g under
  // openmpi-4.1, ucc#981 under the hpcx its launch line names, the Azure IMB log under mpich-4).
  const std::string cmd =
      fmt::format("MARKDOWN=1 STACKS='openmpi-4.1 mpich-4' bash {0}/bench/validation/cpu_logs.sh "
                  "{1} {0}/tests/data/logs 2>/dev/null",
                  COLLSIM_SOURCE_DIR, COLLSIM_BINARY);
  const std::string out = script_output(cmd);
  const std::string doc = slurp(std::string(COLLSIM_SOURCE_DIR) + "/docs/validation.md");
  const auto found = collsim::testing::lines_in_doc(out, doc, "| `");
  CAPTURE(found.missing);
  CHECK(found.missing.empty());
  CHECK(found.rows == 7);
  CHECK(out.find("| `aws_hpc7g` | `openmpi-4.1` | 76 | 12.8 % | 27.6 % |") != std::string::npos);
}

TEST_CASE("bench/validation/pt2pt_logs.sh prints the OSU point-to-point table docs/validation.md "
          "shows",
          "[cli][stacks][validate]") {
  // The EESSI and hpc7g osu_latency/osu_bw logs under direct and openmpi-4.1 (libfabric's EFA
  // protocols on hpc7g, UCX's GPU paths on EESSI).
  const std::string cmd =
      fmt::format("bash {0}/bench/validation/pt2pt_logs.sh {1} {0}/tests/data/logs 2>/dev/null",
                  COLLSIM_SOURCE_DIR, COLLSIM_BINARY);
  const std::string out = script_output(cmd);
  const auto found = collsim::testing::lines_in_doc(
      out, slurp(std::string(COLLSIM_SOURCE_DIR) + "/docs/validation.md"), "| osu_");
  CAPTURE(found.missing);
  CHECK(found.missing.empty());
  CHECK(found.rows == 6);
  CHECK(out.find("| aws_hpc7g (EFA, 2 instances) | `openmpi-4.1` | osu_latency | 24 | 48.1 % "
                 "(57.8 %) | 15.2 % (24.5 %) |") != std::string::npos);
}
