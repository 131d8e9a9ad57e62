#include "collsim/core/errors.hpp"
#include "collsim/topologies/build.hpp"

#include <catch2/catch.hpp>

using namespace collsim;
using core::Bandwidth;
using core::Seconds;

TEST_CASE("uniform joins every pair by its own link of latency alpha and bandwidth 1/beta",
          "[topologies][uniform]") {
  core::TopologySpec spec;
  spec.kind = "uniform";
  spec.uniform.latency = Seconds{2e-6};
  spec.uniform.bandwidth = Bandwidth{10e9};
  const auto t = topologies::build(spec, 1u << 20);
  CHECK(t.rank_count() == (1u << 20));
  const auto c = t.route_cost(5, 999999);
  CHECK(c.latency == Seconds{2e-6});
  CHECK(c.bottleneck == Bandwidth{10e9});
  CHECK(c.hops == 1);
}

TEST_CASE("cluster routes stay inside a node and cross two NICs between nodes",
          "[topologies][cluster]") {
  core::TopologySpec spec;
  spec.kind = "cluster";
  spec.cluster.devices_per_node = 4;
  spec.cluster.nics_per_node = 2;
  spec.cluster.intra_bandwidth = Bandwidth{100e9};
  spec.cluster.intra_latency = Seconds{1e-6};
  spec.cluster.nic_bandwidth = Bandwidth{25e9};
  spec.cluster.nic_latency = Seconds{2e-6};
  spec.cluster.switch_latency = Seconds{1e-6};
  const auto t = topologies::build(spec, 8);
  CHECK(t.node_of(3) == 0);
  CHECK(t.node_of(4) == 1);
  const auto intra = t.route_cost(0, 3);
  CHECK(intra.hops == 2);
  CHECK(intra.latency.value == Approx(1e-6));
  CHECK(intra.bottleneck == Bandwidth{100e9});
  const auto inter = t.route_cost(3, 4);
  // dev -> switch -> nic1 -> network -> nic0 -> switch -> dev
  CHECK(inter.hops == 6);
  CHECK(inter.latency.value == Approx(1e-6 + 2 * 2e-6 + 1e-6));
  CHECK(inter.bottleneck == Bandwidth{25e9});
  // Device 3 leaves through NIC 1 (affinity floor(3*2/4)); device 4 (node 1, dev 0) through NIC 0.
  const auto path = t.route(3, 4);
  CHECK(t.devices()[t.links()[path[1]].to].name == "node0/nic1");
  CHECK(t.devices()[t.links()[path[4]].from].name == "node1/nic0");
}

TEST_CASE("a cluster too small for the ranks is refused with the numbers",
          "[topologies][cluster]") {
  core::TopologySpec spec;
  spec.kind = "cluster";
  spec.cluster.nodes = 2;
  spec.cluster.devices_per_node = 4;
  try {
    (void)topologies::build(spec, 9);
    FAIL("expected an error");
  } catch (const core::UsageError& e) {
    CHECK(std::string(e.what()) ==
          "the cluster has 8 devices (2 nodes x 4) but 9 ranks were requested");
  }
}

TEST_CASE("an unknown topology kind lists the builders", "[topologies]") {
  core::TopologySpec spec;
  spec.kind = "torus";
  CHECK_THROWS_WITH(topologies::build(spec, 4),
                    "unknown topology kind 'torus'; valid values are: uniform, cluster, system");
}

TEST_CASE("a copied topology owns its graph, a moved one takes it", "[topologies]") {
  // The Boost.Graph adjacency list lives behind a pointer (core/topology.cpp), so copies must
  // copy it: links added to a copy are not the original's.
  core::Topology a;
  const auto x = a.add_device(core::Device{"x"});
  const auto y = a.add_device(core::Device{"y"});
  a.add_duplex(x, y, core::Bandwidth{1e9}, core::Seconds{1e-6}, core::LinkKind::generic);
  core::Topology b = a;
  const auto z = b.add_device(core::Device{"z"});
  b.add_duplex(y, z, core::Bandwidth{1e9}, core::Seconds{1e-6}, core::LinkKind::generic);
  CHECK(a.out_links(y).size() == 1);
  CHECK(b.out_links(y).size() == 2);
  CHECK(b.link_between(y, z).has_value());
  CHECK_FALSE(a.link_between(y, x) == std::nullopt);
  b = a; // copy assignment replaces the copy's graph
  CHECK(b.out_links(y).size() == 1);

  core::Topology c = std::move(b);
  CHECK(c.link(x, y) == a.link(x, y));
  core::Topology d;
  d = std::move(c);
  CHECK(d.out_links(x) == a.out_links(x));
  CHECK(d == a);
}
