// `collsim topology import` as users run it on real published inputs
// (tests/data/topology/PROVENANCE.md): the scenario it writes (reviewed golden files under
// tests/data/topology/imported/), the link structure that scenario builds against the preset of the
// same machine (`collsim topology show`), and bad input.

#include "cli_test_support.hpp"

#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

namespace {

using collsim::testing::Output;
using collsim::testing::run_collsim;
using collsim::testing::run_json;
using collsim::testing::TempScenario;

const std::string kData = "tests/data/topology/";

std::string text_of(const std::string& path) {
  std::ifstream in(std::string(COLLSIM_SOURCE_DIR) + "/" + path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

/// Device counts and directed link counts per kind of `topology show --format json`.
nlohmann::json structure(const nlohmann::json& show) {
  nlohmann::json s;
  s["devices"] = show["devices"];
  for (const auto& [kind, l] : show["links"].items()) {
    s["links"][kind] = {l["directed"], l["duplex_pairs"]};
  }
  return s;
}

/// `topology show --format json` of what `topology import FLAG INPUT` writes (FLAG: --lstopo or
/// --nvidia-smi-topo), and of the one-node scenario `preset_body` (a preset as base) at `ranks`;
/// `summary` is the import's stderr line.
struct Imported {
  nlohmann::json imported;
  nlohmann::json reference;
};
Imported import_and_preset(const std::string& flag, const std::string& input,
                           const std::string& summary, const std::string& preset_body,
                           std::uint32_t ranks = 8) {
  const std::string out = std::string(COLLSIM_SOURCE_DIR) + "/build/" + input + ".yaml";
  const Output o = run_collsim("topology import " + flag + " " + kData + input + " -o " + out);
  INFO(o.err);
  REQUIRE(o.code == 0);
  CHECK(o.err.find(summary) != std::string::npos);
  Imported r;
  r.imported = run_json("topology show " + out + " --format json");
  std::remove(out.c_str());
  // A name of its own per input: ctest runs these cases in parallel.
  const TempScenario preset(input + "_preset", preset_body);
  r.reference = run_json("topology show " + preset.path + " --ranks " + std::to_string(ranks) +
                         " --format json");
  return r;
}

/// One node of `preset` on one switch, with `node_yaml` (indented for topology.node) changed and
/// a study at `ranks`.
std::string one_node_of(const std::string& preset, const std::string& node_yaml,
                        std::uint32_t ranks) {
  return "base: " + preset +
         "\ntopology:\n  kind: system\n  nodes: 1\n  network:\n    kind: switch\n" + node_yaml +
         "studies:\n  - name: s\n    collective: allreduce\n" +
         "    algorithms: [ring]\n    ranks: [" + std::to_string(ranks) + "]\n    sizes: [1KiB]\n";
}
} // namespace

TEST_CASE("topology import: a DGX-1 from nvidia-smi topo -m builds the dgx1-v100 preset's node",
          "[cli][topology][import]") {
  const auto [imported, reference] = import_and_preset(
      "--nvidia-smi-topo", "dgx1-v100-4xmlx5.nvidia-smi-topo.txt", "8 x GPU, 4 NICs",
      "base: dgx1-v100\ntopology:\n  kind: system\n  nodes: 1\n");
  CHECK(structure(imported) == structure(reference));
  // The same 16 NVLink pairs of 1 or 2 links at 25 GB/s: the same NVLink bandwidth in all.
  CHECK(imported["links"]["nvlink"]["total_bandwidth_Bps"] ==
        reference["links"]["nvlink"]["total_bandwidth_Bps"]);
  CHECK(imported["devices"]["gpu"] == 8);
  CHECK(imported["devices"]["pcie_switch"] == 4);
  CHECK(imported["devices"]["nic"] == 4);
}

TEST_CASE("topology import: a DGX A100 from nvidia-smi topo -m builds the dgx-a100 preset's node",
          "[cli][topology][import]") {
  // The preset's node on one switch (the import describes one node, not the SuperPOD fabric).
  const auto [imported, reference] = import_and_preset(
      "--nvidia-smi-topo", "dgx-a100-10xmlx5.nvidia-smi-topo.txt",
      "2 sockets x 4 NUMA x 64 cores, 8 x GPU, 8 NICs", one_node_of("dgx-a100", "", 8));
  CHECK(structure(imported) == structure(reference));
  CHECK(imported["links"]["nvlink"]["total_bandwidth_Bps"] ==
        reference["links"]["nvlink"]["total_bandwidth_Bps"]);
  CHECK(imported["devices"]["numa"] == 8);
  CHECK(imported["devices"]["pcie_switch"] == 4);
  CHECK(imported["devices"]["nic"] == 8);
}

TEST_CASE(
    "topology import: a PCIe-only GPU node and 2-socket CPU nodes build their class's presets",
    "[cli][topology][import]") {
  SECTION("LLNL Pascal (2 x P100 PCIe and the NIC under one Gen3 switch) is pcie3-2gpu-nop2p's "
          "node") {
    const auto [imported, reference] = import_and_preset(
        "--lstopo", "llnl-pascal-2xP100-PCIe.lstopo.xml", "2 x Tesla P100-PCIE-16GB, 1 NIC",
        one_node_of("pcie3-2gpu-nop2p", "", 2), 2);
    CHECK(structure(imported) == structure(reference));
    CHECK(imported["devices"]["pcie_switch"] == 1);
  }
  // The presets' CPUs have more cores than these older parts: the preset's node is compared with
  // the imported core count, the rest of its structure as it is.
  SECTION("a 2 x EPYC 7551 node (4 NUMA per socket, one mlx5) is cpu-hdr100-epyc's node") {
    const auto [imported, reference] = import_and_preset(
        "--lstopo", "2s-epyc7551-mlx5.hwloc1.lstopo.xml", "2 sockets x 4 NUMA x 32 cores",
        one_node_of("cpu-hdr100-epyc", "  node:\n    cpu:\n      cores_per_socket: 32\n", 64), 64);
    CHECK(structure(imported) == structure(reference));
    CHECK(imported["devices"]["numa"] == 8);
  }
  SECTION("LLNL Quartz (2 x 18-core Broadwell, one Omni-Path NIC) is qiming's node") {
    const auto [imported, reference] = import_and_preset(
        "--lstopo", "llnl-quartz-2s-cpu-hfi1.lstopo.xml", "2 sockets x 1 NUMA x 18 cores",
        one_node_of("qiming", "  node:\n    cpu:\n      cores_per_socket: 18\n", 36), 36);
    CHECK(structure(imported) == structure(reference));
    CHECK(imported["devices"]["core"] == 36);
  }
}

TEST_CASE("topology import: real lstopo XML of GPU and CPU nodes give the reviewed scenarios",
          "[cli][topology][import]") {
  // name of the input, golden file
  const std::vector<std::pair<std::string, std::string>> cases{
      {"dgx2.hwloc-test.lstopo.xml", "dgx2.yaml"},
      {"aws-g4dn-metal-8xT4.lstopo.xml", "aws-g4dn-metal.yaml"},
      {"llnl-quartz-2s-cpu-hfi1.lstopo.xml", "llnl-quartz.yaml"},
      {"llnl-corona-2s-epyc7401-4xVega20.lstopo.xml", "llnl-corona.yaml"},
  };
  for (const auto& [input, golden] : cases) {
    INFO(input);
    const Output o = run_collsim("topology import --lstopo " + kData + input + " --name " +
                                 golden.substr(0, golden.size() - 5));
    INFO(o.err);
    REQUIRE(o.code == 0);
    CHECK(o.out == text_of(kData + "imported/" + golden));
    // The scenario runs: topology show builds it.
    const TempScenario s(golden.substr(0, golden.size() - 5) + "_check",
                         o.out.substr(o.out.find('\n', o.out.find("name:")) + 1));
    const Output show = run_collsim("topology show " + s.path);
    INFO(show.err);
    CHECK(show.code == 0);
  }
}

TEST_CASE("topology import: several nodes on a network", "[cli][topology][import]") {
  const Output o =
      run_collsim("topology import --lstopo " + kData +
                  "llnl-quartz-2s-cpu-hfi1.lstopo.xml --nodes 4 --network fat_tree --name quartz4");
  INFO(o.err);
  REQUIRE(o.code == 0);
  CHECK(o.out.find("  nodes: 4\n") != std::string::npos);
  CHECK(o.out.find("  network:\n    kind: fat_tree") != std::string::npos);
  CHECK(o.out.find("    ranks: [36, 144]\n") != std::string::npos);
}

TEST_CASE("topology import: bad input is one positioned error and exit 2",
          "[cli][topology][import][errors]") {
  const Output none = run_collsim("topology import");
  CHECK(none.code == 2);
  CHECK(none.err.find("give --lstopo") != std::string::npos);

  const TempScenario garbage("not_a_topology", "");
  const Output bad = run_collsim("topology import --lstopo " + garbage.path);
  CHECK(bad.code == 2);
  CHECK(bad.err.find("not_a_topology.yaml:1:1: error: not hwloc XML: no <topology> element") !=
        std::string::npos);
  CHECK(std::count(bad.err.begin(), bad.err.end(), '\n') == 1);

  const Output mismatch = run_collsim("topology import --lstopo " + kData +
                                      "llnl-pascal-2xP100-PCIe.lstopo.xml --nvidia-smi-topo " +
                                      kData + "dgx1-v100-4xmlx5.nvidia-smi-topo.txt");
  CHECK(mismatch.code == 2);
  CHECK(mismatch.err.find("dgx1-v100-4xmlx5.nvidia-smi-topo.txt lists 8 GPUs, the lstopo XML 2: "
                          "are both from the same machine?") != std::string::npos);

  const Output network = run_collsim("topology import --lstopo " + kData +
                                     "llnl-quartz-2s-cpu-hfi1.lstopo.xml --network fat-tree");
  CHECK(network.code == 2);
  CHECK(network.err.find("unknown network kind 'fat-tree' (did you mean 'fat_tree'?)") !=
        std::string::npos);
}

TEST_CASE("topology import --this-machine reads this machine as its own lstopo XML does",
          "[cli][topology][import]") {
  // lstopo-no-graphics is Debian's hwloc-nox (scripts/bootstrap.sh installs it). hwloc's
  // discovery and its XML of the same discovery give the same node; no GPU here, so
  // nvidia-smi and ibstat add nothing.
  const std::string xml = std::string(COLLSIM_SOURCE_DIR) + "/build/this-machine-cli.lstopo.xml";
  REQUIRE(std::system(("lstopo-no-graphics --of xml > " + xml).c_str()) == 0);
  const Output from_xml = run_collsim("topology import --lstopo " + xml + " --name here");
  std::remove(xml.c_str());
  const Output here = run_collsim("topology import --this-machine --name here");
  INFO(from_xml.err << here.err);
  REQUIRE(from_xml.code == 0);
  REQUIRE(here.code == 0);
  // The CPU side is hwloc's either way; where nvidia-smi or ibstat run (a GPU or InfiniBand
  // node), --this-machine adds what they say, so only the cpu section is compared.
  const auto cpu = [](const std::string& yaml) {
    const auto at = yaml.find("    cpu:\n");
    return at == std::string::npos
               ? std::string()
               : yaml.substr(at, yaml.find("      # memory_bandwidth", at) - at);
  };
  REQUIRE(!cpu(here.out).empty());
  CHECK(cpu(here.out) == cpu(from_xml.out));
  CHECK(here.out.rfind("# Written by collsim topology import --this-machine\n", 0) == 0);

  const Output both = run_collsim("topology import --this-machine --lstopo x.xml");
  CHECK(both.code == 2);
  CHECK(both.err.find("--this-machine reads this machine") != std::string::npos);
}
