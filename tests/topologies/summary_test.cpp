// Topology summaries: counts, injection and bisection bandwidth, diameter, route printing, against
// numbers worked out by hand from the builders' documented wiring.

#include "collsim/core/errors.hpp"
#include "collsim/topologies/build.hpp"
#include "collsim/topologies/summary.hpp"

#include <catch2/catch.hpp>
#include <string>
#include <utility>
#include <vector>

namespace {

using namespace collsim;
using core::Bandwidth;
using core::DeviceKind;
using core::LinkKind;
using core::Seconds;

/// N nodes x G devices, a switch per node at 100 GB/s and 1 us device to device, K NICs of
/// 25 GB/s and 1 us per NIC link, 0.5 us in the network switch.
core::ClusterSpec cluster(std::uint32_t nodes, std::uint32_t devices, std::uint32_t nics) {
  core::ClusterSpec c;
  c.nodes = nodes;
  c.devices_per_node = devices;
  c.intra_bandwidth = Bandwidth{100e9};
  c.intra_latency = Seconds{1e-6};
  c.nics_per_node = nics;
  c.nic_bandwidth = Bandwidth{25e9};
  c.nic_latency = Seconds{1e-6};
  c.switch_latency = Seconds{0.5e-6};
  return c;
}

core::Topology build(const core::ClusterSpec& c, std::uint32_t ranks) {
  return topologies::build_cluster(c, core::EndpointSpec{}, ranks);
}

/// a <-> sw <-> b on one node, 31.5 GB/s PCIe links of 0.5 us, 0.2 us forwarding in the switch.
core::Topology pcie_pair() {
  core::Topology t;
  core::Device a;
  a.name = "node0/gpu0";
  a.kind = DeviceKind::gpu;
  core::Device sw;
  sw.name = "node0/pcie0";
  sw.kind = DeviceKind::pcie_switch;
  sw.latency = Seconds{0.2e-6};
  core::Device b;
  b.name = "node0/gpu1";
  b.kind = DeviceKind::gpu;
  const auto da = t.add_device(a);
  const auto ds = t.add_device(sw);
  const auto db = t.add_device(b);
  t.add_duplex(da, ds, Bandwidth{31.5e9}, Seconds{0.5e-6}, LinkKind::pcie);
  t.add_duplex(ds, db, Bandwidth{31.5e9}, Seconds{0.5e-6}, LinkKind::pcie);
  t.map_ranks({da, db});
  return t;
}

} // namespace

TEST_CASE("a 2-node x 4-device cluster summary counts devices, links and bandwidths",
          "[topologies][summary]") {
  const auto s = topologies::summarize(build(cluster(2, 4, 2), 8));
  CHECK(s.ranks == 8);
  CHECK(s.nodes == 2);
  CHECK(s.total_nodes == 2);
  CHECK_FALSE(s.full_mesh);
  const std::map<DeviceKind, std::uint64_t> devices{{DeviceKind::gpu, 8},
                                                    {DeviceKind::pcie_switch, 2},
                                                    {DeviceKind::nic, 4},
                                                    {DeviceKind::network_switch, 1}};
  CHECK(s.devices == devices);
  // Per node: 4 device <-> switch (intra), 2 switch <-> NIC (pcie), 2 NIC <-> network (ib).
  REQUIRE(s.links.size() == 3);
  CHECK(s.links.at(LinkKind::intra) == topologies::LinkKindSummary{16, 8, Bandwidth{1600e9}});
  CHECK(s.links.at(LinkKind::pcie) == topologies::LinkKindSummary{8, 4, Bandwidth{800e9}});
  CHECK(s.links.at(LinkKind::ib) == topologies::LinkKindSummary{8, 4, Bandwidth{200e9}});
  // Two 25 GB/s NICs per node.
  const std::vector<topologies::NodeInjection> injection{{0, Bandwidth{50e9}},
                                                         {1, Bandwidth{50e9}}};
  CHECK(s.injection == injection);
  CHECK(s.injection_min == Bandwidth{50e9});
  CHECK(s.injection_max == Bandwidth{50e9});
  CHECK(s.routing == "one switch");
}

TEST_CASE("the bisection of a cluster is the narrowest cut between the node halves",
          "[topologies][summary]") {
  SECTION("the NIC links of one node") {
    const auto s = topologies::summarize(build(cluster(2, 4, 2), 8));
    REQUIRE(s.bisection.has_value());
    CHECK(s.bisection->bytes_per_second == 50e9);
  }
  SECTION("the device's own link when it is narrower than the NICs") {
    auto c = cluster(2, 1, 2);
    c.intra_bandwidth = Bandwidth{10e9};
    const auto s = topologies::summarize(build(c, 2));
    REQUIRE(s.bisection.has_value());
    CHECK(s.bisection->bytes_per_second == 10e9);
  }
  SECTION("an odd node count puts floor(n/2) nodes in the first half") {
    // Ranks 0-1 on node 0, 2-3 on node 1, 4 on node 2; node 3 hosts none.
    const auto s = topologies::summarize(build(cluster(4, 2, 1), 5));
    CHECK(s.nodes == 3);
    CHECK(s.total_nodes == 4);
    CHECK(s.injection.size() == 3);
    REQUIRE(s.bisection.has_value());
    CHECK(s.bisection->bytes_per_second == 25e9); // node 0's one NIC against nodes 1 and 2
  }
  SECTION("ranks on one node have no bisection") {
    const auto s = topologies::summarize(build(cluster(2, 4, 2), 4));
    CHECK(s.nodes == 1);
    CHECK_FALSE(s.bisection.has_value());
  }
  SECTION("a thousand nodes cut in two: half the NICs") {
    const auto s = topologies::summarize(build(cluster(2100, 1, 1), 2100));
    REQUIRE(s.bisection.has_value());
    CHECK(s.bisection->bytes_per_second == 1050 * 25e9);
  }
}

TEST_CASE("the diameter of a cluster is the inter-node route: 6 links, intra + 2 nic + switch",
          "[topologies][summary]") {
  SECTION("every pair of ranks") {
    const auto s = topologies::summarize(build(cluster(2, 4, 2), 8));
    CHECK(s.diameter.links == 6);
    CHECK(s.diameter.latency.value == Approx(3.5e-6).epsilon(1e-12));
    CHECK(s.diameter.pairs == 28);
    CHECK_FALSE(s.diameter.sampled);
    CHECK(s.diameter.method == "every pair of ranks");
  }
  SECTION("inside one node: 2 links, the intra latency") {
    const auto s = topologies::summarize(build(cluster(2, 4, 2), 4));
    CHECK(s.diameter.links == 2);
    CHECK(s.diameter.latency.value == Approx(1e-6).epsilon(1e-12));
  }
  SECTION("one rank per node beyond 256 ranks") {
    const auto s = topologies::summarize(build(cluster(40, 8, 2), 320));
    CHECK(s.diameter.links == 6);
    CHECK(s.diameter.latency.value == Approx(3.5e-6).epsilon(1e-12));
    CHECK(s.diameter.pairs == 28 + 40 * 39 / 2);
    CHECK_FALSE(s.diameter.sampled);
    CHECK(s.diameter.method ==
          "every pair of ranks on node 0, and every pair of nodes (the lowest rank of each)");
  }
  SECTION("a sample of node pairs beyond 512 nodes") {
    const auto s = topologies::summarize(build(cluster(2100, 1, 1), 2100));
    CHECK(s.diameter.links == 6);
    CHECK(s.diameter.latency.value == Approx(3.5e-6).epsilon(1e-12));
    CHECK(s.diameter.pairs == 4096);
    CHECK(s.diameter.sampled);
  }
  SECTION("the pair counts are options") {
    topologies::SummaryOptions o;
    o.all_pairs_ranks = 16;
    o.all_pairs_nodes = 8;
    o.sampled_pairs = 100;
    o.node_ranks = 4;
    const auto s = topologies::summarize(build(cluster(40, 8, 2), 320), o);
    CHECK(s.diameter.links == 6);
    CHECK(s.diameter.pairs == 4 * 3 / 2 + 100);
    CHECK(s.diameter.sampled);
    CHECK(s.diameter.method == "every pair of the first 4 ranks of node 0, and 100 node pairs "
                               "drawn at random with a fixed seed (the lowest rank of each node)");
  }
  SECTION("switch forwarding latency counts") {
    const auto s = topologies::summarize(pcie_pair());
    CHECK(s.diameter.links == 2);
    CHECK(s.diameter.latency.value == Approx(1.2e-6).epsilon(1e-12));
  }
}

TEST_CASE("a full mesh reports its implicit links, (p/2)(p-p/2) links across and 1-link diameter",
          "[topologies][summary]") {
  core::UniformSpec u;
  u.bandwidth = Bandwidth{10e9};
  u.latency = Seconds{2e-6};
  for (const std::uint32_t p : {8U, 5U}) {
    INFO(p);
    const auto s = topologies::summarize(topologies::build_uniform(u, {}, p));
    CHECK(s.full_mesh);
    CHECK(s.ranks == p);
    CHECK(s.nodes == p);
    CHECK(s.devices.at(DeviceKind::endpoint) == p);
    CHECK(s.links.at(LinkKind::generic).directed == p * (p - 1));
    CHECK(s.mesh_bandwidth == Bandwidth{10e9});
    CHECK(s.mesh_latency == Seconds{2e-6});
    CHECK(s.injection_min == Bandwidth{(p - 1) * 10e9});
    REQUIRE(s.bisection.has_value());
    CHECK(s.bisection->bytes_per_second == (p / 2) * (p - p / 2) * 10e9);
    CHECK(s.diameter.links == 1);
    CHECK(s.diameter.latency == Seconds{2e-6});
  }
  const auto one = topologies::summarize(topologies::build_uniform(u, {}, 1));
  CHECK_FALSE(one.bisection.has_value());
  CHECK(one.diameter.links == 0);
}

TEST_CASE("describe_route prints every hop and a total line", "[topologies][summary]") {
  SECTION("between two cluster nodes") {
    const auto t = build(cluster(2, 4, 2), 8);
    const std::vector<std::string> expected{"node0/dev0 -> node0/switch (intra, 100 GB/s, 0.5 us)",
                                            "node0/switch -> node0/nic0 (pcie, 100 GB/s, 0 us)",
                                            "node0/nic0 -> network (ib, 25 GB/s, 1.25 us)",
                                            "network -> node1/nic0 (ib, 25 GB/s, 1.25 us)",
                                            "node1/nic0 -> node1/switch (pcie, 100 GB/s, 0 us)",
                                            "node1/switch -> node1/dev0 (intra, 100 GB/s, 0.5 us)",
                                            "total: 3.5 us, bottleneck 25 GB/s, 6 hops"};
    CHECK(topologies::describe_route(t, 0, 4) == expected);
    CHECK(topologies::describe_route(t, 3, 3) ==
          std::vector<std::string>{"rank 3 to itself: no links"});
  }
  SECTION("through a switch with forwarding latency") {
    const std::vector<std::string> expected{
        "node0/gpu0 -> node0/pcie0 (pcie, 31.5 GB/s, 0.5 us) + 0.2 us in node0/pcie0",
        "node0/pcie0 -> node0/gpu1 (pcie, 31.5 GB/s, 0.5 us)",
        "total: 1.2 us, bottleneck 31.5 GB/s, 2 hops"};
    CHECK(topologies::describe_route(pcie_pair(), 0, 1) == expected);
  }
  SECTION("on a full mesh") {
    core::UniformSpec u;
    const auto t = topologies::build_uniform(u, {}, 4);
    const std::vector<std::string> expected{"rank1 -> rank2 (implicit link, 10 GB/s, 2 us)",
                                            "total: 2 us, bottleneck 10 GB/s, 1 hop"};
    CHECK(topologies::describe_route(t, 1, 2) == expected);
  }
  SECTION("a rank the topology does not have") {
    const auto t = build(cluster(2, 4, 2), 8);
    CHECK_THROWS_AS(topologies::describe_route(t, 0, 8), core::UsageError);
    CHECK_THROWS_WITH(topologies::describe_route(t, 9, 0),
                      "rank 9 does not exist: the topology has 8 ranks (0 to 7)");
  }
}

TEST_CASE("duplex partners pair equal opposite links in id order", "[topologies][summary]") {
  core::Topology t;
  const auto add = [&t](const char* name) {
    core::Device d;
    d.name = name;
    return t.add_device(std::move(d));
  };
  const auto a = add("a");
  const auto b = add("b");
  t.add_link({a, b, Bandwidth{10e9}, Seconds{1e-6}, LinkKind::nvlink}); // 0
  t.add_link({a, b, Bandwidth{10e9}, Seconds{1e-6}, LinkKind::nvlink}); // 1
  t.add_link({b, a, Bandwidth{10e9}, Seconds{1e-6}, LinkKind::nvlink}); // 2
  t.add_link({b, a, Bandwidth{20e9}, Seconds{1e-6}, LinkKind::nvlink}); // 3: wider, no partner
  t.add_link({b, a, Bandwidth{10e9}, Seconds{1e-6}, LinkKind::nvlink}); // 4
  t.map_ranks({a, b});
  const auto k = topologies::kNoLink;
  CHECK(topologies::duplex_partners(t) == std::vector<core::LinkId>{2, 4, 0, k, 1});
  const auto s = topologies::summarize(t);
  CHECK(s.links.at(LinkKind::nvlink) == topologies::LinkKindSummary{5, 2, Bandwidth{60e9}});
  CHECK(s.injection == std::vector<topologies::NodeInjection>{{0, Bandwidth{0}}});
}

TEST_CASE("the bisection is the smaller of the two directions' cuts", "[topologies][summary]") {
  // Two one-NIC nodes on a switch; node 0 sends at 10 GB/s, node 1 at 3 GB/s, both receive at 40.
  core::Topology t;
  const auto add = [&t](const char* name, DeviceKind kind, std::uint32_t node) {
    core::Device d;
    d.name = name;
    d.kind = kind;
    d.node = node;
    return t.add_device(std::move(d));
  };
  const auto a = add("node0/nic0", DeviceKind::nic, 0);
  const auto b = add("node1/nic0", DeviceKind::nic, 1);
  const auto sw = add("net/switch", DeviceKind::network_switch, core::kNetworkNode);
  t.add_link({a, sw, Bandwidth{10e9}, Seconds{1e-6}, LinkKind::ib});
  t.add_link({sw, b, Bandwidth{40e9}, Seconds{1e-6}, LinkKind::ib});
  t.add_link({b, sw, Bandwidth{3e9}, Seconds{1e-6}, LinkKind::ib});
  t.add_link({sw, a, Bandwidth{40e9}, Seconds{1e-6}, LinkKind::ib});
  t.map_ranks({a, b});
  const auto s = topologies::summarize(t);
  REQUIRE(s.bisection.has_value());
  CHECK(s.bisection->bytes_per_second == 3e9);
  CHECK(s.injection ==
        std::vector<topologies::NodeInjection>{{0, Bandwidth{10e9}}, {1, Bandwidth{3e9}}});
  CHECK(s.injection_min == Bandwidth{3e9});
  CHECK(s.injection_max == Bandwidth{10e9});
  CHECK(s.links.at(LinkKind::ib).duplex_pairs == 0);
  CHECK(s.diameter.links == 2);
}

TEST_CASE("the bisection flow does not pass through nodes without ranks", "[topologies][summary]") {
  // node0/nic -> s1 -> node1/nic at 10 GB/s directly; node 2 (no ranks) could relay another
  // 100 GB/s from s1 through its two NICs to s2, but hosts do not forward.
  core::Topology t;
  const auto add = [&t](const char* name, DeviceKind kind, std::uint32_t node) {
    core::Device d;
    d.name = name;
    d.kind = kind;
    d.node = node;
    return t.add_device(std::move(d));
  };
  const auto a = add("node0/nic0", DeviceKind::nic, 0);
  const auto b = add("node1/nic0", DeviceKind::nic, 1);
  const auto c1 = add("node2/nic0", DeviceKind::nic, 2);
  const auto c2 = add("node2/nic1", DeviceKind::nic, 2);
  const auto s1 = add("net/s1", DeviceKind::network_switch, core::kNetworkNode);
  const auto s2 = add("net/s2", DeviceKind::network_switch, core::kNetworkNode);
  const Seconds lat{1e-6};
  t.add_duplex(a, s1, Bandwidth{100e9}, lat, LinkKind::ib);
  t.add_duplex(s1, b, Bandwidth{10e9}, lat, LinkKind::ib);
  t.add_duplex(s1, c1, Bandwidth{100e9}, lat, LinkKind::ib);
  t.add_duplex(c1, c2, Bandwidth{100e9}, lat, LinkKind::pcie);
  t.add_duplex(c2, s2, Bandwidth{100e9}, lat, LinkKind::ib);
  t.add_duplex(s2, b, Bandwidth{100e9}, lat, LinkKind::ib);
  t.map_ranks({a, b});
  const auto s = topologies::summarize(t);
  CHECK(s.nodes == 2);
  CHECK(s.total_nodes == 3);
  REQUIRE(s.bisection.has_value());
  CHECK(s.bisection->bytes_per_second == 10e9);
}
