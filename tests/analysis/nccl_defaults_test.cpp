// NCCL's default choice (analysis/nccl_defaults): the cost model's numbers against hand
// arithmetic from algorithms.md section 3, the choices it makes on the DGX presets, and that every
// choice names a collsim algorithm the registry accepts for the request.

#include "collsim/analysis/nccl_defaults.hpp"
#include "collsim/io/scenario_loader.hpp"
#include "collsim/topologies/build.hpp"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

using namespace collsim;
using algorithms::nccl::Algo;
using algorithms::nccl::Proto;
using core::CollectiveKind;

namespace {

struct Setup {
  core::Scenario scenario;
  core::Topology topology;
  analysis::NcclModelInputs inputs;
};

Setup setup(const std::string& preset, std::uint32_t ranks) {
  Setup s{io::load_scenario(preset), {}, {}};
  s.topology = topologies::build(s.scenario.topology, ranks);
  s.inputs = analysis::nccl_inputs(s.scenario.topology, s.topology, ranks);
  return s;
}

const analysis::NcclCost& entry(const analysis::NcclChoice& c, Algo a, Proto p) {
  for (const auto& e : c.table) {
    if (e.algo == a && e.proto == p) {
      return e;
    }
  }
  FAIL("no entry for the pair");
  return c.table.front();
}

analysis::NcclChoice choose(const Setup& s, CollectiveKind c, std::uint64_t bytes) {
  const auto choice = analysis::nccl_default(c, s.inputs.ranks, core::Bytes{bytes}, s.inputs);
  REQUIRE(choice.has_value());
  return *choice;
}

} // namespace

TEST_CASE("NCCL's inputs for one DGX A100 node: sm80, 12 ring channels of 20 GB/s, no NVLS",
          "[nccl_defaults]") {
  const Setup s = setup("dgx-a100", 8);
  const auto& in = s.inputs;
  CHECK(in.nodes == 1);
  CHECK(in.local_ranks == 8);
  CHECK(in.compute_capability == 80);
  CHECK(in.cpu == analysis::NcclCpu::amd); // infinity_fabric between the EPYC sockets
  CHECK(in.nvlink);
  CHECK(in.nvswitch);
  // 12 NVLinks x NCCL's SM80_NVLINK_BW 20 GB/s.
  CHECK(in.gpu_nvlink_bw == Approx(240.0));
  // search.cc: 6 channels at 40 GB/s use the 240 GB/s, then ncclTopoDupChannels doubles them at
  // half the speed; connect.cc doubles comm->nChannels again.
  CHECK(in.ring.channels == 12);
  CHECK(in.ring.bw_intra == Approx(20.0));
  CHECK(in.ring.type_intra == analysis::NcclPath::nvl);
  CHECK(in.comm_channels == 24);
  CHECK_FALSE(in.nvls_support);
  CHECK_FALSE(in.collnet_support);
}

TEST_CASE("NCCL's model prices a single-node A100 ring allreduce as tuning.cc's formulas give",
          "[nccl_defaults]") {
  const Setup s = setup("dgx-a100", 8);
  const auto c = choose(s, CollectiveKind::allreduce, 1 << 20);
  // n = 8 ranks, one node, nsteps = 2(n-1) = 14, ring graph 12 channels x 20 GB/s, NVLink.
  // Ring/Simple: lat = baseLat 8.4 + 14 x hwLat[NVLINK][Ring][Simple] 3.4 = 56.0 us;
  //   busBw = 12 x 20 = 240, algBw = 240 x 8/14 = 137.14 GB/s;
  //   T = 56.0 + 1048576 / (1000 x 137.14) = 63.646 us.
  CHECK(entry(c, Algo::ring, Proto::simple).latency_us == Approx(56.0));
  CHECK(entry(c, Algo::ring, Proto::simple).time_us == Approx(63.645867));
  // Ring/LL: lat = 6.6 + 14 x 0.6 = 15.0; busBw = min(llMaxBw[Ampere][N1] 87.7, 0.5 x 240);
  //   algBw = 87.7 x 8/14 = 50.11; T = 15.0 + 1048576 / 50114.3 = 35.924 us.
  CHECK(entry(c, Algo::ring, Proto::ll).time_us == Approx(35.923694));
  // Ring/LL128: lat = 14.0 + 14 x 1.9 = 40.6; busBw = min(0.92 x 240, 12 x 20.0) = 220.8;
  //   T = 40.6 + 1048576 / (1000 x 220.8 x 8/14) = 48.911 us.
  CHECK(entry(c, Algo::ring, Proto::ll128).time_us == Approx(48.910725));
  // NVLS needs NVLink SHARP; NVLSTree is off on one node.
  CHECK(entry(c, Algo::nvls, Proto::simple).time_us < 0);
  CHECK(entry(c, Algo::nvls_tree, Proto::simple).time_us < 0);
  CHECK(c.algo == Algo::ring);
  CHECK(c.proto == Proto::ll);
  CHECK(c.time_us == Approx(35.923694));
}

TEST_CASE("NCCL's model prices a 4-node A100 tree allreduce as tuning.cc's formulas give",
          "[nccl_defaults]") {
  const Setup s = setup("dgx-a100", 32);
  const auto& in = s.inputs;
  REQUIRE(in.nodes == 4);
  // Each GPU reaches its HDR NIC through a Gen4 switch: min(24 GB/s PCI, 25 GB/s NIC) = 24, one
  // channel per NIC; the tree's pass 2 raises bwIntra to 30 (8 x 30 x 7/8 <= 240).
  CHECK(in.tree.channels == 8);
  CHECK(in.tree.bw_inter == Approx(24.0));
  CHECK(in.tree.bw_intra == Approx(30.0));
  CHECK(in.tree.type_inter == analysis::NcclPath::pix);
  const auto c = choose(s, CollectiveKind::allreduce, 1 << 20);
  // Tree/Simple, N = 4 > 2 nodes so bw = bwInter: busBw = min(0.92 x 8 x 24,
  //   8 x perChMaxTreeBw[Ampere][N4+] 17.8) = 142.4; algBw = 0.5 x 142.4 = 71.2;
  //   treeCorrection[Simple][log2(2^20 / 64) = 14] = 0.5 -> 35.6 GB/s.
  // lat = 8.4 + 2 x ((8 - 1) x hwLat[NVLINK][Tree][Simple] 4.0 + log2(4) x hwLat[NET][Tree][Simple]
  //   14) = 120.4 us. T = 120.4 + 1048576 / 35600 = 149.854 us.
  CHECK(entry(c, Algo::tree, Proto::simple).latency_us == Approx(120.4));
  CHECK(entry(c, Algo::tree, Proto::simple).time_us == Approx(149.854382));
}

TEST_CASE("the network plugin's latency joins NCCL's interLat, twice with Simple",
          "[nccl_defaults]") {
  // aws-ofi-nccl reports 75 us (src/platform-aws.cpp); search.cc copies it to every multi-node
  // graph's latencyInter and tuning.cc adds it to interLat, once more with Simple for the flush.
  Setup s = setup("dgx-a100", 32);
  core::NcclSpec nccl;
  nccl.net_latency = core::Seconds{75e-6};
  s.inputs = analysis::nccl_inputs(s.scenario.topology, nccl, s.topology, 32);
  CHECK(s.inputs.tree.latency_inter == Approx(75.0));
  CHECK(s.inputs.ring.latency_inter == Approx(75.0));
  const auto c = choose(s, CollectiveKind::allreduce, 1 << 20);
  // Tree/Simple as above with interLat = 14 + 2 x 75 = 164:
  //   lat = 8.4 + 2 x (7 x 4.0 + log2(4) x 164) = 720.4 us.
  CHECK(entry(c, Algo::tree, Proto::simple).latency_us == Approx(720.4));
  // Tree/LL: interLat = hwLat[NET][Tree][LL] 5.0 + 75 = 80, hwLat[NVLINK][Tree][LL] 0.6, base
  //   6.8: lat = 6.8 + 2 x (7 x 0.6 + 2 x 80) = 335.2 us.
  CHECK(entry(c, Algo::tree, Proto::ll).latency_us == Approx(335.2));

  // One node uses no NIC: its graphs keep latencyInter 0.
  Setup one = setup("dgx-a100", 8);
  CHECK(analysis::nccl_inputs(one.scenario.topology, nccl, one.topology, 8).ring.latency_inter ==
        0.0);
}

TEST_CASE("NCCL on one DGX A100: ring LL up to 2 MiB, LL128 at 16 MiB, Simple from 128 MiB",
          "[nccl_defaults]") {
  const Setup s = setup("dgx-a100", 8);
  for (std::uint64_t b = 8; b <= (1ULL << 30); b *= 8) {
    CAPTURE(b);
    const auto c = choose(s, CollectiveKind::allreduce, b);
    CHECK(c.algorithm == "nccl_ring");
    const Proto want = b <= (2U << 20)    ? Proto::ll
                       : b <= (16U << 20) ? Proto::ll128
                                          : Proto::simple;
    CHECK(c.proto == want);
  }
  // Channels follow the bytes: 1 channel at 8 B, all 24 at 1 GiB.
  CHECK(choose(s, CollectiveKind::allreduce, 8).channels == 1);
  CHECK(choose(s, CollectiveKind::allreduce, 1ULL << 30).channels == 24);
  CHECK(choose(s, CollectiveKind::allreduce, 1ULL << 30).params.at("protocol") == "simple");
}

TEST_CASE("NCCL on one DGX H100: ring LL up to 256 KiB, then NVLS", "[nccl_defaults]") {
  const Setup s = setup("dgx-h100", 8);
  CHECK(s.inputs.compute_capability == 90);
  CHECK(s.inputs.nvls_support);
  CHECK(s.inputs.nvls.channels == 8);
  CHECK(s.inputs.nvls.bw_intra == Approx(60.0));
  for (std::uint64_t b = 8; b <= (1ULL << 30); b *= 8) {
    CAPTURE(b);
    const auto c = choose(s, CollectiveKind::allreduce, b);
    if (b <= (256U << 10)) {
      CHECK(c.algorithm == "nccl_ring");
      CHECK(c.proto == Proto::ll);
    } else {
      CHECK(c.algorithm == "nvls");
      CHECK(c.algo == Algo::nvls);
    }
  }
}

TEST_CASE("NCCL on 4 DGX A100: tree LL, then tree LL128 to 16 MiB, then the ring",
          "[nccl_defaults]") {
  const Setup s = setup("dgx-a100", 32);
  for (std::uint64_t b = 8; b <= (1ULL << 30); b *= 8) {
    CAPTURE(b);
    const auto c = choose(s, CollectiveKind::allreduce, b);
    if (b <= (32U << 10)) {
      CHECK(c.algorithm == "nccl_tree");
      CHECK(c.proto == Proto::ll);
    } else if (b <= (16U << 20)) {
      CHECK(c.algorithm == "nccl_tree");
      CHECK(c.proto == Proto::ll128);
    } else {
      CHECK(c.algorithm == "nccl_ring");
      CHECK(c.proto == (b <= (128U << 20) ? Proto::ll128 : Proto::simple));
    }
  }
  // Broadcast has only the ring.
  CHECK(choose(s, CollectiveKind::bcast, 1 << 20).algo == Algo::ring);
}

TEST_CASE("NCCL on 2 DGX H100: multi-node NVLS waits for NCCL_COLLNET_ENABLE, NVLSTree does not",
          "[nccl_defaults]") {
  Setup s = setup("dgx-h100", 16);
  REQUIRE(s.inputs.collnet_support); // the preset's fat tree has SHARP
  const auto off = choose(s, CollectiveKind::allreduce, 1ULL << 30);
  CHECK(entry(off, Algo::nvls, Proto::simple).time_us < 0);
  CHECK(entry(off, Algo::collnet_direct, Proto::simple).time_us < 0);
  CHECK(off.algorithm == "nvls_tree");
  s.inputs.collnet_enable = true;
  const auto on = choose(s, CollectiveKind::allreduce, 1ULL << 30);
  CHECK(entry(on, Algo::nvls, Proto::simple).time_us >= 0);
  CHECK(entry(on, Algo::collnet_direct, Proto::simple).time_us >= 0);
}

TEST_CASE("NCCL's alltoall, gather and scatter are grouped send/recv, barrier has no choice",
          "[nccl_defaults]") {
  const Setup s = setup("dgx-a100", 8);
  // nccl_p2p at NCCL's split of each 128 KiB transfer (see the test below).
  for (const auto c : {CollectiveKind::alltoall, CollectiveKind::gather, CollectiveKind::scatter}) {
    const auto choice = choose(s, c, 1 << 20);
    CHECK_FALSE(choice.modelled);
    CHECK(choice.algorithm == "nccl_p2p");
    CHECK(stacks::params_text(choice.params) == "channels=2,protocol=simple");
  }
  CHECK_FALSE(analysis::nccl_default(CollectiveKind::barrier, 8, core::Bytes{0}, s.inputs));
  CHECK_THROWS_AS(analysis::nccl_default(CollectiveKind::allreduce, 16, core::Bytes{8}, s.inputs),
                  core::UsageError);
}

TEST_CASE("every NCCL default names an algorithm the registry accepts for the request",
          "[nccl_defaults]") {
  const algorithms::Registry reg = algorithms::make_default_registry();
  const std::vector<CollectiveKind> collectives{
      CollectiveKind::allreduce, CollectiveKind::bcast,          CollectiveKind::reduce,
      CollectiveKind::allgather, CollectiveKind::reduce_scatter, CollectiveKind::alltoall,
      CollectiveKind::gather,    CollectiveKind::scatter};
  for (const char* preset : {"dgx-a100", "dgx-h100"}) {
    for (const std::uint32_t ranks : {1U, 2U, 8U, 16U, 32U}) {
      const Setup s = setup(preset, ranks);
      for (const auto coll : collectives) {
        for (const std::uint64_t bytes : {0ULL, 8ULL, 4096ULL, 1ULL << 20, 1ULL << 30}) {
          if (coll == CollectiveKind::alltoall && bytes % ranks != 0) {
            continue; // collsim's alltoall needs equal blocks, whatever the algorithm
          }
          CAPTURE(preset, ranks, core::to_string(coll), bytes);
          const auto choice = choose(s, coll, bytes);
          const algorithms::AlgorithmInfo& algo = reg.find(coll, choice.algorithm);
          algorithms::Request req;
          req.collective = coll;
          req.ranks = ranks;
          req.bytes = core::Bytes{bytes};
          req.topology = &s.topology;
          req.params = algorithms::resolve_params(algo, choice.params);
          CHECK(reg.refusal(algo, req) == "");
          if (choice.modelled) {
            CHECK(choice.time_us >= 0.0);
            for (const auto& e : choice.table) {
              CHECK((e.time_us < 0.0 || e.time_us >= choice.time_us));
            }
          }
        }
      }
    }
  }
}

TEST_CASE("NCCL splits each transfer of a grouped exchange as addP2pToPlan does",
          "[nccl_defaults]") {
  // DGX A100, 8 GPUs: 24 comm channels -> p2pnChannels = pow2Up(24) = 32; a peer through the
  // NVSwitch has 12 NVLinks -> 2 x 12 = 24 -> pow2Up 32 channels per peer; 8 peers at once fit
  // 32 channels at 4 each. An operation of b bytes: min(4, ceil(b / 64 KiB)) channels (a part of
  // at least NVL chunk / 8), doubled up to 32 while a part exceeds 32 chunks (16 MiB); LL while
  // b <= 16 KiB a channel.
  const Setup s = setup("dgx-a100", 8);
  const auto split = [&](std::uint64_t b) { return stacks::nccl_p2p_choice(s.inputs, b); };
  CHECK(split(1 << 20).p2p_channels == 32);
  CHECK(split(1 << 20).channels_per_peer == 32);
  CHECK(split(16 << 10).channels == 1);
  CHECK(split(16 << 10).proto == Proto::ll);
  CHECK(split(128 << 10).channels == 2);
  CHECK(split(128 << 10).proto == Proto::simple);
  CHECK(split(1 << 20).channels == 4);
  CHECK(split(std::uint64_t{1} << 30).channels == 32); // 32 MiB parts: cannot double again
  // 2 GPUs under a PCIe switch: 2 comm channels -> p2pnChannels 2; 2 channels per PCIe peer, one
  // operation each while both peers (self included) fit; 16 MiB: 2.
  const Setup pcie = setup("pcie3-2gpu-nop2p", 2);
  CHECK(stacks::nccl_p2p_choice(pcie.inputs, 1 << 20).channels == 1);
  CHECK(stacks::nccl_p2p_choice(pcie.inputs, 8 << 20).channels == 2);
}

TEST_CASE("a peer on another node gets NCCL's channels by release", "[nccl_defaults]") {
  // Two p4d nodes, 16 ranks: 8 comm channels -> p2pnChannels 8; the NVSwitch path allows 24
  // channels a peer, the network fewer (src/graph/paths.cc ncclTopoGetNchannels):
  Setup s = setup("aws-p4d", 16);
  REQUIRE(stacks::nccl_p2p_choice(s.inputs, 1 << 20).p2p_channels == 8);
  const auto per_peer = [&](algorithms::nccl::ReleaseCode release, std::uint32_t ranks = 16) {
    analysis::NcclModelInputs in = s.inputs;
    in.release = release;
    in.ranks = ranks;
    return stacks::nccl_p2p_choice(in, 256 << 20).channels_per_peer;
  };
  // to 2.19: NCCL_NCHANNELS_PER_NET_PEER's default, 2;
  CHECK(per_peer(21903) == 2);
  // 2.20.3 - 2.28: 2, halved while 2 x ranks > 4 x p2pnChannels (32 at 16 ranks: kept; 64 at 32
  // ranks: halved), at least the one local NIC;
  CHECK(per_peer(22003) == 2);
  CHECK(per_peer(22602) == 2);
  CHECK(per_peer(22602, 32) == 1);
  // ... against p2pnChannels before its rounding up: on DGX A100 nodes (24 comm channels, 32
  // after rounding) 2 x 64 ranks exceeds 4 x 24 though not 4 x 32.
  const Setup a100 = setup("dgx-a100", 64);
  analysis::NcclModelInputs wide = a100.inputs;
  wide.release = 22602;
  CHECK(stacks::nccl_p2p_choice(wide, 256 << 20).channels_per_peer == 1);
  // from 2.29.2: one per local NIC, more for its bandwidth at 14 GB/s a channel (100 Gb/s: 1).
  CHECK(per_peer(22902) == 1);
  CHECK(per_peer(23007) == 1);
  // NCCL_NCHANNELS_PER_NET_PEER wins (and 2.29.2's halving for the batches is skipped).
  s.inputs.env.net_peer_channels = 4;
  CHECK(per_peer(23007) == 4);
  CHECK(per_peer(21903) == 4);
  // A large operation spreads over them (addP2pToPlan doubles its parts up to the peer's channels).
  s.inputs.env.net_peer_channels = 0;
  s.inputs.release = 21903;
  CHECK(stacks::nccl_p2p_choice(s.inputs, 256 << 20).channels == 2);
  s.inputs.release = 23007;
  CHECK(stacks::nccl_p2p_choice(s.inputs, 256 << 20).channels == 1);
}

TEST_CASE("aws-p4d runs NCCL's Simple protocol only, as aws-ofi-nccl sets it on p4d",
          "[nccl_defaults]") {
  // aws-ofi-nccl sets NCCL_PROTO=simple where the EFA endpoint cannot deliver 128-byte stores in
  // order (src/platform-aws.c configure_nccl_proto); p4d's cannot (aws/aws-ofi-nccl#715, #889).
  // The preset says so in nccl.env, and NCCL's choice drops LL and LL128 at every size.
  Setup s = setup("aws-p4d", 16);
  REQUIRE(s.scenario.nccl.env.at("NCCL_PROTO") == "simple");
  s.inputs = analysis::nccl_inputs(s.scenario.topology, s.scenario.nccl, s.topology, 16);
  for (const std::uint64_t bytes :
       {std::uint64_t{8}, std::uint64_t{64} << 10, std::uint64_t{1} << 20, std::uint64_t{16} << 20,
        std::uint64_t{1} << 30}) {
    INFO(bytes);
    const auto c = choose(s, CollectiveKind::allreduce, bytes);
    CHECK(c.proto == Proto::simple);
    CHECK(c.algo == Algo::tree);
  }
  // Without the constraint NCCL's own model takes LL for 8 B (the tree's LL: 75 us reported by
  // the plugin is added once to each network step, twice with Simple).
  core::NcclSpec bare = s.scenario.nccl;
  bare.env.clear();
  s.inputs = analysis::nccl_inputs(s.scenario.topology, bare, s.topology, 16);
  CHECK(choose(s, CollectiveKind::allreduce, 8).proto == Proto::ll);
  // The run's step between nodes: AWS's tuner's EFA step (20 us), and with Simple its 3 us of
  // completion plus one more network latency for the flush of each received step on an Ampere
  // GPU (NCCL's tuning.cc prices the flush so): 20 + 3 + 20 = 43 us.
  CHECK(s.scenario.nccl.net_step.value == Approx(20e-6));
  CHECK(s.scenario.nccl.net_step_simple.value == Approx(20e-6 + 3e-6 + 20e-6));
}
