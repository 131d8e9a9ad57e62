// The node readers on real published inputs (tests/data/topology/PROVENANCE.md): what hwloc's
// XML, nvidia-smi topo -m and ibstat say about each machine, and the scenario that models it.

#include "collsim/core/scenario.hpp"
#include "collsim/describe/node.hpp"
#include "collsim/io/scenario_loader.hpp"
#include "describe_test_support.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace {

using namespace collsim;

std::string data(const std::string& name) {
  return testing::topology_data(name);
}
using testing::text_of;

/// The scenario `yaml` as collsim loads it.
core::Scenario load(const std::string& yaml, const std::string& stem) {
  const std::string path = std::string(COLLSIM_SOURCE_DIR) + "/build/" + stem + ".yaml";
  std::ofstream(path) << yaml;
  core::Scenario s = io::load_scenario(path);
  std::remove(path.c_str());
  return s;
}

std::vector<std::int32_t> switches_of(const describe::NodeDescription& n) {
  std::vector<std::int32_t> out;
  for (const auto& g : n.gpus) {
    out.push_back(g.at.pcie_switch);
  }
  return out;
}

} // namespace

TEST_CASE("nvidia-smi topo -m of a DGX-1: the hybrid cube-mesh and four NICs", "[describe]") {
  const auto m = describe::parse_nvidia_smi_topo(
      text_of(data("dgx1-v100-4xmlx5.nvidia-smi-topo.txt")), "dgx1.txt");
  REQUIRE(m.names.size() == 12);
  CHECK(m.names[8] == "mlx5_2");
  CHECK(std::count(m.is_gpu.begin(), m.is_gpu.end(), true) == 8);
  CHECK(m.cells[0][3] == "NV2");
  CHECK(m.cells[0][5] == "SYS");
  CHECK(m.cells[0][9] == "PIX"); // GPU0 and mlx5_0 under one switch

  describe::NodeDescription node;
  describe::merge_topo_matrix(node, m, "dgx1.txt");
  describe::choose_compute_nics(node);
  REQUIRE(node.gpus.size() == 8);
  CHECK(node.sockets == 2); // two NUMA groups: GPU0-3, GPU4-7
  // CPU Affinity 0-19,40-59 and 20-39,60-79: 80 CPUs, 2 threads per core, 20 cores per socket
  // (2 x Xeon E5-2698 v4).
  CHECK(m.cpus[0].size() == 40);
  CHECK(m.numa[0].empty()); // this older output has no NUMA Affinity column
  CHECK(node.threads_per_core == 2);
  CHECK(node.cores_per_socket == 20);
  CHECK(node.nvlinks.size() == 16);
  CHECK(switches_of(node) == std::vector<std::int32_t>{0, 0, 1, 1, 2, 2, 3, 3});
  REQUIRE(node.nics.size() == 4);
  CHECK(node.nics[0].name == "mlx5_0");
  CHECK(node.nics[0].at.pcie_switch == 0);
  CHECK(node.nics[3].at.pcie_switch == 3);

  // The scenario keeps every NVLink pair with its count; the dgx1-v100 preset has the same 16.
  const core::Scenario s = load(describe::to_scenario_yaml(node, {}), "import_dgx1");
  const core::Scenario preset = io::load_scenario("dgx1-v100");
  const auto& n = s.topology.system.node;
  CHECK(n.gpus == 8);
  CHECK(n.nvlink.kind == preset.topology.system.node.nvlink.kind);
  CHECK(n.nvlink.links == preset.topology.system.node.nvlink.links);
  CHECK(n.pcie.switches == preset.topology.system.node.pcie.switches);
  CHECK(n.nics == 4);
}

TEST_CASE("nvidia-smi topo -m of a DGX A100: NV12 everywhere, NUMA nodes and storage NICs",
          "[describe]") {
  const auto m = describe::parse_nvidia_smi_topo(
      text_of(data("dgx-a100-10xmlx5.nvidia-smi-topo.txt")), "dgxa100.txt");
  REQUIRE(m.names.size() == 20);
  CHECK(m.names[19] == "mlx5_11");
  CHECK(m.numa[0] == std::vector<std::uint32_t>{3});
  CHECK(m.numa[4] == std::vector<std::uint32_t>{7});
  REQUIRE(m.cpus[0].size() == 32); // 48-63,176-191
  CHECK(m.cpus[0].front() == 48);
  CHECK(m.cpus[0].back() == 191);
  CHECK(m.cpus[8].empty()); // a NIC row has no affinity

  describe::NodeDescription node;
  describe::merge_topo_matrix(node, m, "dgxa100.txt");
  describe::choose_compute_nics(node);
  CHECK(node.nvlinks.size() == 28);
  CHECK(std::all_of(node.nvlinks.begin(), node.nvlinks.end(),
                    [](const describe::NvlinkPair& p) { return p.links == 12; }));
  // NUMA nodes 3, 1, 7, 5 of 8 (EPYC 7742 in NPS4): GPU0-3 on the first socket, GPU4-7 on the
  // second, 4 NUMA nodes and 64 cores of 2 threads per socket: the dgx-a100 preset's CPU.
  CHECK(node.sockets == 2);
  CHECK(node.numa_per_socket == 4);
  CHECK(node.cores_per_socket == 64);
  CHECK(node.threads_per_core == 2);
  std::vector<std::int32_t> sockets;
  for (const auto& g : node.gpus) {
    sockets.push_back(g.at.socket);
  }
  CHECK(sockets == std::vector<std::int32_t>{0, 0, 0, 0, 1, 1, 1, 1});
  CHECK(switches_of(node) == std::vector<std::int32_t>{0, 0, 1, 1, 2, 2, 3, 3});
  // mlx5_4/5 and mlx5_10/11 share no switch with a GPU (the storage NICs): 8 compute NICs.
  CHECK(std::count_if(node.nics.begin(), node.nics.end(),
                      [](const describe::Nic& n) { return n.compute; }) == 8);

  const core::Scenario s = load(describe::to_scenario_yaml(node, {}), "import_dgxa100");
  const core::Scenario preset = io::load_scenario("dgx-a100");
  const auto& n = s.topology.system.node;
  const auto& p = preset.topology.system.node;
  CHECK(n.nvlink.kind == p.nvlink.kind);
  CHECK(n.nvlink.links_per_gpu == p.nvlink.links_per_gpu);
  CHECK(n.pcie.switches == p.pcie.switches);
  CHECK(n.cpu.sockets == p.cpu.sockets);
  CHECK(n.cpu.numa_per_socket == p.cpu.numa_per_socket);
  CHECK(n.cpu.cores_per_socket == p.cpu.cores_per_socket);
  CHECK(n.nics == p.nics);
}

TEST_CASE("nvidia-smi topo -m of a DGX-1-style V100 server with one EDR NIC", "[describe]") {
  const auto m = describe::parse_nvidia_smi_topo(
      text_of(data("sxm2-8xV100-hybrid-cube-mesh-1xEDR.nvidia-smi-topo.txt")), "sxm2.txt");
  CHECK(std::count(m.is_gpu.begin(), m.is_gpu.end(), true) == 8);
  describe::NodeDescription node;
  describe::merge_topo_matrix(node, m, "sxm2.txt");
  CHECK(node.nvlinks.size() == 16);
  CHECK(node.nics.size() == 1);
  CHECK(node.sockets == 2);
}

TEST_CASE("hwloc XML of a DGX-2: 16 V100 on NVSwitch under 4 PCIe switch trees", "[describe]") {
  const auto node = describe::read_lstopo_xml(data("dgx2.hwloc-test.lstopo.xml"));
  CHECK(node.sockets == 2);
  REQUIRE(node.gpus.size() == 16);
  CHECK(node.gpus[0].name == "Tesla V100-SXM3-32GB-H");
  CHECK(node.gpus[0].pci_bus == "0000:34:00.0");
  CHECK(switches_of(node) ==
        std::vector<std::int32_t>{0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3});
  CHECK(node.switch_sockets == std::vector<std::int32_t>{0, 0, 1, 1});
  CHECK(node.nvswitch_chips == 11);
  CHECK(node.nvswitch_links_per_gpu == 6); // 6 x 25 GB/s into the NVSwitches (hwloc's matrix)
  REQUIRE(node.pcie_link.has_value());
  CHECK(node.pcie_link->gbps() == Approx(15.753846).epsilon(1e-6));

  const core::Scenario s = load(describe::to_scenario_yaml(node, {}), "import_dgx2");
  const auto& n = s.topology.system.node;
  CHECK(n.nvlink.kind == "switch");
  CHECK(n.nvlink.links_per_gpu == 6);
  CHECK(n.pcie.gen == 3);
  CHECK(n.pcie.switches == 4);
}

TEST_CASE("hwloc XML of a POWER8 Minsky: P100 pairs joined by 2 NVLinks", "[describe]") {
  const auto node = describe::read_lstopo_xml(data("power8-4xP100-nvlink.hwloc-test.lstopo.xml"));
  REQUIRE(node.gpus.size() == 4);
  REQUIRE(node.nvlinks.size() == 2);
  CHECK(node.nvlinks[0] == describe::NvlinkPair{0, 1, 2});
  CHECK(node.nvlinks[1] == describe::NvlinkPair{2, 3, 2});
  const core::Scenario s = load(describe::to_scenario_yaml(node, {}), "import_minsky");
  CHECK(s.topology.system.node.nvlink.kind == "bridges");
  CHECK(s.topology.system.node.nvlink.link_bandwidth.gbps() == Approx(20.0));
}

TEST_CASE("hwloc XML of PCIe GPU nodes: GPUs on root ports or one switch, and their NICs",
          "[describe]") {
  SECTION("AWS g4dn.metal: 8 T4, each on its own root port; the EFA behind a switch") {
    const auto node = describe::read_lstopo_xml(data("aws-g4dn-metal-8xT4.lstopo.xml"));
    CHECK(node.sockets == 2);
    CHECK(node.cores_per_socket == 24);
    CHECK(node.threads_per_core == 2);
    REQUIRE(node.gpus.size() == 8);
    CHECK(switches_of(node) == std::vector<std::int32_t>(8, -1));
    CHECK(node.gpus[4].at.socket == 1);
    REQUIRE(node.nics.size() == 1);
    const core::Scenario s = load(describe::to_scenario_yaml(node, {}), "import_g4dn");
    CHECK(s.topology.system.node.pcie.switches == 0); // the model's switches hold GPUs
    CHECK(s.topology.system.node.pcie.gen == 3);
    CHECK(s.topology.system.node.nvlink.kind == "none");
  }
  SECTION("LLNL Pascal: 2 P100 and the NIC under one switch") {
    const auto node = describe::read_lstopo_xml(data("llnl-pascal-2xP100-PCIe.lstopo.xml"));
    CHECK(switches_of(node) == std::vector<std::int32_t>{0, 0});
    REQUIRE(node.nics.size() == 1);
    CHECK(node.nics[0].name == "mlx5_0");
    CHECK(node.nics[0].at.pcie_switch == 0);
  }
  SECTION("LLNL Corona: 4 AMD Vega 20 (VGA class) on root ports despite their on-package bridges") {
    const auto node =
        describe::read_lstopo_xml(data("llnl-corona-2s-epyc7401-4xVega20.lstopo.xml"));
    REQUIRE(node.gpus.size() == 4);
    CHECK(node.gpus[0].name == "Vega 20");
    // Each GPU sits under AMD's own 1002:14a0/14a1 port pair: part of the package, not a switch.
    CHECK(switches_of(node) == std::vector<std::int32_t>(4, -1));
    CHECK(node.gpus[2].at.socket == 1);
    // The package's internal link reads Gen4 x16; EPYC 7401's slots are Gen3 (the NIC's link).
    REQUIRE(node.pcie_link.has_value());
    CHECK(node.pcie_link->gbps() == Approx(15.75).epsilon(0.01));
    CHECK(node.cpu_model == "AMD EPYC 7401 24-Core Processor"); // AMD's padding trimmed
    CHECK(node.numa_per_socket == 4);
  }
}

TEST_CASE("hwloc XML of 2-socket CPU nodes", "[describe]") {
  SECTION("LLNL Quartz: 2 x 18-core Xeon E5-2695 v4, one Omni-Path NIC") {
    const auto node = describe::read_lstopo_xml(data("llnl-quartz-2s-cpu-hfi1.lstopo.xml"));
    CHECK(node.sockets == 2);
    CHECK(node.cores_per_socket == 18);
    CHECK(node.numa_per_socket == 1);
    CHECK(node.gpus.empty());
    REQUIRE(node.nics.size() == 1);
    CHECK(node.nics[0].name == "hfi1_0");
    CHECK(node.nics[0].at.socket == 1);
    const core::Scenario s = load(describe::to_scenario_yaml(node, {}), "import_quartz");
    CHECK(s.topology.system.node.cpu.sockets == 2);
    CHECK(s.topology.system.node.cpu.cores_per_socket == 18);
  }
  SECTION("2 x EPYC 7551 in hwloc 1.x XML: 4 NUMA domains per socket") {
    const auto node = describe::read_lstopo_xml(data("2s-epyc7551-mlx5.hwloc1.lstopo.xml"));
    CHECK(node.sockets == 2);
    CHECK(node.numa_per_socket == 4);
    CHECK(node.cores_per_socket == 32);
    CHECK(node.cpu_model == "AMD EPYC 7551 32-Core Processor");
  }
}

TEST_CASE("ibstat gives NIC rates and link layers, and NICs without an active port leave the model",
          "[describe]") {
  // ibstat's output format (infiniband-diags, ibstat(8)), written here for two InfiniBand CAs,
  // one down (the real published example, below, is a single RoCE port).
  const std::string text =
      "CA 'mlx5_0'\n\tCA type: MT4123\n\tNumber of ports: 1\n\tPort 1:\n\t\tState: Active\n"
      "\t\tPhysical state: LinkUp\n\t\tRate: 200\n\t\tLink layer: InfiniBand\n"
      "CA 'mlx5_1'\n\tCA type: MT4123\n\tNumber of ports: 1\n\tPort 1:\n\t\tState: Down\n"
      "\t\tPhysical state: Disabled\n\t\tRate: 10\n\t\tLink layer: InfiniBand\n";
  const auto cas = describe::parse_ibstat(text, "ibstat.txt");
  REQUIRE(cas.size() == 2);
  CHECK(cas[0].type == "MT4123");
  REQUIRE(cas[0].ports.size() == 1);
  CHECK(cas[0].ports[0].rate_gbit == 200.0);
  CHECK(cas[1].ports[0].state == "Down");

  describe::NodeDescription node;
  node.nics.resize(2);
  node.nics[0].name = "mlx5_0";
  node.nics[1].name = "mlx5_1";
  describe::merge_ibstat(node, cas, "ibstat.txt");
  CHECK(node.nics[0].rate_gbit == 200.0);
  CHECK(node.nics[0].infiniband);
  CHECK_FALSE(node.nics[1].compute);
  const core::Scenario s = load(describe::to_scenario_yaml(node, {}), "import_ibstat");
  CHECK(s.topology.system.node.nics == 1);
  CHECK(s.topology.system.node.nic_kind == "ib_hdr");
  CHECK(s.topology.system.node.nic_bandwidth.gbps() == Approx(25.0));
}

TEST_CASE("ibstat of a real ConnectX-6 in RoCE mode: an Ethernet link layer is roce",
          "[describe]") {
  // A user's ibstat on the linux-rdma list (tests/data/topology/PROVENANCE.md): 4-space indents,
  // a RoCE port's zero LIDs and its Ethernet link layer.
  const auto cas = describe::parse_ibstat(text_of(data("connectx6-roce-100g.ibstat.txt")),
                                          "connectx6-roce-100g.ibstat.txt");
  REQUIRE(cas.size() == 1);
  CHECK(cas[0].name == "roceP1p1s0f1");
  CHECK(cas[0].type == "MT4123");
  REQUIRE(cas[0].ports.size() == 1);
  CHECK(cas[0].ports[0].state == "Active");
  CHECK(cas[0].ports[0].rate_gbit == 100.0);
  CHECK(cas[0].ports[0].link_layer == "Ethernet");

  describe::NodeDescription node; // no NIC in an XML: ibstat's CAs are the NICs
  describe::merge_ibstat(node, cas, "ibstat.txt");
  REQUIRE(node.nics.size() == 1);
  CHECK_FALSE(node.nics[0].infiniband);
  const core::Scenario s = load(describe::to_scenario_yaml(node, {}), "import_ibstat_roce");
  CHECK(s.topology.system.node.nic_kind == "roce");
  CHECK(s.topology.system.node.nic_bandwidth.gbps() == Approx(12.5)); // 100 Gb/s
}

TEST_CASE("this machine: its own lstopo XML imports as hwloc discovers it", "[describe]") {
  // lstopo-no-graphics is Debian's hwloc-nox, which scripts/bootstrap.sh installs.
  const std::string xml = std::string(COLLSIM_SOURCE_DIR) + "/build/this-machine.lstopo.xml";
  REQUIRE(std::system(("lstopo-no-graphics --of xml > " + xml).c_str()) == 0);
  const auto from_xml = describe::read_lstopo_xml(xml);
  std::remove(xml.c_str());
  const auto live = describe::describe_this_machine();
  CHECK(from_xml.sockets == live.sockets);
  CHECK(from_xml.numa_per_socket == live.numa_per_socket);
  CHECK(from_xml.cores_per_socket == live.cores_per_socket);
  CHECK(from_xml.gpus.size() == live.gpus.size());
  CHECK(from_xml.cores_per_socket >= 1);
  const core::Scenario s = load(describe::to_scenario_yaml(from_xml, {}), "import_this_machine");
  CHECK(s.topology.system.node.cpu.sockets == live.sockets);
}
