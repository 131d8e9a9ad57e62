// The network builders of the `system` topology: fat trees (switch and link counts against their
// formulas, route lengths, D-mod-k, rails, SHARP, route costs), every message check_network gives,
// and chains between all pairs on every small network. DragonFly, DragonFly+ and torus:
// network_dragonfly_torus_test.cpp.

#include "network_test_support.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

using namespace collsim;
using namespace collsim::testing::net;
using core::DeviceId;
using core::DeviceKind;
using core::LinkId;

// ---- fat tree ----------------------------------------------------------------------------------

TEST_CASE("a 2-level fat tree has ceil(N/d) leaves, u spines and a link from every leaf to every "
          "spine",
          "[topologies][network][fat_tree]") {
  // R = 8, taper 1: d = u = 4; 20 NICs -> 5 leaves, 4 spines.
  const Net n = make_net(fat_tree(2, 8), 20);
  const Counts c = count(n.t);
  CHECK(c.switches == 5 + 4);
  CHECK(c.nic_links == 2 * 20);
  CHECK(c.switch_links == 2 * 5 * 4);
  CHECK(n.t.find_device("net/leaf4"));
  CHECK_FALSE(n.t.find_device("net/leaf5"));
  CHECK(n.t.find_device("net/spine3"));
  CHECK(n.t.router() != nullptr);
  CHECK(topologies::network_capacity(fat_tree(2, 8)) == 8 * 4);
}

TEST_CASE("a 3-level fat tree builds only the pods the NICs need, each with u aggregation "
          "switches, and u*R/2 cores",
          "[topologies][network][fat_tree]") {
  // R = 8: d = u = 4, pods of 4 leaves; 40 NICs -> 10 leaves in 3 pods (4, 4, 2), 12 aggregation
  // switches, 16 cores; every aggregation switch has R/2 = 4 links up.
  const Net n = make_net(fat_tree(3, 8), 40);
  const Counts c = count(n.t);
  CHECK(c.switches == 10 + 12 + 16);
  CHECK(c.nic_links == 2 * 40);
  CHECK(c.switch_links == 2 * (10 * 4 + 12 * 4));
  CHECK(n.t.find_device("net/pod2/agg3"));
  CHECK_FALSE(n.t.find_device("net/pod3/agg0"));
  CHECK(n.t.find_device("net/core15"));
  CHECK(topologies::network_capacity(fat_tree(3, 8)) == 8 * 4 * 4);
  // Aggregation switch j of every pod reaches cores 4j .. 4j+3.
  CHECK(n.t.link_between(n.dev("net/pod1/agg2"), n.dev("net/core8")));
  CHECK(n.t.link_between(n.dev("net/pod1/agg2"), n.dev("net/core11")));
  CHECK_FALSE(n.t.link_between(n.dev("net/pod1/agg2"), n.dev("net/core12")));
  CHECK_FALSE(n.t.link_between(n.dev("net/pod1/agg2"), n.dev("net/core7")));
}

TEST_CASE("a 1-level fat tree is one switch of radix ports", "[topologies][network][fat_tree]") {
  const Net n = make_net(fat_tree(1, 16), 10);
  const Counts c = count(n.t);
  CHECK(c.switches == 1);
  CHECK(c.nic_links == 2 * 10);
  CHECK(c.switch_links == 0);
  CHECK(topologies::network_capacity(fat_tree(1, 16)) == 16);
  CHECK(n.t.route_between(n.nic(0), n.nic(9)).size() == 2);
}

TEST_CASE("a taper moves leaf ports from up to down: fewer spines, more NICs per leaf",
          "[topologies][network][fat_tree]") {
  // R = 8: taper 1 -> 4 down, 4 up; taper 3 -> 6 down, 2 up; 33:7 on R = 40 -> 33 down, 7 up.
  const Net full = make_net(fat_tree(2, 8, 1.0), 24);
  const Net tapered = make_net(fat_tree(2, 8, 3.0), 24);
  CHECK(count(full.t).switches == 6 + 4);
  CHECK(count(tapered.t).switches == 4 + 2);
  CHECK(topologies::network_capacity(fat_tree(2, 8, 3.0)) == 8 * 6);
  CHECK(topologies::network_capacity(fat_tree(2, 40, 33.0 / 7.0)) == 40 * 33);
}

TEST_CASE("fat-tree routes stay on a leaf, cross a spine between leaves and a core between pods",
          "[topologies][network][fat_tree]") {
  SECTION("2 levels") {
    const Net n = make_net(fat_tree(2, 8), 20);
    CHECK(n.t.route_between(n.nic(0), n.nic(3)).size() == 2); // same leaf
    CHECK(n.t.route_between(n.nic(0), n.nic(4)).size() == 4);
    CHECK(n.t.route_between(n.nic(19), n.nic(0)).size() == 4);
  }
  SECTION("3 levels") {
    const Net n = make_net(fat_tree(3, 8), 40);
    CHECK(n.t.route_between(n.nic(0), n.nic(3)).size() == 2);  // same leaf
    CHECK(n.t.route_between(n.nic(0), n.nic(15)).size() == 4); // same pod, other leaf
    CHECK(n.t.route_between(n.nic(0), n.nic(16)).size() == 6); // other pod
    CHECK(n.t.route_between(n.nic(39), n.nic(1)).size() == 6);
    const auto s = stats(n.t, n.t.route_between(n.nic(0), n.nic(16)));
    REQUIRE(s.passes.size() == 5);
    CHECK(s.passes[0] == "net/leaf0");
    CHECK(s.passes[1] == "net/pod0/agg0"); // 16 mod 4
    CHECK(s.passes[2] == "net/core0");     // agg 0: cores 0..3, (16 / 4) mod 4 = 0
    CHECK(s.passes[3] == "net/pod1/agg0");
    CHECK(s.passes[4] == "net/leaf4");
  }
}

TEST_CASE("D-mod-k spreads the destinations of a leaf over all spines (cores), each destination "
          "on one",
          "[topologies][network][fat_tree]") {
  SECTION("2 levels: destination d goes through spine d mod u") {
    const Net n = make_net(fat_tree(2, 8), 32); // 8 leaves of 4, 4 spines
    std::map<std::string, int> use;
    for (std::uint32_t d = 4; d < 32; ++d) {
      for (std::uint32_t src : {0u, 1u, 2u, 3u}) {
        const auto s = stats(n.t, n.t.route_between(n.nic(src), n.nic(d)));
        REQUIRE(s.passes.size() == 3);
        CHECK(s.passes[1] == "net/spine" + std::to_string(d % 4));
        ++use[s.passes[1]];
      }
    }
    REQUIRE(use.size() == 4);
    for (const auto& [spine, routes] : use) {
      CHECK(routes == 28);
    }
  }
  SECTION("3 levels: the 112 destinations outside pod 0 spread evenly over the 16 cores") {
    const Net n = make_net(fat_tree(3, 8), 128);
    std::map<std::string, int> use;
    for (std::uint32_t d = 16; d < 128; ++d) {
      const auto s = stats(n.t, n.t.route_between(n.nic(0), n.nic(d)));
      REQUIRE(s.passes.size() == 5);
      ++use[s.passes[2]];
    }
    REQUIRE(use.size() == 16);
    for (const auto& [core, routes] : use) {
      CHECK(routes == 7);
    }
  }
}

TEST_CASE("fat-tree routes between every pair of NICs and switches are chains",
          "[topologies][network][fat_tree]") {
  SECTION("1 level") {
    check_all_pairs_connected(make_net(fat_tree(1, 8), 6).t);
  }
  SECTION("2 levels") {
    check_all_pairs_connected(make_net(fat_tree(2, 8), 20).t);
  }
  SECTION("3 levels") {
    check_all_pairs_connected(make_net(fat_tree(3, 8), 40).t);
  }
}

TEST_CASE("rail-optimized fat trees put NIC k of consecutive nodes on one leaf",
          "[topologies][network][fat_tree]") {
  // 4 nodes x 2 NICs, 4 NICs per leaf.
  core::NetworkSpec spec = fat_tree(2, 8);
  spec.rail_optimized = true;
  const Net rail = make_net(spec, 4, 2);
  CHECK(rail.t.route_between(rail.nic(0, 0), rail.nic(3, 0)).size() == 2); // same rail
  CHECK(rail.t.route_between(rail.nic(0, 1), rail.nic(3, 1)).size() == 2);
  CHECK(rail.t.route_between(rail.nic(0, 0), rail.nic(3, 1)).size() == 4);
  CHECK(rail.t.link_between(rail.nic(3, 0), rail.dev("net/leaf0")));
  CHECK(rail.t.link_between(rail.nic(0, 1), rail.dev("net/leaf1")));
  // Node-major: node 0's NICs and node 1's share leaf 0.
  const Net plain = make_net(fat_tree(2, 8), 4, 2);
  CHECK(plain.t.route_between(plain.nic(0, 0), plain.nic(3, 0)).size() == 4);
  CHECK(plain.t.route_between(plain.nic(0, 0), plain.nic(1, 1)).size() == 2);
}

TEST_CASE("with SHARP the first top-level switch reduces and NICs reach it up the tree",
          "[topologies][network][fat_tree][sharp]") {
  const auto check = [](std::uint32_t levels, std::uint32_t nodes, const std::string& top,
                        std::size_t hops) {
    core::NetworkSpec spec = fat_tree(levels, 8);
    spec.sharp = true;
    spec.sharp_reduce_bandwidth = core::Bandwidth{100e9};
    const Net n = make_net(spec, nodes);
    const auto reducing = n.t.reducing_switches();
    REQUIRE(reducing.size() == 1);
    CHECK(n.name(reducing[0]) == top);
    CHECK(n.t.devices()[reducing[0]].endpoint.reduce_bandwidth == core::Bandwidth{100e9});
    for (std::uint32_t i = 0; i < n.ports.nics.size(); ++i) {
      const auto up = n.t.route_between(n.nic(i), reducing[0]);
      const auto down = n.t.route_between(reducing[0], n.nic(i));
      CHECK(up.size() == hops);
      CHECK(down.size() == hops);
      CHECK(is_chain(n.t, up, n.nic(i), reducing[0]));
      CHECK(is_chain(n.t, down, reducing[0], n.nic(i)));
    }
  };
  check(1, 8, "net/leaf0", 1);
  check(2, 20, "net/spine0", 2);
  check(3, 40, "net/core0", 3);
}

TEST_CASE("a route's latency adds the forwarding latency of every switch it passes through",
          "[topologies][network]") {
  core::NetworkSpec spec = fat_tree(2, 8);
  spec.link_latency = core::Seconds{0.5e-6};
  spec.switch_latency = core::Seconds{100e-9};
  spec.link_bandwidth = core::Bandwidth{50e9};
  const Net n = make_net(spec, 20);
  const auto same_leaf = n.t.cost_of(n.t.route_between(n.nic(0), n.nic(1)));
  CHECK(same_leaf.hops == 2);
  CHECK(same_leaf.latency.value == Approx(2 * 1e-6 + 100e-9));
  const auto cross = n.t.cost_of(n.t.route_between(n.nic(0), n.nic(19)));
  CHECK(cross.hops == 4);
  CHECK(cross.latency.value == Approx(2 * 1e-6 + 2 * 0.5e-6 + 3 * 100e-9));
  CHECK(cross.bottleneck == core::Bandwidth{25e9}); // the NIC links
  for (const auto& l : n.t.links()) {
    CHECK(l.kind == core::LinkKind::ib);
  }
  // Switch-to-switch links take link_bandwidth; without it, the NICs'.
  CHECK(n.t.links()[n.t.link(n.dev("net/leaf0"), n.dev("net/spine0"))].bandwidth ==
        core::Bandwidth{50e9});
  const Net plain = make_net(fat_tree(2, 8), 20);
  CHECK(plain.t.links()[plain.t.link(plain.dev("net/leaf0"), plain.dev("net/spine0"))].bandwidth ==
        core::Bandwidth{25e9});
  CHECK(plain.t.devices()[plain.dev("net/leaf0")].latency == core::Seconds{90e-9});
  CHECK(plain.t.devices()[plain.dev("net/leaf0")].node == core::kNetworkNode);
}

// ---- check_network ------------------------------------------------------------------------------

TEST_CASE("check_network refuses impossible networks at the offending value",
          "[topologies][network][errors]") {
  core::TopologySpec spec;
  spec.kind = "system";
  spec.pos = core::SourcePos{"s.yaml", 3, 1};
  core::NetworkSpec& net = spec.system.network;
  const auto at = [&](const std::string& key, std::uint32_t line) {
    spec.value_pos["topology.network." + key] = core::SourcePos{"s.yaml", line, 5};
  };
  const auto expect = [&](std::uint64_t ports, const std::string& key, std::uint32_t line,
                          const std::string& message) {
    try {
      topologies::check_network(spec, ports);
      FAIL("no error for " << key);
    } catch (const core::ScenarioError& e) {
      CHECK(e.yaml_path() == "topology.network." + key);
      CHECK(e.pos() == core::SourcePos{"s.yaml", line, line == 3 ? 1u : 5u});
      CHECK(e.message() == message);
    }
  };

  SECTION("a fat-tree radix too small for the taper") {
    net = fat_tree(2, 3, 4.0); // 2 down, 1 up: fine
    at("radix", 7);
    REQUIRE_NOTHROW(topologies::check_network(spec, 2));
    net = fat_tree(2, 1, 4.0);
    expect(1, "radix", 7,
           "radix 1 is too small for taper 4: a leaf would have 0 ports down and 1 up (at least "
           "1 each)");
    net = fat_tree(3, 1, 1.0);
    expect(1, "radix", 7,
           "radix 1 is too small for taper 1: a leaf would have 0 ports down and 1 up (at least "
           "1 each)");
  }
  SECTION("a taper below 1") {
    net = fat_tree(2, 8, 0.5);
    at("taper", 8);
    expect(4, "taper", 8, "the taper (leaf ports down:up) must be at least 1, got 0.5");
  }
  SECTION("a fat tree of 4 levels") {
    net = fat_tree(4, 8);
    at("levels", 6);
    expect(4, "levels", 6, "a fat-tree has 1, 2 or 3 levels, got 4");
  }
  SECTION("more NICs than a 2-level fat tree attaches") {
    net = fat_tree(2, 8);
    at("radix", 7);
    REQUIRE_NOTHROW(topologies::check_network(spec, 32));
    expect(33, "radix", 7,
           "33 NICs do not fit a 2-level fat tree of radix 8: it attaches at most 32 (8 leaves "
           "x 4 ports down)");
  }
  SECTION("more NICs than a 3-level fat tree attaches") {
    net = fat_tree(3, 8, 3.0);
    at("radix", 7);
    REQUIRE_NOTHROW(topologies::check_network(spec, 192));
    expect(193, "radix", 7,
           "193 NICs do not fit a 3-level fat tree of radix 8: it attaches at most 192 (8 pods "
           "x 4 leaves x 6 ports down)");
  }
  SECTION("more NICs than one switch has ports") {
    net = fat_tree(1, 36);
    expect(37, "radix", 3,
           "37 NICs do not fit a 1-level fat tree of radix 36: it attaches at most 36 (one "
           "switch of 36 ports)");
  }
  SECTION("too few global links to join every pair of dragonfly groups") {
    net = dragonfly(4, 8, 4, 34);
    at("global_links_per_router", 9);
    expect(64, "global_links_per_router", 9,
           "34 groups need 33 global links per group to join every pair of groups, but "
           "routers_per_group 8 x global_links_per_router 4 = 32");
  }
  SECTION("more NICs than the dragonfly's groups have ports") {
    net = dragonfly(4, 8, 4, 32);
    at("groups", 10);
    REQUIRE_NOTHROW(topologies::check_network(spec, 1024));
    expect(1025, "groups", 10,
           "1025 NICs do not fit a dragonfly of 32 groups x 8 routers x 4 hosts_per_router = "
           "1024 ports");
  }
  SECTION("more NICs than the largest dragonfly has ports") {
    net = dragonfly(4, 8, 4, 0);
    at("global_links_per_router", 9);
    REQUIRE_NOTHROW(topologies::check_network(spec, 1056));
    expect(1057, "global_links_per_router", 9,
           "1057 NICs do not fit a dragonfly of 8 routers x 4 hosts_per_router per group: at "
           "most routers_per_group x global_links_per_router + 1 = 33 groups, 1056 ports");
  }
  SECTION("too few global links to join every pair of dragonfly+ groups") {
    net = dragonfly_plus(10, 4, 4, 4, 2);
    at("global_links_per_spine", 11);
    expect(16, "global_links_per_spine", 11,
           "10 groups need 9 global links per group to join every pair of groups, but "
           "spines_per_group 4 x global_links_per_spine 2 = 8");
  }
  SECTION("more NICs than the dragonfly+ has ports") {
    net = dragonfly_plus(5, 4, 4, 4, 2);
    at("groups", 10);
    expect(81, "groups", 10,
           "81 NICs do not fit a dragonfly+ of 5 groups x 4 leaves x 4 hosts_per_leaf = 80 "
           "ports");
    net.groups = 0;
    at("global_links_per_spine", 11);
    expect(145, "global_links_per_spine", 11,
           "145 NICs do not fit a dragonfly+ of 4 leaves x 4 hosts_per_leaf per group: at most "
           "spines_per_group x global_links_per_spine + 1 = 9 groups, 144 ports");
  }
  SECTION("an unknown dragonfly routing") {
    net = dragonfly(4, 8, 4, 2, "ugal");
    at("routing", 12);
    expect(8, "routing", 12, "expected minimal or valiant routing, got 'ugal'");
  }
  SECTION("a torus of 1 or 4 dimensions") {
    net = torus({8}, 1);
    at("dims", 13);
    expect(4, "dims", 13, "a torus has 2 or 3 dimensions, got 1 ([8])");
    net = torus({2, 2, 2, 2}, 1);
    expect(4, "dims", 13, "a torus has 2 or 3 dimensions, got 4 ([2, 2, 2, 2])");
  }
  SECTION("a torus extent below 2") {
    net = torus({4, 1}, 1);
    at("dims", 13);
    expect(4, "dims", 13, "every torus extent must be at least 2, got [4, 1]");
  }
  SECTION("more NICs than the torus has ports") {
    net = torus({4, 4, 2}, 2);
    at("dims", 13);
    REQUIRE_NOTHROW(topologies::check_network(spec, 64));
    expect(65, "dims", 13,
           "65 NICs do not fit a 4x4x2 torus with 2 hosts_per_router: it attaches at most 64");
  }
  SECTION("SHARP on a network that is not a fat tree or a switch") {
    for (const auto& kind : {"dragonfly", "dragonfly_plus", "torus"}) {
      net = core::NetworkSpec{};
      net.kind = kind;
      net.dims = {2, 2};
      net.sharp = true;
      at("sharp", 14);
      expect(4, "sharp", 14,
             std::string("SHARP needs an InfiniBand fat-tree or switch, not a ") + kind +
                 " network");
    }
    net = fat_tree(2, 8);
    net.sharp = true;
    CHECK_NOTHROW(topologies::check_network(spec, 4));
  }
  SECTION("rail_optimized on a network that is not a fat tree") {
    net = torus({2, 2}, 1);
    net.rail_optimized = true;
    at("rail_optimized", 15);
    expect(4, "rail_optimized", 15, "rail_optimized needs a fat_tree network, not torus");
    net = fat_tree(2, 8);
    net.rail_optimized = true;
    CHECK_NOTHROW(topologies::check_network(spec, 4));
  }
}

TEST_CASE("every small network routes every pair of its devices along a chain of links",
          "[topologies][network]") {
  std::size_t built = 0;
  for (std::uint32_t levels = 1; levels <= 3; ++levels) {
    for (std::uint32_t radix : {4u, 5u, 6u}) {
      for (double taper : {1.0, 2.0}) {
        for (bool rail : {false, true}) {
          core::NetworkSpec spec = fat_tree(levels, radix, taper);
          spec.rail_optimized = rail;
          spec.sharp = true;
          const std::uint64_t cap = topologies::network_capacity(spec);
          for (std::uint64_t nics : {std::uint64_t{2}, cap / 2, cap}) {
            if (nics % 2 == 0 && nics > 0) {
              check_all_pairs_connected(make_net(spec, static_cast<std::uint32_t>(nics / 2), 2).t);
              ++built;
            }
          }
        }
      }
    }
  }
  for (const std::string routing : {"minimal", "valiant"}) {
    for (std::uint32_t g : {0u, 1u, 2u, 3u, 4u, 7u}) {
      const auto spec = dragonfly(2, 3, 2, g, routing);
      const auto nics = static_cast<std::uint32_t>(g == 0 ? 13 : 6 * g);
      check_all_pairs_connected(make_net(spec, nics).t);
      const auto plus = dragonfly_plus(g, 2, 3, 2, 2, routing);
      check_all_pairs_connected(make_net(plus, g == 0 ? 9 : 4 * g).t);
      built += 2;
    }
  }
  for (const auto& dims : std::vector<std::vector<std::uint32_t>>{{2, 2}, {2, 3, 2}, {5, 2}}) {
    check_all_pairs_connected(make_net(torus(dims, 2), 5).t);
    ++built;
  }
  CHECK(built > 40);
}
