// The `system` builder on the shipped presets: devices as the hardware is wired, routes as the real
// machines take them, ranks where the placement puts them, and messages priced by their route.

#include "collsim/core/errors.hpp"
#include "collsim/engines/loggp.hpp"
#include "collsim/io/rankfile.hpp"
#include "collsim/io/scenario_loader.hpp"
#include "collsim/topologies/build.hpp"

#include <catch2/catch.hpp>
#include <map>
#include <string>
#include <vector>

using namespace collsim;

namespace {

core::TopologySpec preset(const std::string& name) {
  return io::load_scenario(name).topology;
}

/// The devices a route passes through, from the first link's source to the last link's target.
std::vector<std::string> hops(const core::Topology& t, const std::vector<core::LinkId>& route) {
  std::vector<std::string> out;
  for (const core::LinkId id : route) {
    if (out.empty()) {
      out.push_back(t.devices()[t.links()[id].from].name);
    }
    out.push_back(t.devices()[t.links()[id].to].name);
  }
  return out;
}

std::map<core::LinkKind, int> kinds(const core::Topology& t,
                                    const std::vector<core::LinkId>& route) {
  std::map<core::LinkKind, int> out;
  for (const core::LinkId id : route) {
    ++out[t.links()[id].kind];
  }
  return out;
}

std::string device_of(const core::Topology& t, core::Rank r) {
  return t.devices()[t.device_of(r)].name;
}

} // namespace

TEST_CASE("dgx1-v100: GPUs without a direct NVLink meet through an intermediate GPU",
          "[topologies][system][dgx1]") {
  const auto t = topologies::build(preset("dgx1-v100"), 8);
  // 0-3 and 0-4 are double links (50 GB/s), 0-1 and 0-2 single ones (25 GB/s) [S4].
  const auto direct = t.route(0, 3);
  REQUIRE(direct.size() == 1);
  CHECK(t.links()[direct[0]].kind == core::LinkKind::nvlink);
  CHECK(t.route_cost(0, 3).bottleneck.gbps() == Approx(50));
  CHECK(t.route_cost(0, 1).bottleneck.gbps() == Approx(25));
  // 0 and 6 have no NVLink: two NVLinks through GPU 2 (0-2, 2-6) or GPU 4 (0-4, 4-6), never PCIe.
  const auto via = t.route(0, 6);
  REQUIRE(via.size() == 2);
  CHECK(kinds(t, via) == std::map<core::LinkKind, int>{{core::LinkKind::nvlink, 2}});
  const std::string middle = hops(t, via)[1];
  CHECK((middle == "node0/gpu2" || middle == "node0/gpu4"));
  // Equally short, the widest wins: 0-4 is a double link, 0-5 goes 0-1 (1) then 1-5 (2) or 0-4
  // (2) then 4-5 (1): both 25 GB/s; 0-7 through 3 (2, 1) or 4 (2, 2): through 4 at 50 GB/s.
  CHECK(hops(t, t.route(0, 7)) ==
        std::vector<std::string>{"node0/gpu0", "node0/gpu4", "node0/gpu7"});
  CHECK(t.route_cost(0, 7).bottleneck.gbps() == Approx(50));
  // A message is priced by that route: 1 us per NVLink hop (the preset's), 25 GB/s.
  CHECK(t.route_cost(0, 6).latency.value == Approx(2e-6));
}

TEST_CASE("without NVLink, GPUs talk over PCIe: through their switch, or the sockets' link",
          "[topologies][system][pcie]") {
  auto spec = preset("dgx1-v100");
  spec.system.node.nvlink = core::NvlinkSpec{};
  const auto t = topologies::build(spec, 8);
  // GPUs 0 and 1 share PCIe switch 0: peer-to-peer through the switch.
  CHECK(hops(t, t.route(0, 1)) ==
        std::vector<std::string>{"node0/gpu0", "node0/pcie0", "node0/gpu1"});
  // GPU 0 and GPU 6 hang from different sockets: up to the root complex, across QPI, down again.
  CHECK(kinds(t, t.route(0, 6)) ==
        std::map<core::LinkKind, int>{{core::LinkKind::pcie, 4}, {core::LinkKind::upi, 1}});
  CHECK(t.route_cost(0, 6).bottleneck.gbps() == Approx(15.75));
  // The two switches passed add their forwarding latency: 4 PCIe links x 0.5 us + UPI 0.1 us +
  // 2 switches x 105 ns.
  CHECK(t.route_cost(0, 6).latency.value == Approx(4 * 0.5e-6 + 0.1e-6 + 2 * 105e-9));
}

TEST_CASE("PCIe peer-to-peer off: GPU data is staged through host memory",
          "[topologies][system][pcie]") {
  auto spec = preset("pcie-gpu-node");
  const auto on = topologies::build(spec, 4);
  CHECK(hops(on, on.route(0, 1)) ==
        std::vector<std::string>{"node0/gpu0", "node0/pcie0", "node0/gpu1"});
  spec.system.node.pcie.p2p = false;
  const auto off = topologies::build(spec, 4);
  CHECK(hops(off, off.route(0, 1)) == std::vector<std::string>{"node0/gpu0", "node0/pcie0",
                                                               "node0/cpu0", "node0/pcie0",
                                                               "node0/gpu1"});
}

TEST_CASE("juwels-booster: each GPU leaves its node through a NIC of its own PCIe switch",
          "[topologies][system][juwels]") {
  const auto t = topologies::build(preset("juwels-booster"), 8);
  std::map<std::string, int> count;
  for (const auto& d : t.devices()) {
    if (d.node == 0) {
      ++count[std::string(core::to_string(d.kind))];
    }
  }
  CHECK(count == std::map<std::string, int>{
                     {"gpu", 4}, {"nic", 4}, {"pcie_switch", 2}, {"cpu", 2}, {"numa", 8}});
  // GPUs 0, 1 and NICs 0, 1 are under pcie0; GPUs 2, 3 and NICs 2, 3 under pcie1 [S36].
  for (core::Rank r = 0; r < 4; ++r) {
    const auto& gpu = t.devices()[t.device_of(r)];
    CHECK(t.devices()[gpu.egress].name == "node0/nic" + std::to_string(r));
  }
  // Inside the node: one NVLink hop of 4 links (100 GB/s); across nodes: GPU, its switch, its
  // NIC, the DragonFly+ leaf, the peer's NIC, switch, GPU, at HDR's 25 GB/s.
  CHECK(t.route(0, 1).size() == 1);
  CHECK(t.route_cost(0, 1).bottleneck.gbps() == Approx(100));
  const auto across = hops(t, t.route(2, 6));
  CHECK(across == std::vector<std::string>{"node0/gpu2", "node0/pcie1", "node0/nic2",
                                           "net/g0/leaf0", "node1/nic2", "node1/pcie1",
                                           "node1/gpu2"});
  CHECK(t.route_cost(2, 6).bottleneck.gbps() == Approx(25));
}

TEST_CASE("no GPUDirect RDMA: a GPU's traffic between nodes goes through host memory",
          "[topologies][system][pcie]") {
  auto spec = preset("juwels-booster");
  spec.system.node.pcie.gdr = false;
  const auto t = topologies::build(spec, 8);
  CHECK(t.staged_to_network(t.device_of(2)));
  // Up from the GPU to its socket and down to the NIC of the same switch, and on the other node
  // from the NIC up to the socket and down to the GPU: each switch's uplink twice.
  CHECK(hops(t, t.route(2, 6)) ==
        std::vector<std::string>{"node0/gpu2", "node0/pcie1", "node0/cpu1", "node0/pcie1",
                                 "node0/nic2", "net/g0/leaf0", "node1/nic2", "node1/pcie1",
                                 "node1/cpu1", "node1/pcie1", "node1/gpu2"});
  // Inside a node nothing changes (NVLink), nor does the route between nodes with GPUDirect RDMA
  // (the juwels-booster test above).
  CHECK(t.route(0, 1).size() == 1);
  CHECK_FALSE(topologies::build(preset("juwels-booster"), 8).staged_to_network(0));
}

TEST_CASE("CPU nodes: cores share their NUMA domain's memory and cross UPI between sockets",
          "[topologies][system][cpu]") {
  const auto t = topologies::build(preset("gadi"), 96);
  // Gadi: 2 sockets x 24 cores, 2 NUMA domains of 12 cores per socket [S61].
  CHECK(hops(t, t.route(0, 1)) ==
        std::vector<std::string>{"node0/core0", "node0/cpu0/numa0", "node0/core1"});
  CHECK(kinds(t, t.route(0, 12)) == std::map<core::LinkKind, int>{{core::LinkKind::memory, 4}});
  CHECK(kinds(t, t.route(0, 24)) ==
        std::map<core::LinkKind, int>{{core::LinkKind::memory, 4}, {core::LinkKind::upi, 1}});
  // A core's reduction rate is a third of its NUMA domain's share of memory bandwidth.
  CHECK(t.endpoint(0).reduce_bandwidth.gbps() == Approx(98.0 / 2 / 3));
  // Between nodes: core, NUMA domain, socket, NIC, leaf, NIC, socket, NUMA domain, core.
  CHECK(t.route(0, 48).size() == 8);
  CHECK(t.node_of(47) == 0);
  CHECK(t.node_of(48) == 1);
}

TEST_CASE("placements: block, cyclic, per NUMA domain and ranks per node",
          "[topologies][system][placement]") {
  auto spec = preset("gadi");
  auto& pl = spec.system.placement;
  SECTION("block fills a node, then the next") {
    const auto t = topologies::build(spec, 96);
    CHECK(device_of(t, 0) == "node0/core0");
    CHECK(device_of(t, 47) == "node0/core47");
    CHECK(device_of(t, 48) == "node1/core0");
  }
  SECTION("cyclic deals ranks over the nodes of the job") {
    pl.order = "cyclic";
    const auto t = topologies::build(spec, 96);
    CHECK(device_of(t, 0) == "node0/core0");
    CHECK(device_of(t, 1) == "node1/core0");
    CHECK(device_of(t, 2) == "node0/core1");
    CHECK(device_of(t, 95) == "node1/core47");
  }
  SECTION("numa deals a node's ranks over its NUMA domains") {
    pl.order = "numa";
    const auto t = topologies::build(spec, 8);
    // 4 domains of 12 cores: ranks 0-3 on the first core of each, 4-7 on the second.
    CHECK(device_of(t, 0) == "node0/core0");
    CHECK(device_of(t, 1) == "node0/core12");
    CHECK(device_of(t, 2) == "node0/core24");
    CHECK(device_of(t, 3) == "node0/core36");
    CHECK(device_of(t, 4) == "node0/core1");
  }
  SECTION("ranks per node spreads a job over more nodes") {
    pl.ranks_per_node = 4;
    const auto t = topologies::build(spec, 8);
    CHECK(device_of(t, 3) == "node0/core3");
    CHECK(device_of(t, 4) == "node1/core0");
    CHECK(t.node_of(7) == 1);
  }
  SECTION("more ranks than the system has slots is an error") {
    pl.ranks_per_node = 1;
    CHECK_THROWS_WITH(topologies::build(spec, 3201),
                      "the system has 3200 nodes x 1 ranks per node = 3200 rank slots but 3201 "
                      "ranks were requested");
  }
}

TEST_CASE("an Open MPI rankfile places every rank where it says",
          "[topologies][system][rankfile]") {
  auto spec = preset("gadi");
  auto& pl = spec.system.placement;
  pl.order = "rankfile";
  pl.rankfile = "ranks.txt";
  pl.slots = io::parse_rankfile("rank 0=node1 slot=0:3\n"
                                "rank 1=node0 slot=1:0-3   # binds to 4 cores, runs on the first\n"
                                "rank 2=+n2 slot=5\n",
                                "ranks.txt");
  const auto t = topologies::build(spec, 3);
  CHECK(device_of(t, 0) == "node1/core3");
  CHECK(device_of(t, 1) == "node0/core24");
  CHECK(device_of(t, 2) == "node2/core5");
  CHECK_THROWS_WITH(topologies::build(spec, 4),
                    "the rankfile 'ranks.txt' does not place rank 3 (a study of 4 ranks needs "
                    "ranks 0 to 3)");
}

TEST_CASE("the loggp engine prices a message by its real route", "[topologies][system][loggp]") {
  const auto t = topologies::build(preset("juwels-booster"), 8);
  core::ScheduleHeader h;
  h.collective = core::CollectiveKind::bcast;
  h.ranks = 8;
  h.bytes = core::Bytes{1 << 20};
  h.data_bytes = 1 << 20;
  h.tmp_bytes = 1 << 20;
  core::Schedule s(h);
  for (core::Rank r = 0; r < 8; ++r) {
    s.begin_rank(r);
    if (r == 2) {
      s.send(6, {core::Buffer::data, 0, 1 << 20});
    } else if (r == 6) {
      s.recv(2, {core::Buffer::data, 0, 1 << 20});
    }
  }
  s.finish();
  const auto run = engines::LogGPEngine{}.run(s, t, {});
  // Route: PCIe 0.5 us x 2 per side, NIC links 0.3 us x 2, switch 90 ns, PCIe switches 105 ns x
  // 2; the bottleneck is HDR's 25 GB/s.
  const double latency = 4 * 0.5e-6 + 2 * 0.3e-6 + 90e-9 + 2 * 105e-9;
  CHECK(t.route_cost(2, 6).latency.value == Approx(latency));
  CHECK(run.time.value == Approx(latency + double(1 << 20) / 25e9));
}

TEST_CASE("dragonfly-1024: minimal routes between nodes cross at most one global link",
          "[topologies][system][dragonfly]") {
  const auto t = topologies::build(preset("dragonfly-1024"), 1024);
  int worst = 0;
  for (core::Rank a = 0; a < 1024; a += 7) {
    for (core::Rank b = 0; b < 1024; b += 5) {
      int global = 0;
      for (const core::LinkId id : t.route(a, b)) {
        const auto& l = t.links()[id];
        const auto& from = t.devices()[l.from].name;
        const auto& to = t.devices()[l.to].name;
        // A global link joins routers of two groups: "net/gX/..." with different X.
        if (from.rfind("net/g", 0) == 0 && to.rfind("net/g", 0) == 0 &&
            from.substr(0, from.find('/', 5)) != to.substr(0, to.find('/', 5))) {
          ++global;
        }
      }
      CHECK(global <= 1);
      worst = std::max(worst, global);
    }
  }
  CHECK(worst == 1);
}
