// NCCL's own choice as the default parameters of NCCL algorithms (docs/stacks.md): `sim` without
// --param runs what `explain` says collsim runs, a pinned parameter wins, and `nccl.env` changes
// the choice as NCCL's variables do; `collsim stacks` lists the stacks.

#include "cli_test_support.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

namespace {

using collsim::testing::run_collsim;
using collsim::testing::run_json;
using collsim::testing::TempScenario;
using nlohmann::json;

/// A scenario deriving from dgx-a100 with an `nccl.env` section.
struct EnvScenario : TempScenario {
  EnvScenario(const std::string& name, const std::string& env)
      : TempScenario(name, "base: dgx-a100\nnccl:\n  env:\n" + env +
                               "studies:\n  - collective: allreduce\n    algorithms: [nccl_ring]\n"
                               "    ranks: [8]\n    sizes: [1MiB]\n") {}
};

/// The first result row of `collsim sim ARGS --format json`.
json sim_row(const std::string& args) {
  return run_json("sim " + args + " --format json").at("results").at(0);
}

/// `sim ARGS` fills in `params` (NCCL's variables) and takes the time of `sim PINNED`, which names
/// the same values by hand.
void check_filled(const std::string& args, const std::string& params, const std::string& pinned) {
  const json row = sim_row(args);
  CHECK(row.at("params") == params);
  CHECK(row.at("time_us").get<double>() ==
        Approx(sim_row(pinned).at("time_us").get<double>()).epsilon(1e-12));
}

} // namespace

TEST_CASE("sim runs an NCCL algorithm with NCCL's own protocol and channels unless pinned",
          "[cli][stacks]") {
  const json e = run_json(
      "explain --scenario dgx-a100 --collective allreduce --ranks 8 --bytes 1MiB --format json");
  const json& def = e.at("library_default");
  REQUIRE(def.at("algorithm") == "nccl_ring");
  const std::string protocol = def.at("params").at("protocol");
  const std::string channels = def.at("params").at("channels");
  // No --param: the row shows the values NCCL's model chose, and its time is explain's.
  const json s = run_json("sim --scenario dgx-a100 --algorithm nccl_ring --ranks 8 --sizes 1MiB "
                          "--format json");
  const json& row = s.at("results").at(0);
  CHECK(row.at("params") == "channels=" + channels + ",protocol=" + protocol);
  CHECK(row.at("time_us").get<double>() == Approx(def.at("time_us").get<double>()).epsilon(1e-9));
  // A pinned parameter wins; the other one is still NCCL's.
  const json pinned = run_json("sim --scenario dgx-a100 --algorithm nccl_ring --ranks 8 --sizes "
                               "1MiB --param channels=3 --format json");
  CHECK(pinned.at("results").at(0).at("params") == "protocol=" + protocol);
  const json both = run_json("sim --scenario dgx-a100 --algorithm nccl_ring --ranks 8 --sizes "
                             "1MiB --param channels=3 --param protocol=simple --format json");
  CHECK(!both.at("results").at(0).contains("params"));
  // The table shows them in a trailing column.
  const auto t =
      run_collsim("sim --scenario dgx-a100 --algorithm nccl_ring --ranks 8 --sizes 1MiB");
  CHECK(t.out.find("params (the library's choice)") != std::string::npos);
  CHECK(t.out.find("channels=" + channels + ",protocol=" + protocol) != std::string::npos);
}

TEST_CASE("nccl.env constrains NCCL's choice as NCCL's variables do", "[cli][stacks]") {
  // 1 MiB on one DGX A100: NCCL picks Ring/LL by default (explain's test); NCCL_PROTO=Simple
  // forces Simple, NCCL_MAX_NCHANNELS caps the channels, NCCL_ALGO=Tree makes auto a tree.
  const EnvScenario env(
      "env_simple", "    NCCL_PROTO: Simple\n    NCCL_MAX_NCHANNELS: 4\n    NCCL_DEBUG: INFO\n");
  const json s = run_json("sim --scenario " + env.path +
                          " --algorithm nccl_ring --ranks 8 --sizes 1MiB --format json");
  CHECK(s.at("results").at(0).at("params") == "channels=4,protocol=simple");
  const EnvScenario tree("env_tree", "    NCCL_ALGO: Tree\n");
  const json e = run_json("explain --scenario " + tree.path +
                          " --collective allreduce --ranks 8 --bytes 1MiB --format json");
  CHECK(e.at("library_default").at("algorithm") == "nccl_tree");
  // A named algorithm is not taken away by NCCL_ALGO.
  const json r = run_json("sim --scenario " + tree.path +
                          " --algorithm nccl_ring --ranks 8 --sizes 1MiB --format json");
  CHECK(r.at("results").at(0).at("algorithm") == "nccl_ring");
}

TEST_CASE("NCCL_BUFFSIZE and its LL variants size the chunks of the protocol that runs",
          "[cli][stacks]") {
  // 1 GiB on 8 A100s under NCCL_PROTO=Simple is a ring of 24 channels, each channel's 44.7 MB
  // in loops of 8 chunks: 2 MiB chunks (3 loops) with the default 4 MiB buffer, 512 KiB chunks
  // (11 loops) with NCCL_BUFFSIZE=1048576 (tests/algorithms checks the chunks). The row names
  // the buffer, and its time is that of the parameter pinned by hand.
  const EnvScenario buf("env_buffer", "    NCCL_BUFFSIZE: 1048576\n    NCCL_LL_BUFFSIZE: 131072\n"
                                      "    NCCL_PROTO: Simple\n");
  check_filled("--scenario " + buf.path + " --algorithm nccl_ring --ranks 8 --sizes 1GiB",
               "channels=24,protocol=simple,buffsize=1048576",
               "--scenario dgx-a100 --algorithm nccl_ring --ranks 8 --sizes 1GiB --param "
               "channels=24 --param protocol=simple --param buffsize=1048576");
  // The LL buffer is the LL protocol's only: a pinned LL run takes 131072.
  CHECK(sim_row("--scenario " + buf.path +
                " --algorithm nccl_ring --ranks 8 --sizes 1MiB --param protocol=ll")
            .at("params") == "channels=24,buffsize=131072");
  const auto tiny = run_collsim("sim --scenario dgx-a100 --algorithm nccl_tree --ranks 8 --sizes "
                                "1MiB --param buffsize=1024");
  CHECK(tiny.out.find("# skipped: nccl_tree at 8 ranks, 1048576 bytes: buffsize=1024 is below "
                      "65536 bytes (0 takes NCCL's default buffer)") != std::string::npos);
  // On two nodes the ring's schedule collapses by symmetry, which does not lift the refusal.
  const auto two = run_collsim("sim --scenario dgx-a100 --algorithm nccl_ring --ranks 16 --sizes "
                               "1GiB --param buffsize=1000");
  CHECK(two.code == 0);
  CHECK(two.out.find("# skipped: nccl_ring at 16 ranks, 1073741824 bytes: buffsize=1000 is below "
                     "65536 bytes") != std::string::npos);
}

TEST_CASE("NCCL_P2P_NET_CHUNKSIZE sizes the chunks of NCCL's point-to-point transfers",
          "[cli][stacks]") {
  // Two DGX A100 nodes: comm->p2pChunkSize is the network's (init.cc computeBuffSizes).
  const EnvScenario net("env_p2p", "    NCCL_P2P_NET_CHUNKSIZE: 524288\n"
                                   "    NCCL_P2P_NVL_CHUNKSIZE: 65536\n");
  const std::string call = " --collective alltoall --algorithm nccl_p2p --sizes 64MiB --param "
                           "protocol=simple --param channels=2";
  check_filled("--scenario " + net.path + call + " --ranks 16", "chunk=524288",
               "--scenario dgx-a100" + call + " --ranks 16 --param chunk=524288");
  // On one node the NVLink variable applies.
  CHECK(sim_row("--scenario " + net.path + call + " --ranks 8").at("params") == "chunk=65536");
}

TEST_CASE("without GPUDirect RDMA NCCL's network steps go through host memory", "[cli][stacks]") {
  // JUWELS Booster: 2 GPUs and 2 HDR NICs under each PCIe switch. Staged (pcie.gdr: false), a
  // GPU's sends go up the switch's uplink to the socket and down to the NIC, and the NICs'
  // receives up and down again to the GPUs: the uplink carries four 25 GB/s streams each way.
  const TempScenario staged("no_gdr", "base: juwels-booster\ntopology:\n  node:\n    pcie: "
                                      "{gdr: false}\n");
  const std::string call = " --algorithm nccl_ring --ranks 8 --sizes 64MiB";
  const auto time = [&](const std::string& scenario, const std::string& engine) {
    return sim_row("--scenario " + scenario + call + " --engine " + engine)
        .at("time_us")
        .get<double>();
  };
  const double direct = time("juwels-booster", "simgrid");
  CHECK(time(staged.path, "simgrid") > 2.5 * direct);
  // loggp shares no link of a route between nodes: only the longer route's latency would show,
  // hidden here by the pipeline.
  CHECK(time(staged.path, "loggp") == Approx(time("juwels-booster", "loggp")).epsilon(0.01));
}

TEST_CASE("a bad NCCL variable is one error at its place, exit 2", "[cli][stacks]") {
  const EnvScenario bad("env_bad", "    NCCL_ALGO: Rnig\n");
  const auto o =
      run_collsim("sim --scenario " + bad.path + " --algorithm nccl_ring --ranks 8 --sizes 1MiB");
  CHECK(o.code == 2);
  CHECK(o.err == bad.path + ":5:16: error: nccl.env.NCCL_ALGO: 'rnig' is not one of tree, ring, "
                            "collnetdirect, collnetchain, nvls, nvlstree, pat\n");
  // `collsim run` of a scenario setting one variable: its error line after "path:".
  const auto run_error = [](const std::string& name, const std::string& env) {
    const EnvScenario scenario(name, env);
    const auto r = run_collsim("run " + scenario.path);
    CHECK(r.code == 2);
    CHECK(r.err.rfind(scenario.path + ":", 0) == 0);
    return r.err.substr(std::min(r.err.size(), scenario.path.size() + 1));
  };
  CHECK(run_error("env_count", "    NCCL_MIN_NCHANNELS: 100\n") ==
        "5:25: error: nccl.env.NCCL_MIN_NCHANNELS: expected a channel count from 1 to 64, got "
        "'100'\n");
  CHECK(run_error("env_chunk", "    NCCL_NVLS_CHUNKSIZE: 128K\n") ==
        "5:26: error: nccl.env.NCCL_NVLS_CHUNKSIZE: expected a chunk size in bytes from 4096 to "
        "16777216, got '128K'\n");
  CHECK(run_error("env_buffsize", "    NCCL_LL128_BUFFSIZE: 4096\n") ==
        "5:26: error: nccl.env.NCCL_LL128_BUFFSIZE: expected a buffer size in bytes from 65536 to "
        "134217728, got '4096'\n");
  CHECK(run_error("env_net_peer", "    NCCL_NCHANNELS_PER_NET_PEER: 0\n") ==
        "5:34: error: nccl.env.NCCL_NCHANNELS_PER_NET_PEER: expected a channel count from 1 to "
        "64, got '0'\n");
  CHECK(run_error("env_net_overhead", "    NCCL_NET_OVERHEAD: 2us\n") ==
        "5:24: error: nccl.env.NCCL_NET_OVERHEAD: expected a post overhead in nanoseconds from 0 "
        "to 1000000, got '2us'\n");
  CHECK(run_error("env_p2p_chunk", "    NCCL_P2P_NET_CHUNKSIZE: 64M\n") ==
        "5:29: error: nccl.env.NCCL_P2P_NET_CHUNKSIZE: expected a chunk size in bytes from 4096 "
        "to 16777216, got '64M'\n");
}

TEST_CASE("collsim stacks lists the stacks with their sources", "[cli][stacks]") {
  const json j = run_json("stacks --format json");
  REQUIRE(j.size() == 9);
  CHECK(j.at(8).at("name") == "mvapich2-gdr");
  CHECK(j.at(8).at("auto") ==
        "Open MPI 4.1 coll/tuned's fixed rules, or the algorithm mpi.env forces");
  CHECK(j.at(7).at("name") == "mpich-4");
  CHECK(j.at(7).at("auto") == "MPICH 4 ch4's allreduce composition, else Open MPI 4.1's");
  CHECK(j.at(5).at("name") == "hpcx");
  CHECK(j.at(5).at("auto") == "HCOLL's hierarchical allreduce, else Open MPI 4.1's");
  CHECK(j.at(6).at("name") == "openmpi-5.0");
  CHECK(j.at(0).at("implicit") == true);
  CHECK(j.at(2).at("name") == "openmpi-4.1");
  CHECK(j.at(2).at("implicit") == false);
  CHECK(j.at(2).at("auto") ==
        "Open MPI 4.1 coll/tuned's fixed rules, or the algorithm mpi.env forces");
  CHECK(j.at(2).at("source").get<std::string>().find("coll_cuda_allreduce.c") != std::string::npos);
  const auto& mpi = j.at(2).at("algorithms");
  CHECK(std::find(mpi.begin(), mpi.end(), "allreduce:ring") != mpi.end());
  CHECK(std::find(mpi.begin(), mpi.end(), "allreduce:nccl_ring") == mpi.end());
  CHECK(j.at(0).at("name") == "nccl");
  CHECK(j.at(0).at("source").get<std::string>().find("prims_simple.h") != std::string::npos);
  const auto& algos = j.at(0).at("algorithms");
  CHECK(std::find(algos.begin(), algos.end(), "allreduce:nccl_ring") != algos.end());
  CHECK(std::find(algos.begin(), algos.end(), "allreduce:ring") == algos.end());
  CHECK(j.at(1).at("name") == "direct");
  const auto t = run_collsim("stacks");
  CHECK(t.code == 0);
  CHECK(t.out.rfind("nccl (when no stack is named)\n", 0) == 0);
  CHECK(t.out.find("openmpi-4.1+ucc+nccl\n") != std::string::npos);
}

TEST_CASE("NCCL channels share a PCIe switch's uplink to host memory when peer-to-peer is off",
          "[cli][stacks][pcie]") {
  // pcie3-2gpu-nop2p: two GPUs under one Gen3 switch, P2P off, so NCCL's SHM transport stages
  // every byte through host memory: GPU -> switch -> CPU -> switch -> GPU. The uplink carries
  // 15.75 GB/s, of which NCCL counts 12 as data (topo.h: width x speed / 80); in each direction
  // both GPUs' ports send over it, so each gets half: 6 GB/s each way, shared by its channels.
  // Ring allreduce busbw on 2 ranks is that per-direction rate; a broadcast sends from one GPU
  // only, whose port has the uplink to itself: 12 GB/s. Two-way staged traffic keeps the preset's
  // pcie.staged_duplex_efficiency (0.66, NVIDIA/nccl#384) of it: 6 x 0.66 = 3.96 GB/s; a
  // derived scenario without that loss shows the uplink's share alone.
  const TempScenario lossless("pcie-lossless",
                              "base: pcie3-2gpu-nop2p\ntopology:\n  node:\n    pcie: "
                              "{staged_duplex_efficiency: 1}\nstudies:\n  - collective: "
                              "allreduce\n    algorithms: [nccl_ring]\n    ranks: [2]\n"
                              "    sizes: [1GiB]\n");
  const std::string common = " --algorithm nccl_ring --param channels=2 --param protocol=simple "
                             "--ranks 2 --sizes 1GiB --format json";
  const auto busbw = [&](const std::string& scenario, const char* collective) {
    return run_json("sim --scenario " + scenario + " --collective " + collective + common)
        .at("results")
        .at(0)
        .at("busbw_GBps")
        .get<double>();
  };
  CHECK(busbw(lossless.path, "allreduce") == Approx(6.0).epsilon(0.01));
  CHECK(busbw("pcie3-2gpu-nop2p", "allreduce") == Approx(6.0 * 0.66).epsilon(0.01));
  CHECK(busbw("pcie3-2gpu-nop2p", "bcast") == Approx(12.0).epsilon(0.01));
  // simgrid shares the uplink by max-min itself; the stack leaves it to it instead of charging
  // the share twice.
  CHECK(busbw(lossless.path + " --engine simgrid", "allreduce") == Approx(6.0).epsilon(0.02));
  CHECK(busbw("pcie3-2gpu-nop2p --engine simgrid", "allreduce") ==
        Approx(6.0 * 0.66).epsilon(0.02));
  // With P2P the GPUs meet at the switch: no link in the middle is shared, 12 GB/s each way.
  const TempScenario p2p("pcie-p2p-on",
                         "base: pcie3-2gpu-nop2p\ntopology:\n  node:\n    pcie: {p2p: true}\n"
                         "studies:\n  - collective: allreduce\n    algorithms: [nccl_ring]\n"
                         "    ranks: [2]\n    sizes: [1GiB]\n");
  CHECK(busbw(p2p.path, "allreduce") == Approx(12.0).epsilon(0.01));
}

TEST_CASE("auto runs a GPU alltoall as NCCL's grouped send/recv at NCCL's split",
          "[cli][stacks][p2p]") {
  // 2 GPUs on PCIe, 1 GiB: each rank sends 512 MiB to the other; addP2pToPlan splits a transfer
  // that large over both p2p channels (docs/library-defaults.md). The uplink to host memory is
  // shared by both GPUs' ports (6 GB/s each way), of which two-way staged traffic keeps 0.66
  // (pcie.staged_duplex_efficiency), so the exchange takes about 512 MiB / (6 x 0.66) GB/s.
  const auto j = run_json("sim --scenario pcie3-2gpu-nop2p --collective alltoall --algorithm auto "
                          "--ranks 2 --sizes 1GiB --format json");
  const json& row = j.at("results").at(0);
  CHECK(row.at("params") == "algorithm=nccl_p2p,channels=2,protocol=simple");
  CHECK(row.at("time_us").get<double>() == Approx(536870912.0 / (6e9 * 0.66) * 1e6).epsilon(0.01));
  // Small transfers go as LL on one channel.
  const auto small = run_json("sim --scenario pcie3-2gpu-nop2p --collective alltoall --algorithm "
                              "auto --ranks 2 --sizes 16KiB --format json");
  CHECK(small.at("results").at(0).at("params") == "algorithm=nccl_p2p,channels=1,protocol=ll");
}

TEST_CASE("LL's per-channel rate is the GPU's at every node count", "[cli][stacks][ll]") {
  // 2 x 8 B200, tree LL at NCCL's channels: 128 KiB is 32 channels of 4 KiB. Each thread block
  // moves its lines at llMaxBws' single-node rate (281 GB/s on Blackwell over the call's 64
  // streams: 4.4 GB/s, about 1 us per 4 KiB hop), not the 2-node column's 39 GB/s (Intel hosts),
  // which held every hop of the tree for 7 us and made the call 3.4x the 8-byte one (measured
  // on such a machine: 47.4 against 36.5 us, 1.3x).
  const auto time = [](const char* bytes) {
    return run_json(std::string("sim --scenario dgx-b200 --algorithm nccl_tree --param "
                                "protocol=ll --ranks 16 --format json --sizes ") +
                    bytes)
        .at("results")
        .at(0)
        .at("time_us")
        .get<double>();
  };
  const double small = time("8");
  const double large = time("128KiB");
  CHECK(large > small);
  CHECK(large < 1.5 * small);
}
