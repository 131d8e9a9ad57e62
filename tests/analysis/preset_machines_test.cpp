// The presets of issue 17 (HGX H200, DGX B200, GB200 NVL72, the cloud machines with their NIC
// kinds): each cites its sources in its header, builds for one and two nodes, and an NCCL ring
// allreduce of 1 GiB stays at or below the physical bus-bandwidth limit (analysis::busbw_limit,
// which uses line rates) and above a floor that a sane model of the machine clears.
// presets_test.cpp runs their studies with every other preset.

#include "collsim/analysis/limits.hpp"
#include "collsim/analysis/simulate.hpp"
#include "collsim/io/presets.hpp"
#include "collsim/io/scenario_loader.hpp"
#include "collsim/topologies/build.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <latch>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>

using namespace collsim;

namespace {

struct Machine {
  const char* preset;
  const char* nic_kind;
  std::uint32_t gpus_per_node;
};

constexpr Machine kMachines[] = {
    {"hgx-h200", "ib_ndr", 8}, {"dgx-b200", "ib_ndr", 8},    {"gb200-nvl72", "ib_ndr", 72},
    {"aws-p4d", "efa", 8},     {"aws-p5", "efa", 8},         {"gcp-a3-mega", "tcpxo", 8},
    {"gcp-a3", "tcpx", 8},     {"oci-a100-roce", "roce", 8}, {"aws-p3dn", "efa", 8},
};

/// The header comment: the lines before the first line that is not a comment.
std::string header_of(std::string_view text) {
  std::istringstream in{std::string(text)};
  std::string line;
  std::string out;
  while (std::getline(in, line) && line.rfind('#', 0) == 0) {
    out += line + "\n";
  }
  return out;
}

/// NCCL opens at least one channel per NIC (its topology search sizes the channel count to the
/// node's bandwidth); collsim's nccl_ring defaults to 2 channels, which cross the node boundary
/// through 2 NICs only. The test gives one channel per GPU (at most NCCL's MAXCHANNELS = 64), so
/// every NIC of the node carries a ring.
core::ResultRow ring_allreduce(const core::Scenario& s, std::uint32_t ranks,
                               std::uint32_t channels) {
  core::StudySpec study;
  study.engine = "loggp";
  study.collective = core::CollectiveKind::allreduce;
  study.algorithms = {"nccl_ring"};
  study.params["channels"] = std::to_string(std::min<std::uint32_t>(channels, 64));
  study.ranks = {ranks};
  study.sizes = {core::Bytes{1ULL << 30}};
  const auto registry = algorithms::make_default_registry();
  const auto result = analysis::run_study(s, study, registry, {}, 2);
  REQUIRE(result.rows.size() == 1);
  return result.rows.front();
}

} // namespace

TEST_CASE("the issue-17 presets cite their sources and name their NIC kind", "[presets]") {
  for (const auto& m : kMachines) {
    INFO("preset " << m.preset);
    const auto text = io::preset_text(m.preset);
    REQUIRE(text.has_value());
    const std::string header = header_of(*text);
    CHECK(header.size() > 400);
    CHECK(header.find("[S") != std::string::npos); // hardware.md source ids
    const auto s = io::load_scenario(m.preset);
    CHECK(s.topology.kind == "system");
    CHECK(s.topology.system.node.nic_kind == m.nic_kind);
    CHECK(s.topology.system.node.gpus == m.gpus_per_node);
    // Stored for the stack layer: below 1 for every transport.
    CHECK(s.topology.system.node.nic_efficiency < 1.0);
    CHECK(s.topology.system.node.nic_efficiency > 0.0);
    // A header that names a cloud transport cites a public page for it.
    if (std::string(m.nic_kind) != "ib_ndr") {
      CHECK(header.find("https://") != std::string::npos);
    }
  }
}

TEST_CASE("the issue-17 presets build for one and two nodes", "[presets]") {
  for (const auto& m : kMachines) {
    INFO("preset " << m.preset);
    const auto s = io::load_scenario(m.preset);
    for (std::uint32_t nodes : {1U, 2U}) {
      const auto t = topologies::build(s.topology, nodes * m.gpus_per_node);
      CHECK(t.rank_count() == nodes * m.gpus_per_node);
      std::set<std::uint32_t> used;
      for (core::Rank r = 0; r < t.rank_count(); ++r) {
        used.insert(t.node_of(r));
      }
      CHECK(used.size() == nodes);
    }
  }
}

TEST_CASE("an NCCL ring allreduce of 1 GiB on the issue-17 presets stays within the busbw limit",
          "[presets][limits]") {
  for (const auto& m : kMachines) {
    for (std::uint32_t nodes : {1U, 2U}) {
      const std::uint32_t ranks = nodes * m.gpus_per_node;
      INFO("preset " << m.preset << " at " << ranks << " ranks");
      const auto s = io::load_scenario(m.preset);
      const auto limit = analysis::busbw_limit(topologies::build(s.topology, ranks));
      // Where two GPUs share a NIC (p4d, A3 High) loggp books the card's links for both (since
      // 2026-12-08; before, only SimGrid's max-min sharing kept the two-node run within it).
      const auto row = ring_allreduce(s, ranks, m.gpus_per_node);
      INFO("busbw " << row.busbw.gbps() << " GB/s, limit " << limit.bandwidth.gbps() << " GB/s ("
                    << limit.reason << ")");
      CHECK(row.busbw.bytes_per_second <= limit.bandwidth.bytes_per_second * (1 + 1e-9));
      // A 1 GiB ring is bandwidth-bound and reaches at least 40 % of the limit. Not more:
      // collsim's NCCL rings enter a node at GPU c and leave it at GPU c-1 whichever NICs those
      // GPUs use, so where two GPUs share a NIC some NICs carry two channels and others none
      // (about half the limit on p4d and A3 High; NCCL balances its rings over the NICs), and
      // LogGP's single port serialises a rank's NVLink and NIC messages.
      CHECK(row.busbw.bytes_per_second >= 0.4 * limit.bandwidth.bytes_per_second);
    }
  }
}

TEST_CASE("busbw limit: the issue-17 presets' bottlenecks are their NVLink and their NICs",
          "[presets][limits]") {
  const auto limit_of = [](const char* preset, std::uint32_t ranks) {
    return analysis::busbw_limit(topologies::build(io::load_scenario(preset).topology, ranks));
  };
  // NVLink 5: 18 x 50 GB/s per GPU; NVLink 4: 18 x 25; NVLink 3: 12 x 25.
  CHECK(limit_of("dgx-b200", 8).bandwidth.gbps() == Approx(900));
  CHECK(limit_of("gb200-nvl72", 72).bandwidth.gbps() == Approx(900));
  CHECK(limit_of("hgx-h200", 8).bandwidth.gbps() == Approx(450));
  CHECK(limit_of("aws-p4d", 8).bandwidth.gbps() == Approx(300));
  // Two nodes: the node's NICs at line rate (the transport efficiency is not applied).
  CHECK(limit_of("hgx-h200", 16).bandwidth.gbps() == Approx(400)); // 8 x 400 Gb/s
  // NVL72: 72 x 400 Gb/s = 3.6 TB/s leave a rack, more than a GPU's 900 GB/s of NVLink.
  CHECK(limit_of("gb200-nvl72", 144).bandwidth.gbps() == Approx(900));
  CHECK(limit_of("aws-p4d", 16).bandwidth.gbps() == Approx(50));        // 4 x 100 Gb/s EFA
  CHECK(limit_of("aws-p5", 16).bandwidth.gbps() == Approx(400));        // 32 x 100 Gb/s EFA
  CHECK(limit_of("aws-p3dn", 16).bandwidth.gbps() == Approx(12.5));     // 1 x 100 Gb/s EFA
  CHECK(limit_of("gcp-a3-mega", 16).bandwidth.gbps() == Approx(200));   // 8 x 200 Gb/s
  CHECK(limit_of("gcp-a3", 16).bandwidth.gbps() == Approx(100));        // 4 x 200 Gb/s
  CHECK(limit_of("oci-a100-roce", 16).bandwidth.gbps() == Approx(200)); // 1.6 Tb/s
}

TEST_CASE("a scenario derived from a cloud preset keeps the preset's NIC kind and rate",
          "[presets]") {
  // aws-p5 writes nic_kind efa beside nic_bandwidth 400 Gb/s (4 EFA cards per GPU as one NIC).
  const auto kept =
      io::parse_scenario("base: aws-p5\ntopology:\n  node:\n    nics: 4\n", "kept.yaml");
  CHECK(kept.topology.system.node.nic_kind == "efa");
  CHECK(kept.topology.system.node.nic_bandwidth.gbps() == Approx(50));
  CHECK(kept.topology.system.node.nic_efficiency == Approx(0.89));
  CHECK(kept.topology.system.node.nics == 4);
}

TEST_CASE("every NCCL algorithm runs under NCCL's flow control on the two-node presets",
          "[presets][fifo]") {
  // The loggp engine stops with "the schedule deadlocks" when a generator orders a rank's
  // operations so that a send waits for FIFO slots only its own later operations free. (No busbw
  // bound here: analysis::busbw_limit is the ring's, which trees and NVLS-tree exceed across
  // nodes.)
  const auto registry = algorithms::make_default_registry();
  for (const char* preset : {"dgx-h100", "dgx-b200", "aws-p4d"}) {
    core::Scenario s = io::load_scenario(preset);
    const std::uint32_t ranks = 2 * s.topology.system.node.gpus;
    core::StudySpec st;
    st.collective = core::CollectiveKind::allreduce;
    st.algorithms = {"nccl_ring", "nccl_tree",      "nvls",
                     "nvls_tree", "collnet_direct", "collnet_chain"};
    st.ranks = {ranks};
    st.sizes = {core::Bytes{4096}, core::Bytes{std::uint64_t{256} << 20}};
    INFO(preset);
    analysis::StudyResult r;
    REQUIRE_NOTHROW(r = analysis::run_study(s, st, registry));
    CHECK(r.rows.size() + r.skipped.size() == st.algorithms.size() * st.sizes.size());
    CHECK(r.rows.size() >= 4);
    for (const core::ResultRow& row : r.rows) {
      INFO(row.algorithm << " " << row.bytes.value);
      CHECK(row.time.value > 0.0);
    }
  }
}

TEST_CASE("a fresh topology routes alike from several threads at once (one-switch network)",
          "[presets][threads]") {
  // A sweep's points route on one shared topology from several threads. The one-switch network's
  // router sorted its ports on first use, so threads routing first at once could corrupt it (the
  // property sweep crashed in free() on gcp-a3-mega at 64 ranks): routes are read-only now. The
  // threads start together at a latch, on a fresh topology each round, so that their first routes
  // overlap.
  const core::Scenario s = io::load_scenario("gcp-a3-mega");
  const core::Topology once = topologies::build(s.topology, 64);
  const auto all_routes = [](const core::Topology& t) {
    std::vector<std::vector<core::LinkId>> out;
    for (core::Rank a = 0; a < 64; a += 9) {
      for (core::Rank b = 0; b < 64; b += 7) {
        out.push_back(t.route_between(t.device_of(a), t.device_of(b)));
      }
    }
    return out;
  };
  const auto expected = all_routes(once);
  constexpr int kThreads = 4;
  int differing = 0;
  for (int round = 0; round < 200; ++round) {
    const core::Topology t = topologies::build(s.topology, 64);
    std::vector<std::vector<std::vector<core::LinkId>>> seen(kThreads);
    std::vector<int> failed(kThreads, 0);
    std::latch start(kThreads);
    {
      std::vector<std::jthread> threads;
      for (int k = 0; k < kThreads; ++k) {
        threads.emplace_back([&, k] {
          start.arrive_and_wait();
          try {
            seen[static_cast<std::size_t>(k)] = all_routes(t);
          } catch (const core::Error&) {
            failed[static_cast<std::size_t>(k)] = 1;
          }
        });
      }
    }
    for (int k = 0; k < kThreads; ++k) {
      differing +=
          failed[static_cast<std::size_t>(k)] != 0 || seen[static_cast<std::size_t>(k)] != expected;
    }
  }
  CHECK(differing == 0);
}

TEST_CASE("NVLS runs under NCCL's flow control on a 72-GPU NVLink domain", "[presets][fifo]") {
  // With more shards than a connection's FIFO slots, a rank that sent all its shards before
  // receiving any deadlocked with the switch (the property sweep found it at 32 ranks and more on
  // gb200-nvl72): the rank's receives now run on their own stream, as NCCL's gather warps do.
  const auto registry = algorithms::make_default_registry();
  const core::Scenario s = io::load_scenario("gb200-nvl72");
  core::StudySpec st;
  st.collective = core::CollectiveKind::allreduce;
  st.algorithms = {"nvls"};
  st.ranks = {16, 32, 72};
  st.sizes = {core::Bytes{8}, core::Bytes{std::uint64_t{1} << 30}};
  analysis::StudyResult r;
  REQUIRE_NOTHROW(r = analysis::run_study(s, st, registry));
  REQUIRE(r.rows.size() == 6);
  for (const core::ResultRow& row : r.rows) {
    INFO(row.ranks << " ranks, " << row.bytes.value << " B");
    CHECK(row.time.value > 0.0);
  }
  // 1 GiB moves at NVLS rates whatever the rank count: each rank sends n and receives n over its
  // own NVLinks (algorithms.md AR19).
  CHECK(r.rows[5].algbw.bytes_per_second == Approx(r.rows[1].algbw.bytes_per_second).epsilon(0.1));
}

TEST_CASE("NCCL's rings on DGX-1's NVLink mesh follow direct NVLinks and spread the channels over "
          "them",
          "[presets][nccl][mesh]") {
  // Hybrid cube-mesh: no NVLink between GPUs 3-4 or 7-0, so the rank-order ring 0..7 would cross
  // two missing links and put all 12 channels on the same single links (busbw about 20 GB/s).
  // NCCL's search keeps to NVLink and finds six directed rings on disjoint links: 6 x 20 GB/s.
  const core::Scenario s = io::load_scenario("dgx1-v100");
  const core::Topology t = topologies::build(s.topology, 8);
  const auto registry = algorithms::make_default_registry();
  const auto& ring = registry.find(core::CollectiveKind::allreduce, "nccl_ring");
  algorithms::Request req;
  req.ranks = 8;
  req.bytes = core::Bytes{std::uint64_t{1} << 30};
  req.topology = &t;
  req.params = algorithms::resolve_params(ring, {{"channels", "12"}, {"protocol", "simple"}});
  const core::Schedule sched = registry.generate(ring, req);
  // Every message goes to a GPU joined to its sender by an NVLink, and no directed NVLink pair
  // carries more than its link count's share: 12 channels over 6 link-disjoint directed rings.
  std::map<std::pair<core::Rank, core::Rank>, std::uint64_t> bytes;
  for (core::OpId id = 0; id < sched.op_count(); ++id) {
    if (sched.kind(id) == core::OpKind::send) {
      const core::Op op = sched.op(id);
      bytes[{op.rank, op.peer}] += op.target.length;
    }
  }
  for (const auto& [pair, n] : bytes) {
    INFO("GPU " << pair.first << " -> " << pair.second);
    const auto link = t.link_between(t.device_of(pair.first), t.device_of(pair.second));
    REQUIRE(link.has_value());
    CHECK(t.links()[*link].kind == core::LinkKind::nvlink);
    const double share = static_cast<double>(n) / t.links()[*link].bandwidth.bytes_per_second;
    // Per rank and direction a ring allreduce moves 2 (p-1)/p n; over 6 rings of single links
    // (25 GB/s) that is (7/4 GiB / 6) / 25 GB/s per link, 2-link pairs at most twice the bytes.
    CHECK(share <= 1.75 * (1ULL << 30) / 6.0 / 25e9 * 1.0001);
  }
  core::StudySpec st;
  st.collective = core::CollectiveKind::allreduce;
  st.algorithms = {"nccl_ring"};
  st.ranks = {8};
  st.sizes = {req.bytes};
  const auto rows = analysis::run_study(s, st, registry).rows;
  REQUIRE(rows.size() == 1);
  // 6 rings x 22.6 GB/s per NVLink 2, the rate a published V100 run measures (docs/stacks.md,
  // "V100's NVLink 2 at its measured rate"; NCCL's own SM70 figure, 20 GB/s, gave 120).
  CHECK(rows[0].busbw.gbps() == Approx(135.5).epsilon(0.02));
}

namespace {

std::vector<core::ResultRow> auto_allreduce(const core::Scenario& s, std::uint32_t ranks,
                                            std::vector<core::Bytes> sizes) {
  core::StudySpec st;
  st.collective = core::CollectiveKind::allreduce;
  st.algorithms = {"auto"};
  st.ranks = {ranks};
  st.sizes = std::move(sizes);
  return analysis::run_study(s, st, algorithms::make_default_registry()).rows;
}

} // namespace

TEST_CASE("gcp-a3-mega runs NCCL within Google's GPUDirect-TCPXO profile", "[presets][nccl]") {
  // The preset's nccl.env is the profile Google's TCPXO release has every workload source
  // (NCCL_ALGO=Ring,Tree, NCCL_PROTO=Simple,LL128, NCCL_NVLS_ENABLE=0, NCCL_MIN_NCHANNELS=4):
  // NCCL's own choice never reaches NVLS, NVLS-tree or LL, and opens at least 4 channels.
  const core::Scenario s = io::load_scenario("gcp-a3-mega");
  REQUIRE(s.nccl.env.at("NCCL_NVLS_ENABLE") == "0");
  std::vector<core::Bytes> sizes;
  for (std::uint64_t b = 8; b <= (std::uint64_t{1} << 30); b *= 32) {
    sizes.push_back(core::Bytes{b});
  }
  const auto rows = auto_allreduce(s, 16, sizes);
  REQUIRE(rows.size() == sizes.size());
  for (const core::ResultRow& row : rows) {
    INFO(row.bytes.value << " B: " << row.params);
    const bool ring_or_tree = row.params.find("algorithm=nccl_ring") != std::string::npos ||
                              row.params.find("algorithm=nccl_tree") != std::string::npos;
    CHECK(ring_or_tree);
    CHECK(row.params.find("protocol=ll,") == std::string::npos);
    CHECK(row.params.ends_with("protocol=ll") == false);
    CHECK(row.params.find("channels=1,") == std::string::npos);
    CHECK(row.params.find("channels=2,") == std::string::npos);
  }
}

TEST_CASE("tcpxo's latency and efficiency reproduce the published run they come from",
          "[presets][nccl]") {
  // topologies/src/nic_kinds.cpp derives both from one public nccl-tests all_reduce_perf run on
  // 2 x A3 Mega under Google's 2024 profile (NCCL_PROTO=Simple): 123 us for 8 B (two network
  // crossings of 2 x 15 us beyond NCCL's 92.4 us Tree/Simple latency) and algbw 180.71 GB/s at
  // 8 GiB (each node sends S over 8 x 200 Gb/s at 0.90). With the old guesses (5 us, 0.80) the
  // 8 B row was 92.4 us (-25 %) and 8 GiB 54.2 ms (algbw 158.5 GB/s, -12 %).
  core::Scenario s = io::load_scenario("gcp-a3-mega");
  s.nccl.env["NCCL_PROTO"] = "Simple";
  const auto rows = auto_allreduce(s, 16, {core::Bytes{8}, core::Bytes{std::uint64_t{8} << 30}});
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].time.value * 1e6 == Approx(123.0).epsilon(0.10));
  CHECK(rows[1].algbw.gbps() == Approx(180.71).epsilon(0.12));
}
