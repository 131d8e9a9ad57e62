// `collsim workload run` (docs/workload-format.md): a step is its calls' standalone predictions
// (the ones `collsim expect` prints) put together with the compute, as the docs' formula says.

#include "cli_test_support.hpp"

#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <string>

using collsim::testing::Output;
using collsim::testing::run_collsim;
using collsim::testing::run_json;
using collsim::testing::TempScenario;

namespace {

double expect_us(const std::string& scenario, const char* collective, int ranks, const char* size) {
  const auto j = run_json(fmt::format("expect --scenario {} --collective {} --ranks {} --sizes {} "
                                      "--format json",
                                      scenario, collective, ranks, size));
  return j.at("rows").at(0).at("time_us").get<double>();
}

} // namespace

TEST_CASE("a workload without overlap costs exactly the sum of its calls' standalone predictions",
          "[cli][workload]") {
  const TempScenario w("workload-sum", "compute: 2 ms\nphases:\n"
                                       "  - {collective: allreduce, bytes: 1 MiB, calls: 3}\n"
                                       "  - {collective: allgather, bytes: 4 MiB, calls: 2, "
                                       "group: node}\n"
                                       "  - {collective: allreduce, bytes: 64 KiB, calls: 5, "
                                       "group: across_nodes}\n");
  const auto j =
      run_json("workload run " + w.path + " --scenario dgx-a100 --nodes 2 --format json");
  const auto& p = j.at("phases");
  REQUIRE(p.size() == 3);
  CHECK(p[0].at("ranks") == 16);
  CHECK(p[1].at("ranks") == 8);
  CHECK(p[2].at("ranks") == 2);
  // Each call as expect predicts it on the same communicator: the whole job, one node, and one
  // rank on each of the two nodes.
  CHECK(p[0].at("per_call_us").get<double>() ==
        Approx(expect_us("dgx-a100", "allreduce", 16, "1MiB")));
  CHECK(p[1].at("per_call_us").get<double>() ==
        Approx(expect_us("dgx-a100", "allgather", 8, "4MiB")));
  // One rank per node; its own study, as the base's asks for more ranks than that leaves room for.
  const TempScenario one_per_node(
      "workload-one-per-node", "base: dgx-a100\ntopology:\n  placement:\n    ranks_per_node: 1\n"
                               "studies:\n  - {collective: allreduce, algorithms: [ring], ranks: "
                               "2, sizes: 8B}\n");
  CHECK(p[2].at("per_call_us").get<double>() ==
        Approx(expect_us(one_per_node.path, "allreduce", 2, "64KiB")));
  double sum = 0.0;
  for (const auto& phase : p) {
    CHECK(phase.at("total_us").get<double>() ==
          Approx(phase.at("per_call_us").get<double>() * phase.at("calls").get<double>()));
    sum += phase.at("total_us").get<double>();
  }
  CHECK(j.at("communication_us").get<double>() == Approx(sum));
  CHECK(j.at("overlapped_us") == 0.0);
  CHECK(j.at("step_us").get<double>() == Approx(2000.0 + sum));
}

TEST_CASE("with full overlap a workload's step is max(compute, communication)", "[cli][workload]") {
  const auto step = [](const char* compute) {
    const TempScenario w("workload-overlap",
                         fmt::format("compute: {}\nphases:\n  - {{collective: allreduce, bytes: "
                                     "16 MiB, calls: 10, overlap: 1}}\n",
                                     compute));
    return run_json("workload run " + w.path + " --scenario dgx-a100 --format json");
  };
  const auto small = step("1 us");
  const double comm = small.at("communication_us").get<double>();
  CHECK(small.at("step_us").get<double>() == Approx(comm));
  const auto large = step("1 s");
  CHECK(large.at("step_us").get<double>() == Approx(1e6));
  CHECK(large.at("exposed_us").get<double>() == Approx(0.0).margin(1e-6));
}

TEST_CASE("the shipped example workloads run with the command in their header", "[cli][workload]") {
  std::size_t ran = 0;
  for (const auto& entry : std::filesystem::directory_iterator(
           std::filesystem::path(COLLSIM_SOURCE_DIR) / "workloads")) {
    INFO(entry.path());
    std::ifstream in(entry.path());
    std::string command;
    for (std::string line; std::getline(in, line) && command.empty();) {
      if (line.starts_with("#   collsim ")) {
        command = line.substr(12);
      }
    }
    REQUIRE(!command.empty());
    const auto o = run_collsim(command);
    INFO(o.err);
    CHECK(o.code == 0);
    CHECK((o.out.find("# step ") != std::string::npos ||
           o.out.find("# collsim compare:") != std::string::npos));
    ++ran;
  }
  CHECK(ran >= 5);
}

TEST_CASE("collsim workload run refuses what it cannot run with one line and exit 2",
          "[cli][workload][errors]") {
  const TempScenario node("workload-node", "phases:\n  - {collective: allreduce, bytes: 8, "
                                           "group: node}\n");
  const auto u =
      run_collsim("workload run " + node.path + " --scenario textbook --ranks-per-node 8");
  CHECK(u.code == 2);
  CHECK(u.err == "collsim: error: " + node.path +
                     ":3:5: phase 'allreduce': scenario 'textbook' has a uniform topology, which "
                     "has no nodes: only group world runs on it\n");
  const auto n = run_collsim("workload run " + node.path + " --scenario textbook --nodes 2");
  CHECK(n.code == 2);
  CHECK(n.err.find("--nodes 2: scenario 'textbook' has a uniform topology") != std::string::npos);
  const auto missing = run_collsim("workload run no-such-workload.yaml --scenario dgx-a100");
  CHECK(missing.code == 2);
  CHECK(missing.err ==
        "no-such-workload.yaml: error: cannot open the workload file: No such file or directory\n");
  const TempScenario bad("workload-bad", "phases:\n  - {collective: allreduce, bytes: lots}\n");
  const auto b = run_collsim("workload run " + bad.path + " --scenario dgx-a100");
  CHECK(b.code == 2);
  CHECK(b.err.find("workload-bad.yaml:3:36: error: phases[0].bytes: expected a size of at least "
                   "1 B like '25 MiB', got 'lots'") != std::string::npos);
}

TEST_CASE("collsim compare puts one step on several machines with its time and cost",
          "[cli][compare]") {
  const TempScenario w("compare-step", "compute: 50 ms\nphases:\n"
                                       "  - {collective: allreduce, bytes: 64 MiB, calls: 4}\n"
                                       "  - {collective: allgather, bytes: 8 MiB, calls: 8, "
                                       "group: node, overlap: 1}\n");
  const auto j = run_json("compare --workload " + w.path +
                          " --scenarios dgx-a100:2,dgx-h100:2,dgx-h100:1 --price dgx-a100=32.77 "
                          "--price dgx-h100=98.32 --steps 3600 --format json");
  const auto& m = j.at("machines");
  REQUIRE(m.size() == 3);
  CHECK(m[0].at("label") == "dgx-a100 x 2");
  CHECK(m[2].at("nodes") == 1);
  for (const auto& x : m) {
    const double step = x.at("step_us").get<double>();
    // One step is what workload run says on the same machine.
    const auto one =
        run_json(fmt::format("workload run {} --scenario {} --nodes {} --format json", w.path,
                             x.at("scenario").get<std::string>(), x.at("nodes").get<int>()));
    CHECK(step == Approx(one.at("step_us").get<double>()));
    CHECK(step == Approx(x.at("compute_us").get<double>() + x.at("exposed_us").get<double>()));
    // 3600 steps: step (us) x 3600 / 3.6e9 hours; cost = hours x nodes x price.
    CHECK(x.at("hours").get<double>() == Approx(step * 3600 / 3.6e9));
    CHECK(x.at("cost").get<double>() ==
          Approx(x.at("hours").get<double>() * x.at("nodes").get<double>() *
                 x.at("price_per_node_hour").get<double>()));
  }
  // An H100 node is faster than an A100 node at the same step.
  CHECK(m[1].at("step_us").get<double>() < m[0].at("step_us").get<double>());
  const auto csv =
      run_collsim("compare --workload " + w.path + " --scenarios dgx-a100:2 --format csv");
  REQUIRE(csv.code == 0);
  CHECK(csv.out.starts_with("scenario,workload,label,nodes,ranks_per_node,step_us,compute_us,"
                            "communication_us,exposed_us,steps,hours,price_per_node_hour,cost,"
                            "dominant_phase\ndgx-a100,compare-step,dgx-a100 x 2,2,8,"));
}

TEST_CASE("collsim compare refuses bad machines and prices with one line and exit 2",
          "[cli][compare][errors]") {
  const TempScenario w("compare-bad", "phases:\n  - {collective: allreduce, bytes: 1 MiB}\n");
  const auto price =
      run_collsim("compare --workload " + w.path + " --scenarios dgx-a100 --price dgx-a100=cheap");
  CHECK(price.code == 2);
  CHECK(price.err == "collsim: error: --price: expected SCENARIO=PRICE (per node-hour, a number "
                     ">= 0), got 'dgx-a100=cheap'\n");
  const auto other =
      run_collsim("compare --workload " + w.path + " --scenarios dgx-a100 --price dgx-h100=1");
  CHECK(other.code == 2);
  CHECK(other.err.find("unknown scenario in --price 'dgx-h100'") != std::string::npos);
  const auto none = run_collsim("compare --scenarios dgx-a100:2");
  CHECK(none.code == 2);
  CHECK(none.err == "collsim: error: --scenarios: 'dgx-a100' names no workload: give --workload "
                    "or SCENARIO:NODES:WORKLOAD\n");
  const auto fields = run_collsim("compare --workload " + w.path + " --scenarios a:1:b:c");
  CHECK(fields.code == 2);
  const auto uniform = run_collsim("compare --workload " + w.path + " --scenarios textbook");
  CHECK(uniform.code == 2);
  CHECK(uniform.err.find("'textbook' has a uniform topology without nodes") != std::string::npos);
}

TEST_CASE(
    "workload import turns a run's NCCL debug lines or profiler trace into a workload that runs",
    "[cli][workload][import]") {
  const std::string out = std::string(COLLSIM_SOURCE_DIR) + "/build/megatron-tail.yaml";
  const Output o =
      run_collsim("workload import --nccl-debug "
                  "tests/data/workloads/nccl-debug-coll-megatron-4xgpu-rank0-tail.log -o " +
                  out);
  INFO(o.err);
  REQUIRE(o.code == 0);
  CHECK(o.err == "tests/data/workloads/nccl-debug-coll-megatron-4xgpu-rank0-tail.log: 62 "
                 "collective lines of process "
                 "c0b58536a5f1:324666 -> 7 phases\n");
  const Output run = run_collsim("workload run " + out + " --scenario dgx-a100");
  std::remove(out.c_str());
  INFO(run.err);
  REQUIRE(run.code == 0);
  CHECK(run.out.find("# collsim workload run: 'megatron-tail' on scenario 'dgx-a100'") == 0);
  CHECK(run.out.find("  AllReduce 8 MiB n=2          allreduce      world             2      "
                     "8388608      49  ") != std::string::npos);
  CHECK(run.out.find("  AllGather 16 B n=4           allgather      world             4           "
                     "16       1  ") != std::string::npos);

  const Output trace =
      run_collsim("workload import --kineto "
                  "tests/data/workloads/kineto-hta-nccl-data-2xA100-allreduce-broadcast.json.gz "
                  "--name hta");
  REQUIRE(trace.code == 0);
  CHECK(trace.out.find(
            "# from 27 record_param_comms events of rank 0 of 2 in "
            "kineto-hta-nccl-data-2xA100-allreduce-broadcast.json.gz, 3 steps (its ProfilerStep "
            "annotations)\n# left out: 6 x wait\n") != std::string::npos);
  CHECK(trace.out.find(
            "  - name: allreduce 8196000 B n=2   # 2049000 x float\n    collective: allreduce\n    "
            "bytes: 8196000\n    calls: 1\n    group: world\n    ranks: 2\n") != std::string::npos);

  const Output neither = run_collsim("workload import");
  CHECK(neither.code == 2);
  CHECK(neither.err.find("give --nccl-debug LOG or --kineto TRACE") != std::string::npos);
  const Output both = run_collsim("workload import --nccl-debug a.log --kineto b.json");
  CHECK(both.code == 2);
  const TempScenario garbage("not_a_log", "hello\n");
  const Output bad = run_collsim("workload import --nccl-debug " + garbage.path);
  CHECK(bad.code == 2);
  CHECK(bad.err.find("not_a_log.yaml:1:1: error: no NCCL collective lines") != std::string::npos);
}

TEST_CASE("collsim compare --file runs variants of a scenario: HDR against NDR and two HDR ports",
          "[cli][compare]") {
  // The shipped example: variants of dgx-a100 on 16 nodes.
  const auto j = run_json("compare --file workloads/hdr-vs-ndr.yaml --format json");
  CHECK(j.at("steps") == 1000);
  const auto& m = j.at("machines");
  REQUIRE(m.size() == 5);
  CHECK(m[0].at("label") == "HDR200 (dgx-a100) x 16");
  CHECK(m[1].at("label") == "NDR400 x 16");
  CHECK(m[4].at("nodes") == 8);
  const auto comm = [&](int i) { return m[i].at("communication_us").get<double>(); };
  // Twice the NIC rate shortens the data-parallel allreduces; NDR and 2 x HDR have the same rate.
  CHECK(comm(1) < comm(0));
  CHECK(comm(2) < comm(0));
  // The variant is the preset with one key changed: the same as a scenario file that says so.
  const TempScenario ndr(
      "ndr-variant",
      "base: dgx-a100\ntopology: {node: {nic_kind: ib_ndr, nic_bandwidth: 400 Gb/s}}\n");
  const auto one = run_json("compare --workload workloads/tp-dp-layers.yaml --scenarios " +
                            ndr.path + ":16 --format json");
  CHECK(one.at("machines").at(0).at("communication_us").get<double>() == Approx(comm(1)));

  // Prices per variant, and errors at their place in the compare file.
  const TempScenario priced("compare-priced",
                            "workload: ../workloads/tp-dp-layers.yaml\nnodes: 2\nsteps: 3600\n"
                            "variants:\n  - {label: a100, scenario: dgx-a100, price: 10}\n");
  const auto p = run_json("compare --file " + priced.path + " --format json");
  const auto& x = p.at("machines").at(0);
  CHECK(x.at("cost").get<double>() == Approx(x.at("hours").get<double>() * 2 * 10));
  const TempScenario bad(
      "compare-bad-variant",
      "workload: ../workloads/tp-dp-layers.yaml\nvariants:\n"
      "  - label: typo\n    base: dgx-a100\n    topology: {node: {nic_bandwith: 1 GB/s}}\n");
  const auto e = run_collsim("compare --file " + bad.path);
  CHECK(e.code == 2);
  CHECK(e.err.find("compare-bad-variant.yaml:6:23: error: topology.node.nic_bandwith: unknown key "
                   "'nic_bandwith' "
                   "(did you mean 'nic_bandwidth'?)") != std::string::npos);
  const TempScenario mixed("compare-mixed",
                           "variants:\n  - {label: x, scenario: dgx-a100, topology: {nodes: 2}}\n");
  const auto mx =
      run_collsim("compare --file " + mixed.path + " --workload workloads/tp-dp-layers.yaml");
  CHECK(mx.code == 2);
  CHECK(mx.err.find("compare-mixed.yaml:3:36: error: variants[0].topology: a machine names a whole "
                    "scenario with "
                    "'scenario'; to change keys of it, write 'base' instead") != std::string::npos);
}
