// NIC kinds (topology.node.nic_kind): the table's numbers are physical, a kind fills in the NIC
// values a scenario does not write, and the docs list every kind the loader accepts.

#include "collsim/io/scenario_loader.hpp"
#include "collsim/topologies/nic_kinds.hpp"

#include <catch2/catch.hpp>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

namespace {

using collsim::io::parse_scenario;

std::string node_scenario(const std::string& node_lines) {
  return "name: nic\ntopology:\n  kind: system\n  node:\n    gpus: 8\n" + node_lines +
         "studies:\n  - collective: allreduce\n    algorithms: [ring]\n    ranks: [8]\n"
         "    sizes: [1 MiB]\n";
}

const collsim::core::NodeSpec& node_of(const collsim::core::Scenario& s) {
  return s.topology.system.node;
}

} // namespace

TEST_CASE(
    "every NIC kind has a positive line rate and latency and an efficiency in between 0 and 1",
    "[io][scenario][nic_kind]") {
  std::set<std::string> names;
  for (const auto& k : collsim::topologies::nic_kinds()) {
    INFO(k.name);
    CHECK(names.insert(std::string(k.name)).second);
    CHECK(k.line_rate.bytes_per_second > 0.0);
    CHECK(k.latency.value > 0.0);
    CHECK(k.efficiency > 0.0);
    CHECK(k.efficiency <= 1.0);
    CHECK_FALSE(k.summary.empty());
    CHECK_FALSE(k.sources.empty());
  }
  CHECK(names ==
        std::set<std::string>{"ib_edr", "ib_hdr", "ib_ndr", "roce", "efa", "tcpx", "tcpxo"});
  // RDMA over InfiniBand reaches more of its line rate than EFA's SRD or TCPX's TCP data path.
  const auto* ndr = collsim::topologies::find_nic_kind("ib_ndr");
  const auto* efa = collsim::topologies::find_nic_kind("efa");
  const auto* tcpx = collsim::topologies::find_nic_kind("tcpx");
  REQUIRE(ndr != nullptr);
  REQUIRE(efa != nullptr);
  REQUIRE(tcpx != nullptr);
  CHECK(efa->efficiency < ndr->efficiency);
  CHECK(tcpx->efficiency < ndr->efficiency);
  CHECK(collsim::topologies::find_nic_kind("infiniband") == nullptr);
}

TEST_CASE("a NIC kind gives the line rate, latency and efficiency the node does not write",
          "[io][scenario][nic_kind]") {
  const auto s = parse_scenario(node_scenario("    nics: 4\n    nic_kind: efa\n"), "efa.yaml");
  const auto& n = node_of(s);
  CHECK(n.nic_kind == "efa");
  CHECK(n.nics == 4);
  CHECK(n.nic_bandwidth.bytes_per_second == Approx(100e9 / 8)); // 100 Gb/s
  CHECK(n.nic_latency.value == Approx(5e-6));
  CHECK(n.nic_efficiency == Approx(0.89));
}

TEST_CASE("NIC values written beside a kind win over the kind's, in any order",
          "[io][scenario][nic_kind]") {
  const auto s = parse_scenario(
      node_scenario("    nic_bandwidth: 400 Gb/s\n    nic_kind: efa\n    nic_latency: 2 us\n"
                    "    nic_efficiency: 0.5\n"),
      "efa.yaml");
  const auto& n = node_of(s);
  CHECK(n.nic_bandwidth.bytes_per_second == Approx(50e9));
  CHECK(n.nic_latency.value == Approx(2e-6));
  CHECK(n.nic_efficiency == Approx(0.5));
}

TEST_CASE("a node without a NIC kind has a generic NIC at full efficiency",
          "[io][scenario][nic_kind]") {
  const auto s = parse_scenario(node_scenario("    nic_bandwidth: 200 Gb/s\n"), "generic.yaml");
  CHECK(node_of(s).nic_kind.empty());
  CHECK(node_of(s).nic_efficiency == 1.0);
  CHECK(node_of(s).nic_bandwidth.bytes_per_second == Approx(25e9));
}

TEST_CASE("a derived scenario's NIC kind replaces the base's NIC values",
          "[io][scenario][nic_kind][base]") {
  // dgx-a100 writes nic_bandwidth 200 Gb/s and nic_latency 0.3 us; a new kind is a new NIC.
  const auto s = parse_scenario(R"(base: dgx-a100
topology:
  node:
    nic_kind: efa
)",
                                "derived.yaml");
  const auto& n = node_of(s);
  CHECK(n.nic_kind == "efa");
  CHECK(n.nic_bandwidth.bytes_per_second == Approx(12.5e9));
  CHECK(n.nic_latency.value == Approx(5e-6));
  CHECK(n.nic_efficiency == Approx(0.89));
  CHECK(n.nics == 8); // the rest of the node is the preset's
}

TEST_CASE("docs/topology.md lists every NIC kind with its numbers", "[io][scenario][nic_kind]") {
  std::ifstream in(std::string(COLLSIM_SOURCE_DIR) + "/docs/topology.md");
  REQUIRE(in.good());
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string doc = ss.str();
  for (const auto& k : collsim::topologies::nic_kinds()) {
    INFO(k.name);
    CHECK(doc.find("| `" + std::string(k.name) + "` |") != std::string::npos);
  }
}

TEST_CASE("nic_ports: the ports of a NIC card, 1 unless written, at least 1",
          "[io][scenario][nic_kind]") {
  CHECK(node_of(parse_scenario(node_scenario("    nics: 8\n"), "one.yaml")).nic_ports == 1);
  CHECK(node_of(parse_scenario(node_scenario("    nics: 8\n    nic_ports: 2\n"), "two.yaml"))
            .nic_ports == 2);
  try {
    (void)parse_scenario(node_scenario("    nics: 8\n    nic_ports: 0\n"), "zero.yaml");
    FAIL("nic_ports: 0 was accepted");
  } catch (const std::exception& e) {
    CHECK(std::string(e.what()) ==
          "zero.yaml:7:16: error: topology.node.nic_ports: must be at least 1, got 0");
  }
}
