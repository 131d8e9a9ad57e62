// What-if studies (analysis/what_if.hpp): the knobs each topology kind offers, with the scenario's
// values; applying changes moves the times the way the bottleneck says; node shape changes reach
// the built topology; bad changes are UsageErrors that say what is wrong.

#include "collsim/analysis/simulate.hpp"
#include "collsim/analysis/what_if.hpp"
#include "collsim/core/errors.hpp"
#include "collsim/io/presets.hpp"
#include "collsim/io/scenario_loader.hpp"
#include "collsim/topologies/build.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <string>
#include <vector>

using namespace collsim;
using analysis::FitParameter;
using Unit = analysis::FitParameter::Unit;

namespace {

core::Scenario preset(const std::string& name) {
  const auto text = io::preset_text(name);
  REQUIRE(text);
  return io::parse_scenario(*text, io::preset_file(name));
}

std::vector<std::string> paths(const std::vector<analysis::WhatIfKnob>& knobs) {
  std::vector<std::string> out;
  for (const auto& k : knobs) {
    out.push_back(k.path);
  }
  return out;
}

const analysis::WhatIfKnob& knob(const std::vector<analysis::WhatIfKnob>& knobs,
                                 const std::string& path) {
  const auto it =
      std::find_if(knobs.begin(), knobs.end(), [&](const auto& k) { return k.path == path; });
  REQUIRE(it != knobs.end());
  return *it;
}

/// The time of one ring allreduce of `bytes` at `ranks` ranks, loggp.
double ring_time(const core::Scenario& s, std::uint32_t ranks, core::Bytes bytes) {
  core::StudySpec study;
  study.collective = core::CollectiveKind::allreduce;
  study.algorithms = {"ring"};
  study.ranks = {ranks};
  study.sizes = {bytes};
  const auto registry = algorithms::make_default_registry();
  const auto result = analysis::run_study(s, study, registry, {}, 1);
  REQUIRE(result.rows.size() == 1);
  return result.rows[0].time.value;
}

const char* kCluster = R"(name: small-cluster
topology:
  kind: cluster
  nodes: 4
  devices_per_node: 4
  intra_bandwidth: 100 GB/s
  intra_latency: 1 us
  nic_bandwidth: 25 GB/s
  nic_latency: 1.5 us
studies:
  - collective: allreduce
    algorithms: [ring]
    ranks: [8]
    sizes: 1KiB
)";

} // namespace

TEST_CASE("what-if knobs are the link levels of each topology kind, with the scenario's values",
          "[analysis][what_if]") {
  SECTION("uniform: the link's latency and bandwidth, no nodes") {
    const auto s = preset("textbook");
    const auto knobs = analysis::what_if_knobs(s);
    // The reduction rate (20 GB/s in textbook) is not a knob.
    CHECK(paths(knobs) == std::vector<std::string>{"topology.latency", "topology.bandwidth"});
    CHECK(knobs[0].unit == Unit::seconds);
    CHECK(knobs[0].value == Approx(2e-6));
    CHECK(knobs[0].label == "link latency");
    CHECK(knobs[1].unit == Unit::bandwidth);
    CHECK(knobs[1].value == Approx(10e9));
    const auto shape = analysis::what_if_shape(s);
    CHECK_FALSE(shape.nodes);
    CHECK_FALSE(shape.ranks_per_node);
  }
  SECTION("cluster: intra-node and NIC levels, nodes and devices per node") {
    const auto s = io::parse_scenario(kCluster, "small-cluster.yaml");
    const auto knobs = analysis::what_if_knobs(s);
    CHECK(paths(knobs) ==
          std::vector<std::string>{"topology.intra_latency", "topology.intra_bandwidth",
                                   "topology.nic_latency", "topology.nic_bandwidth"});
    CHECK(knob(knobs, "topology.nic_latency").value == Approx(1.5e-6));
    CHECK(knob(knobs, "topology.intra_bandwidth").value == Approx(100e9));
    const auto shape = analysis::what_if_shape(s);
    CHECK(shape.nodes == std::optional<std::uint32_t>(4));
    CHECK(shape.ranks_per_node == std::optional<std::uint32_t>(4));
  }
  SECTION("system of GPU nodes: NVLink and NIC levels") {
    const auto s = preset("dgx-a100");
    const auto knobs = analysis::what_if_knobs(s);
    CHECK(paths(knobs) == std::vector<std::string>{
                              "topology.node.nvlink.latency", "topology.node.nvlink.link_bandwidth",
                              "topology.node.nic_latency", "topology.node.nic_bandwidth"});
    // 25 GB/s per NVLink, 1 us; HDR200 = 200 Gb/s = 25 GB/s, 0.3 us.
    CHECK(knob(knobs, "topology.node.nvlink.link_bandwidth").value == Approx(25e9));
    CHECK(knob(knobs, "topology.node.nvlink.latency").value == Approx(1e-6));
    CHECK(knob(knobs, "topology.node.nic_bandwidth").value == Approx(25e9));
    CHECK(knob(knobs, "topology.node.nic_latency").value == Approx(0.3e-6));
    CHECK(knob(knobs, "topology.node.nic_bandwidth").label == "NIC bandwidth");
    const auto shape = analysis::what_if_shape(s);
    CHECK(shape.nodes == std::optional<std::uint32_t>(32));
    CHECK(shape.ranks_per_node == std::optional<std::uint32_t>(0)); // every GPU
    CHECK(shape.max_ranks_per_node == 8);
  }
  SECTION("system of CPU nodes: the memory path, LogGP o and the NIC") {
    const auto s = preset("cpu-hdr100-epyc");
    const auto knobs = analysis::what_if_knobs(s);
    CHECK(paths(knobs) == std::vector<std::string>{"topology.node.cpu.memory_latency",
                                                   "topology.node.cpu.memory_bandwidth",
                                                   "topology.overhead", "topology.node.nic_latency",
                                                   "topology.node.nic_bandwidth"});
    CHECK(knob(knobs, "topology.node.cpu.memory_bandwidth").value == Approx(171.5e9));
    CHECK(knob(knobs, "topology.node.nic_bandwidth").value == Approx(12.5e9)); // 100 Gb/s
    CHECK(analysis::what_if_shape(s).max_ranks_per_node == 128);
  }
}

TEST_CASE("the NIC bandwidth of dgx-a100 sets a multi-node ring's large-message time until PCIe "
          "becomes the bottleneck",
          "[analysis][what_if]") {
  // 16 ranks = 2 nodes of 8 GPUs; a 1 GiB ring allreduce moves 2 (p-1)/p x 1 GiB through every
  // rank's slowest hop, which at HDR200 is the NIC (25 GB/s; NVLink gives 300 GB/s, the GPU's PCIe
  // Gen4 x16 path to the NIC 31.5 GB/s). The 30 steps' start-up costs (a few us each, about
  // 0.1 ms) are 0.1 % of the 80 ms total, so the ratios below hold to better than 1 %.
  const auto base = preset("dgx-a100");
  const core::Bytes gib{1ULL << 30};
  const double t = ring_time(base, 16, gib);
  CHECK(t == Approx(2.0 * 15 / 16 * (1ULL << 30) / 25e9).epsilon(0.01));

  analysis::WhatIf half;
  half.values["topology.node.nic_bandwidth"] = 12.5e9;
  const double t_half = ring_time(analysis::apply_what_if(base, half), 16, gib);
  CHECK(t_half / t == Approx(2.0).epsilon(0.01));

  // Doubling the NIC to 50 GB/s moves the bottleneck to PCIe Gen4 x16 (31.5 GB/s): the time
  // drops by 25/31.5, not by half.
  analysis::WhatIf twice;
  twice.values["topology.node.nic_bandwidth"] = 50e9;
  const double t_twice = ring_time(analysis::apply_what_if(base, twice), 16, gib);
  CHECK(t_twice / t == Approx(25.0 / 31.5).epsilon(0.01));

  // Inside one node (8 ranks) the NIC is not used: the time does not move.
  CHECK(ring_time(analysis::apply_what_if(base, half), 8, gib) ==
        Approx(ring_time(base, 8, gib)).epsilon(1e-12));
}

TEST_CASE("a what-if latency moves a small message's time by the number of steps that cross it",
          "[analysis][what_if]") {
  // Textbook: every pair has its own link. A ring allreduce of 8 B at 8 ranks has 2 (p-1) = 14
  // steps, each paying alpha once; adding 3 us to alpha adds 14 x 3 us = 42 us.
  const auto base = preset("textbook");
  analysis::WhatIf w;
  w.values["topology.latency"] = 5e-6;
  const auto changed = analysis::apply_what_if(base, w);
  CHECK(changed.topology.uniform.latency.value == 5e-6);
  CHECK(base.topology.uniform.latency.value == 2e-6); // the input is left alone
  const double dt = ring_time(changed, 8, core::Bytes{8}) - ring_time(base, 8, core::Bytes{8});
  CHECK(dt == Approx(14 * 3e-6).epsilon(1e-9));
}

TEST_CASE("what-if node count and ranks per node reach the built topology", "[analysis][what_if]") {
  SECTION("system: ranks per node spreads 16 ranks over 4 DGX nodes") {
    const auto base = preset("dgx-a100");
    CHECK(topologies::build(base.topology, 16).node_of(15) == 1);
    analysis::WhatIf w;
    w.ranks_per_node = 4;
    w.nodes = 4;
    const auto s = analysis::apply_what_if(base, w);
    CHECK(s.topology.system.placement.ranks_per_node == 4);
    CHECK(s.topology.system.nodes == 4);
    const auto t = topologies::build(s.topology, 16);
    CHECK(t.node_of(3) == 0);
    CHECK(t.node_of(4) == 1);
    CHECK(t.node_of(15) == 3);
    // 4 nodes of 4 ranks hold 16 ranks, not 17.
    CHECK(topologies::rank_capacity(s.topology) == 16);
    CHECK_THROWS_AS(topologies::build(s.topology, 17), core::UsageError);
  }
  SECTION("cluster: nodes and devices per node") {
    const auto base = io::parse_scenario(kCluster, "small-cluster.yaml");
    analysis::WhatIf w;
    w.nodes = 2;
    w.ranks_per_node = 8;
    const auto s = analysis::apply_what_if(base, w);
    CHECK(s.topology.cluster.nodes == 2);
    CHECK(s.topology.cluster.devices_per_node == 8);
    const auto t = topologies::build(s.topology, 16);
    CHECK(t.node_of(7) == 0);
    CHECK(t.node_of(8) == 1);
  }
}

TEST_CASE("a what-if change the scenario cannot take is a UsageError that says why",
          "[analysis][what_if]") {
  const auto dgx = preset("dgx-a100");
  SECTION("an unknown path lists the valid ones") {
    analysis::WhatIf w;
    w.values["topology.node.nic_bandwith"] = 50e9;
    try {
      (void)analysis::apply_what_if(dgx, w);
      FAIL("expected a UsageError");
    } catch (const core::UsageError& e) {
      const std::string what = e.what();
      CHECK(what.starts_with("cannot fit 'topology.node.nic_bandwith' on a system topology"));
      CHECK(what.find("topology.node.nic_bandwidth") != std::string::npos);
    }
  }
  SECTION("a path of another topology kind") {
    analysis::WhatIf w;
    w.values["topology.bandwidth"] = 50e9;
    CHECK_THROWS_AS(analysis::apply_what_if(dgx, w), core::UsageError);
  }
  SECTION("a bandwidth of zero") {
    analysis::WhatIf w;
    w.values["topology.node.nic_bandwidth"] = 0.0;
    CHECK_THROWS_WITH(
        analysis::apply_what_if(dgx, w),
        "what-if: topology.node.nic_bandwidth must be a positive bandwidth, got 0 GB/s");
  }
  SECTION("a negative latency") {
    analysis::WhatIf w;
    w.values["topology.node.nic_latency"] = -1e-6;
    CHECK_THROWS_AS(analysis::apply_what_if(dgx, w), core::UsageError);
  }
  SECTION("more ranks per node than GPUs") {
    analysis::WhatIf w;
    w.ranks_per_node = 9;
    CHECK_THROWS_WITH(analysis::apply_what_if(dgx, w),
                      "what-if: 9 ranks per node, but a node has 8 GPUs");
  }
  SECTION("nodes on a uniform topology") {
    analysis::WhatIf w;
    w.nodes = 2;
    CHECK_THROWS_AS(analysis::apply_what_if(preset("textbook"), w), core::UsageError);
  }
}

TEST_CASE("what-if values show in GB/s and us", "[analysis][what_if]") {
  CHECK(analysis::to_display(Unit::bandwidth, 25e9) == Approx(25.0));
  CHECK(analysis::from_display(Unit::bandwidth, 25.0) == Approx(25e9));
  CHECK(analysis::to_display(Unit::seconds, 0.3e-6) == Approx(0.3));
  CHECK(analysis::from_display(Unit::seconds, 0.3) == Approx(0.3e-6));
  CHECK(analysis::what_if_display_unit(Unit::bandwidth) == "GB/s");
  CHECK(analysis::what_if_display_unit(Unit::seconds) == "us");
}
