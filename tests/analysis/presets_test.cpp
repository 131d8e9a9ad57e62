// Every preset of scenarios/ loads by name, builds at every rank count of its studies, runs its
// studies (at small sizes, so the default test run stays short), and no simulated bandwidth beats
// what the topology physically allows for that placement.

#include "physical_bounds.hpp"

#include "collsim/analysis/simulate.hpp"
#include "collsim/io/presets.hpp"
#include "collsim/io/scenario_loader.hpp"
#include "collsim/topologies/build.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <limits>
#include <map>

using namespace collsim;

TEST_CASE("every preset loads by name, builds, runs its studies and respects physical bounds",
          "[analysis][presets]") {
  const auto registry = algorithms::make_default_registry();
  const auto names = io::preset_names();
  // The presets the issue asks for, and the files behind them.
  for (const char* expected :
       {"juwels-booster", "dgx-a100",      "dgx-h100", "dgx1-v100",      "pcie-gpu-node",
        "gadi",           "nscc-aspire2a", "qiming",   "dragonfly-1024", "fat-tree-tapered",
        "default",        "hgx-h200",      "dgx-b200", "gb200-nvl72",    "aws-p4d",
        "aws-p5",         "gcp-a3-mega",   "gcp-a3",   "oci-a100-roce",  "pcie3-2gpu-nop2p",
        "jsc-mpi-as-api", "aws-p3dn"}) {
    CHECK(std::find(names.begin(), names.end(), expected) != names.end());
    CHECK(std::filesystem::exists(std::string(COLLSIM_SOURCE_DIR) + "/scenarios/" + expected +
                                  ".yaml"));
  }
  for (const auto& name : names) {
    INFO("preset " << name);
    const auto scenario = io::load_scenario(name);
    CHECK(scenario.file == "scenarios/" + name + ".yaml");
    // The compiled-in copy is the file in the source tree.
    auto from_file = io::load_scenario(std::string(COLLSIM_SOURCE_DIR) + "/" + scenario.file);
    from_file.file = scenario.file;
    for (auto& [path, pos] : from_file.topology.value_pos) {
      pos.file = scenario.topology.where(path).file;
    }
    from_file.topology.pos.file = scenario.topology.pos.file;
    CHECK(from_file.topology == scenario.topology);
    CHECK(from_file.name == scenario.name);
    REQUIRE_FALSE(scenario.studies.empty());
    for (auto study : scenario.studies) {
      // Small sizes only: a small message and one of 1 MiB (or the study's largest below it).
      std::vector<core::Bytes> sizes;
      sizes.push_back(study.sizes.front());
      core::Bytes mid{0};
      for (const auto s : study.sizes) {
        if (s.value <= (1U << 20)) {
          mid = s;
        }
      }
      if (mid.value > sizes.front().value) {
        sizes.push_back(mid);
      }
      study.sizes = sizes;
      const auto result = analysis::run_study(scenario, study, registry, {}, 2);
      const std::size_t stacks = std::max<std::size_t>(study.stacks.size(), 1);
      CHECK(result.rows.size() + result.skipped.size() ==
            study.algorithms.size() * stacks * study.ranks.size() * sizes.size());
      CHECK(result.rows.size() >= study.ranks.size() * sizes.size());
      std::map<std::uint32_t, core::Topology> topologies;
      for (const auto& row : result.rows) {
        INFO(row.algorithm << " at " << row.ranks << " ranks, " << row.bytes.value << " B");
        CHECK(row.time.value > 0.0);
        if (row.ranks < 2) {
          continue;
        }
        auto it = topologies.find(row.ranks);
        if (it == topologies.end()) {
          it = topologies.emplace(row.ranks, topologies::build(scenario.topology, row.ranks)).first;
        }
        if (row.varying) {
          continue; // a v-collective's busbw is the uniform factor on S, not a link's share
        }
        const double limit = testing::busbw_bound(it->second, row) * (1 + 1e-9);
        const double seen = testing::in_network(row.algorithm) ? row.algbw.bytes_per_second
                                                               : row.busbw.bytes_per_second;
        CHECK(seen <= limit);
      }
    }
  }
}

TEST_CASE("the CPU presets give one core's bandwidth from a measured DRAM latency",
          "[analysis][presets]") {
  // Little's law as topologies::core_memory_bandwidth takes it: 24 lines of 64 B in flight over
  // the DRAM latency. Intel presets: AnandTech's Skylake-SP 89-91 ns (the preset files cite it),
  // given as core_bandwidth, because their memory_latency (0.3 us) is a route latency between
  // cores; EPYC presets: their memory_latency is AnandTech's Rome DRAM latency, 113 ns.
  const auto core_of = [](const char* preset) {
    return topologies::core_memory_bandwidth(io::load_scenario(preset).topology.system.node.cpu)
        .bytes_per_second;
  };
  for (const char* intel : {"gadi", "qiming", "azure-hc44rs"}) {
    INFO(intel);
    CHECK(core_of(intel) == Approx(24.0 * 64 / 90e-9).epsilon(0.005));
  }
  for (const char* epyc : {"cpu-hdr100-epyc", "nscc-aspire2a"}) {
    INFO(epyc);
    CHECK(core_of(epyc) == Approx(24.0 * 64 / 113e-9));
  }
}
