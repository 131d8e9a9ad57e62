// NCCL's tuning model as each release had it (stacks/src/nccl_release_tables.cpp): version
// names, the newest tables against the shared ones, and choices of older releases checked by hand
// against their tuning.cc (algorithms::nccl's tables describe 2.30.7 only).

#include "../../stacks/src/nccl_release_tables.hpp"

#include "collsim/algorithms/nccl_constants.hpp"
#include "collsim/algorithms/nccl_release.hpp"
#include "collsim/core/errors.hpp"
#include "collsim/io/scenario_loader.hpp"
#include "collsim/stacks/nccl_env.hpp"
#include "collsim/stacks/nccl_model.hpp"
#include "collsim/topologies/build.hpp"

#include <catch2/catch.hpp>
#include <string>

using namespace collsim;
using algorithms::nccl::Algo;
using algorithms::nccl::Hw;
using algorithms::nccl::Proto;
using algorithms::nccl::ReleaseCode;
using core::CollectiveKind;

namespace {

stacks::NcclModelInputs inputs(const std::string& preset, std::uint32_t ranks,
                               ReleaseCode release) {
  const core::Scenario s = io::load_scenario(preset);
  const core::Topology t = topologies::build(s.topology, ranks);
  return stacks::nccl_inputs(s.topology, t, ranks, release);
}

stacks::NcclChoice choose(const stacks::NcclModelInputs& in, CollectiveKind c,
                          std::uint64_t bytes) {
  const auto choice = stacks::nccl_default(c, in.ranks, core::Bytes{bytes}, in);
  REQUIRE(choice.has_value());
  return *choice;
}

const stacks::NcclCost& entry(const stacks::NcclChoice& c, Algo a, Proto p) {
  for (const auto& e : c.table) {
    if (e.algo == a && e.proto == p) {
      return e;
    }
  }
  FAIL("no entry for the pair");
  return c.table.front();
}

} // namespace

TEST_CASE("NCCL releases read as nccl-tests and NCCL print them", "[nccl_release]") {
  using algorithms::nccl::parse_release;
  CHECK(parse_release("2.19.3") == 21903U);
  CHECK(parse_release("v2.19.3-1") == 21903U);       // a git tag
  CHECK(parse_release("2.19.3+cuda12.2") == 21903U); // NCCL's INFO "NCCL version" line
  CHECK(parse_release("21903") == 21903U);           // nccl-tests' nccl-library=
  CHECK(parse_release("2.30") == 23000U);
  for (const char* bad :
       {"", "3.1", "2", "2.x", "2.19.3.4", "19", "2.100.1", "v", "1.3.4", "999999", "2..3"}) {
    INFO(bad);
    CHECK_FALSE(parse_release(bad).has_value());
  }
  CHECK(algorithms::nccl::release_name(21903) == "2.19.3");
  CHECK(algorithms::nccl::release_name(algorithms::nccl::kNewestModelled) == "2.30.7");
  CHECK(algorithms::nccl::model_label(21903) == "NCCL 2.19.3 tuning model");
  CHECK(algorithms::nccl::model_label(23100) ==
        "NCCL 2.30.7 tuning model (for 2.31.0, newer than collsim models)");
  CHECK(algorithms::nccl::model_label(20708) ==
        "NCCL 2.12.12 tuning model (for 2.7.8, older than collsim models)");

  core::NcclSpec spec;
  CHECK(stacks::parse_nccl_release(spec) == algorithms::nccl::kNewestModelled);
  spec.version = "2.18.3";
  CHECK(stacks::parse_nccl_release(spec) == 21803U);
  spec.version = "two";
  CHECK_THROWS_AS(stacks::parse_nccl_release(spec), core::UsageError);
  spec.version_pos = core::SourcePos{"s.yaml", 4, 12};
  CHECK_THROWS_WITH(stacks::parse_nccl_release(spec),
                    Catch::Contains("s.yaml:4:12: error: nccl.version: 'two' is not an NCCL "
                                    "release"));
}

TEST_CASE("the newest release's tables are the ones the generators and the model share",
          "[nccl_release]") {
  using namespace stacks::nccl_detail;
  const NcclTunerTables& t = nccl_tuner_tables(algorithms::nccl::kNewestModelled);
  CHECK(&t == &nccl_tuner_tables(29999)); // later releases: the newest modelled one's
  for (std::size_t a = 0; a < 7; ++a) {
    for (const Proto p : {Proto::ll, Proto::ll128, Proto::simple}) {
      const auto algo = static_cast<Algo>(a);
      CHECK(t.base_lat[a][proto_index(p)] == algorithms::nccl::base_latency_us(algo, p));
      for (const Hw hw : {Hw::nvlink, Hw::pci, Hw::net}) {
        CHECK(t.hw_lat[static_cast<std::size_t>(hw)][a][proto_index(p)] ==
              algorithms::nccl::hw_latency_us(hw, algo, p));
      }
    }
  }
  CHECK(t.ll_max_bw == kLlMaxBw);
  CHECK(t.ring_ll128_bw == kPerChMaxRingLl128Bw);
  CHECK(t.tree_ll128_bw == kPerChMaxTreeLl128Bw);
  CHECK(t.tree_bw == kPerChMaxTreeBw);
  CHECK(t.nvls_tree_bw == kPerChMaxNvlsTreeBw);
  CHECK(t.nvls_efficiency == kNvlsEfficiency);
  // Releases before the oldest modelled one read its tables.
  CHECK(&nccl_tuner_tables(20800) == &nccl_tuner_tables(21212));
  // 2.19.3 ships 2.19.1's tuning.cc: tree Simple steps back at 28 us, no base.
  const NcclTunerTables& v219 = nccl_tuner_tables(21903);
  CHECK(v219.hw_lat[0][0][2] == 28.0);
  CHECK(v219.base_lat[0][2] == 0.0);
  CHECK(v219.ll_max_bw[2][0] == 87.7); // Hopper's LL ceiling before 2.21.5
}

TEST_CASE("NCCL 2.19.3 on one DGX A100: tree Simple at 28 us a step, ring LL at a quarter",
          "[nccl_release]") {
  const auto in = inputs("dgx-a100", 8, 21903);
  REQUIRE(in.ring.channels == 12); // as 2.30.7: 6 x 40 GB/s duplicated at 20
  CHECK(in.ring.bw_intra == Approx(20.0));
  CHECK(in.comm_channels == 24);
  const auto c = choose(in, CollectiveKind::allreduce, 1 << 20);
  CHECK(c.release == 21903U);
  // Tree/Simple: baseLat 0 + 2 ((8 - 1) x 28 + log2(1) x 28) = 392 us (2.30.7: 8.4 + 2 x 7 x 4 =
  // 64.4 us).
  CHECK(entry(c, Algo::tree, Proto::simple).latency_us == Approx(392.0));
  // Ring/LL: busBw = min(llMaxBw[Ampere][N1] 87.7, 12 x 20 x 1/4 = 60) = 60 (2.30.7: x 0.5 ->
  // 87.7); algBw = 60 x 8 / 14 = 34.286 GB/s. Latency 6.6 + 14 x 0.6 = 15.0 us.
  CHECK(entry(c, Algo::ring, Proto::ll).bandwidth == Approx(60.0 * 8 / 14));
  CHECK(entry(c, Algo::ring, Proto::ll).latency_us == Approx(15.0));
  const auto newest = choose(inputs("dgx-a100", 8, algorithms::nccl::kNewestModelled),
                             CollectiveKind::allreduce, 1 << 20);
  CHECK(entry(newest, Algo::ring, Proto::ll).bandwidth == Approx(87.7 * 8 / 14));
  CHECK(entry(newest, Algo::tree, Proto::simple).latency_us == Approx(64.4));
  // So at 2 MiB 2.19.3 has left LL for LL128 where 2.30.7 keeps LL.
  CHECK(choose(in, CollectiveKind::allreduce, 2 << 20).proto == Proto::ll128);
  CHECK(choose(inputs("dgx-a100", 8, algorithms::nccl::kNewestModelled), CollectiveKind::allreduce,
               2 << 20)
            .proto == Proto::ll);
}

TEST_CASE("NVLS, NVLSTree and PAT exist from the releases that brought them", "[nccl_release]") {
  // One DGX H100: 2.16.5 has no NVLS, so the ring runs 1 GiB; 2.17.1 prices NVLS on the ring
  // graph with its 40 us base; 2.30.7's NVLS wins too.
  const auto old = choose(inputs("dgx-h100", 8, 21605), CollectiveKind::allreduce, 1 << 30);
  CHECK(old.algo == Algo::ring);
  CHECK(entry(old, Algo::nvls, Proto::simple).disabled == "NCCL 2.16.5 has no NVLS (from 2.17.1)");
  const auto in217 = inputs("dgx-h100", 8, 21701);
  REQUIRE(in217.nvls_support);
  const auto v217 = choose(in217, CollectiveKind::allreduce, 1 << 30);
  CHECK(entry(v217, Algo::nvls, Proto::simple).latency_us == Approx(40.0));
  // busBw = the ring graph's channels x bwIntra (here 396 GB/s), capped at 2.17.1's 370 GB/s for
  // Hopper, x 0.75.
  REQUIRE(in217.ring.channels * in217.ring.bw_intra > 370.0);
  CHECK(entry(v217, Algo::nvls, Proto::simple).bandwidth == Approx(370.0 * 0.75));
  CHECK(choose(inputs("dgx-h100", 8, algorithms::nccl::kNewestModelled), CollectiveKind::allreduce,
               1 << 30)
            .algo == Algo::nvls);

  // Two DGX H100: NVLSTree from 2.18.1; 2.17.1 had no NVLS across nodes at all.
  const auto two217 = choose(inputs("dgx-h100", 16, 21701), CollectiveKind::allreduce, 1 << 30);
  CHECK(entry(two217, Algo::nvls_tree, Proto::simple).disabled ==
        "NCCL 2.17.1 has no NVLSTree (from 2.18.1)");
  CHECK(entry(two217, Algo::nvls, Proto::simple).disabled.starts_with("no NVLS"));
  const auto two218 = choose(inputs("dgx-h100", 16, 21801), CollectiveKind::allreduce, 1 << 30);
  // 2.18.1: NVLSTree's latency is its 23 us base plus 2 (nNodes - 1) x 19 us of network.
  CHECK(entry(two218, Algo::nvls_tree, Proto::simple).latency_us == Approx(23.0 + 2 * 19.0));

  // PAT (allgather, one GPU per node) from 2.23.4.
  const auto ag = choose(inputs("dgx-h100", 16, 22203), CollectiveKind::allgather, 1 << 20);
  CHECK(entry(ag, Algo::pat, Proto::simple).disabled == "NCCL 2.22.3 has no PAT (from 2.23.4)");
}

TEST_CASE("channels by release: MAXCHANNELS, sm90's doubling across nodes, sm100's NVLS channels",
          "[nccl_release]") {
  // Two DGX H100: ring graph 8 channels at 48 GB/s (above 45), comm->nChannels 2 x 8 = 16.
  // connect.cc doubles it on sm90 across nodes: in 2.18.1 while 2 nc <= MAXCHANNELS (32), from
  // 2.20.3 only while nc < 16, so not here.
  const auto h100 = inputs("dgx-h100", 16, algorithms::nccl::kNewestModelled);
  REQUIRE(h100.ring.channels == 8);
  REQUIRE(h100.ring.bw_intra == Approx(48.0));
  CHECK(h100.comm_channels == 16);
  CHECK(stacks::nccl_comm_channels(h100) == 16);
  const auto h100_2181 = inputs("dgx-h100", 16, 21801);
  REQUIRE(h100_2181.ring.bw_intra > 45.0);
  CHECK(stacks::nccl_comm_channels(h100_2181) == 2 * h100_2181.comm_channels);
  CHECK(stacks::nccl_comm_channels(inputs("dgx-h100", 16, 22003)) == 16);
  // MAXCHANNELS was 32 before 2.25.1.
  CHECK(inputs("dgx-b200", 8, 22403).comm_channels <= 32);

  // NVLS channels on B200: NVLS_NCHANNELS_SM100 32 (2.25.1); one node 24 from 2.27.3; across
  // nodes from 2.30.3 by the NIC (2 nodes with 400 Gb/s NICs: 32). Hopper 16 throughout.
  CHECK(inputs("dgx-b200", 8, 22602).nvls_channels == 32);
  CHECK(inputs("dgx-b200", 8, 22703).nvls_channels == 24);
  CHECK(inputs("dgx-b200", 8, algorithms::nccl::kNewestModelled).nvls_channels == 24);
  CHECK(inputs("dgx-b200", 16, 22602).nvls_channels == 32);
  CHECK(inputs("dgx-b200", 16, algorithms::nccl::kNewestModelled).nvls_channels == 32);
  CHECK(inputs("dgx-h100", 8, algorithms::nccl::kNewestModelled).nvls_channels == 16);
  // Before 2.25.1 a B200 read Hopper's rows and speed arrays, and had 16 NVLS channels.
  CHECK(inputs("dgx-b200", 8, 22403).nvls_channels == 16);
}

TEST_CASE("the search's speed arrays follow the release: 2.26.2's B200 tree graph has no 96 GB/s",
          "[nccl_release]") {
  // sm100's inter-node array starts at 48 GB/s until 2.27.6 added 96: the tree graph's pass 2
  // cannot raise bwIntra above bwInter's 48 in 2.26.2; in 2.30.7 it raises it to 96 (2 x 48).
  const auto v226 = inputs("dgx-b200", 16, 22602);
  const auto v230 = inputs("dgx-b200", 16, algorithms::nccl::kNewestModelled);
  CHECK(v226.tree.bw_inter == Approx(48.0));
  CHECK(v226.tree.bw_intra == Approx(48.0));
  CHECK(v230.tree.bw_intra == Approx(96.0));
  // So 2.26.2 runs NVLSTree at 512 MiB, where the log of such a run (lambda 2 x 8 B200, NCCL
  // 2.26.2) reaches 619 GB/s busbw, more than a tree could.
  CHECK(choose(v226, CollectiveKind::allreduce, 512ULL << 20).algo == Algo::nvls_tree);
  // NVLink per link: 22 GB/s for sm70 and sm80 before 2.18.1 (A100's 12 links: 264 GB/s), 20
  // after.
  CHECK(inputs("dgx-a100", 8, 21701).gpu_nvlink_bw == Approx(264.0));
  CHECK(inputs("dgx-a100", 8, 21801).gpu_nvlink_bw == Approx(240.0));
  // sm70 too (SM70_NVLINK_BW 22, then 20).
  const auto v100 = inputs("dgx1-v100", 8, 21605);
  REQUIRE(v100.compute_capability == 70);
  CHECK(v100.gpu_nvlink_bw == Approx(inputs("dgx1-v100", 8, 21801).gpu_nvlink_bw * 22.0 / 20.0));
}

TEST_CASE("NVLS-tree's starting chunk by release, node count and NCCL's environment",
          "[nccl_release]") {
  // enqueue.cc: the Simple step (4 MiB / NCCL_STEPS) from 2.18.1, 64 KiB from 4 nodes from
  // 2.19.3; nvlsChunkSize 128 KiB (64 KiB from 4 nodes) from 2.21.5.
  CHECK(stacks::nvls_tree_chunk(inputs("dgx-h100", 16, 21803)) == 512 * 1024);
  CHECK(stacks::nvls_tree_chunk(inputs("dgx-h100", 32, 21803)) == 512 * 1024);
  CHECK(stacks::nvls_tree_chunk(inputs("dgx-h100", 16, 21903)) == 512 * 1024);
  CHECK(stacks::nvls_tree_chunk(inputs("dgx-h100", 32, 21903)) == 64 * 1024);
  CHECK(stacks::nvls_tree_chunk(inputs("dgx-h100", 16, 22105)) == 128 * 1024);
  CHECK(stacks::nvls_tree_chunk(inputs("dgx-h100", 32, 22105)) == 64 * 1024);
  CHECK(stacks::nvls_tree_chunk(inputs("dgx-b200", 16, algorithms::nccl::kNewestModelled)) ==
        128 * 1024);
  // No NVLS, no chunk (A100 has no NVLink SHARP).
  CHECK(stacks::nvls_tree_chunk(inputs("dgx-a100", 16, algorithms::nccl::kNewestModelled)) == 0);
  // nvls_tree's `max_chunk` names only what differs from the parameter's default.
  CHECK(stacks::nvls_tree_chunk_param(inputs("dgx-h100", 16, 21903)) == 512U * 1024);
  CHECK_FALSE(stacks::nvls_tree_chunk_param(inputs("dgx-h100", 32, 21903)).has_value());
  CHECK_FALSE(stacks::nvls_tree_chunk_param(inputs("dgx-h100", 16, 22105)).has_value());

  // NCCL_NVLS_CHUNKSIZE from 2.21.5; NCCL_NVLSTREE_MAX_CHUNKSIZE caps it from 2.20.3.
  const auto with_env = [](stacks::NcclModelInputs in, const std::string& name,
                           const std::string& value) {
    core::NcclSpec spec;
    spec.env = {{name, value}};
    stacks::apply_nccl_env(in, stacks::parse_nccl_env(spec));
    return stacks::nvls_tree_chunk(in);
  };
  CHECK(with_env(inputs("dgx-h100", 16, 22602), "NCCL_NVLS_CHUNKSIZE", "262144") == 256 * 1024);
  CHECK(with_env(inputs("dgx-h100", 32, 22602), "NCCL_NVLS_CHUNKSIZE", "262144") == 64 * 1024);
  CHECK(with_env(inputs("dgx-h100", 32, 22602), "NCCL_NVLSTREE_MAX_CHUNKSIZE", "1048576") ==
        128 * 1024);
  CHECK(with_env(inputs("dgx-h100", 16, 22003), "NCCL_NVLSTREE_MAX_CHUNKSIZE", "65536") ==
        64 * 1024);
  CHECK(with_env(inputs("dgx-h100", 16, 21903), "NCCL_NVLSTREE_MAX_CHUNKSIZE", "65536") ==
        512 * 1024); // not read before 2.20.3
  // Before 2.21.5 the starting chunk is the Simple step, an eighth of NCCL_BUFFSIZE.
  CHECK(with_env(inputs("dgx-h100", 16, 21903), "NCCL_BUFFSIZE", "2097152") == 256 * 1024);
  CHECK(with_env(inputs("dgx-h100", 16, 22105), "NCCL_BUFFSIZE", "2097152") == 128 * 1024);
  core::NcclSpec bad;
  bad.env = {{"NCCL_NVLS_CHUNKSIZE", "1k"}};
  CHECK_THROWS_WITH(stacks::parse_nccl_env(bad),
                    Catch::Contains("expected a chunk size in bytes from 4096 to 16777216, got "
                                    "'1k'"));
}

TEST_CASE("before 2.20.3 NCCL sees each port of a dual-port NIC card, from then on the merged card",
          "[stacks][nccl][release]") {
  // OCI BM.GPU4.8: a 2 x 100 Gb/s ConnectX-6 beside each GPU (oci-a100-roce, nic_ports: 2).
  // NCCL 2.19.3 lists the 16 ports as NET devices and runs one channel a port (12 GB/s of the
  // search's speeds); 2.20.3's IB transport merges a card's ports (net_ib.cc, NCCL_IB_MERGE_NICS)
  // into 8 devices of 200 Gb/s, 24 GB/s a channel. On two nodes the 16-channel tree then beats
  // the ring from 1 GiB (its correction factor ends at 512 MiB), as the shared OCI log's rows
  // of 1 - 8 GiB, 219 - 238 GB/s of bus bandwidth, say it ran (a ring tops out at the node's
  // 200 Gb/s x 8 ports there).
  const auto old_release = inputs("oci-a100-roce", 16, 21903);
  CHECK(old_release.nics == 16);
  CHECK(old_release.net_bw == Approx(12.0)); // the card's PCIe x16 Gen4, NCCL's 24 GB/s, per port
  CHECK(old_release.ring.channels == 16);
  CHECK(old_release.ring.bw_inter == Approx(12.0));
  CHECK(choose(old_release, CollectiveKind::allreduce, 8ULL << 30).algo == Algo::tree);
  const auto merged = inputs("oci-a100-roce", 16, 22003);
  CHECK(merged.nics == 8);
  CHECK(merged.net_bw == Approx(24.0));
  CHECK(merged.ring.channels == 8);
  CHECK(merged.ring.bw_inter == Approx(24.0));
  CHECK(choose(merged, CollectiveKind::allreduce, 8ULL << 30).algo == Algo::ring);
  // One node uses no NIC: the ports change nothing there.
  CHECK(inputs("oci-a100-roce", 8, 21903).ring.channels ==
        inputs("oci-a100-roce", 8, 22003).ring.channels);
}
