// The network builders of the `system` topology (fat tree, DragonFly, DragonFly+, torus): switch
// and link counts against their formulas, route lengths of each routing, route costs, and every
// message check_network gives.

#include "collsim/core/errors.hpp"
#include "collsim/core/scenario.hpp"
#include "collsim/core/topology.hpp"
#include "collsim/topologies/network.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace {

using namespace collsim;
using core::DeviceId;
using core::DeviceKind;
using core::LinkId;

struct Net {
  core::Topology t;
  topologies::HostPorts ports;
  /// NIC k of node n.
  [[nodiscard]] DeviceId nic(std::uint32_t n, std::uint32_t k = 0) const {
    return ports.nics[n][k];
  }
  [[nodiscard]] DeviceId dev(const std::string& name) const {
    const auto d = t.find_device(name);
    REQUIRE(d.has_value());
    return *d;
  }
  [[nodiscard]] const std::string& name(DeviceId d) const { return t.devices()[d].name; }
};

/// `nodes` nodes of `nics` NICs each (25 GB/s, 1 us to the first switch), joined by `spec`.
Net make_net(const core::NetworkSpec& spec, std::uint32_t nodes, std::uint32_t nics = 1) {
  Net n;
  n.ports.bandwidth = core::Bandwidth{25e9};
  n.ports.latency = core::Seconds{1e-6};
  for (std::uint32_t i = 0; i < nodes; ++i) {
    std::vector<DeviceId> node;
    for (std::uint32_t k = 0; k < nics; ++k) {
      core::Device d;
      d.name = "n"; // appended piecewise: GCC 12 warns (-Wrestrict) on "n" + std::string
      d.name += std::to_string(i);
      d.name += "/nic";
      d.name += std::to_string(k);
      d.kind = DeviceKind::nic;
      d.node = i;
      node.push_back(n.t.add_device(std::move(d)));
    }
    n.ports.nics.push_back(std::move(node));
  }
  topologies::build_network(spec, n.ports, n.t);
  return n;
}

struct Counts {
  std::size_t switches = 0;
  std::size_t nic_links = 0;    ///< directed links with a NIC at one end
  std::size_t switch_links = 0; ///< directed switch-to-switch links
};

Counts count(const core::Topology& t) {
  Counts c;
  for (const auto& d : t.devices()) {
    c.switches += d.kind == DeviceKind::network_switch ? 1 : 0;
  }
  for (const auto& l : t.links()) {
    const bool sw = t.devices()[l.from].kind == DeviceKind::network_switch &&
                    t.devices()[l.to].kind == DeviceKind::network_switch;
    (sw ? c.switch_links : c.nic_links) += 1;
  }
  return c;
}

/// The group in a DragonFly switch name "net/g<group>/...".
int group_of(const std::string& name) {
  if (name.rfind("net/g", 0) != 0) {
    return -1;
  }
  return std::stoi(name.substr(5, name.find('/', 5) - 5));
}

struct PathStats {
  std::uint32_t global = 0;        ///< links between switches of different groups
  std::uint32_t switch_links = 0;  ///< links between two switches
  std::vector<std::string> passes; ///< the devices the route passes through
};

PathStats stats(const core::Topology& t, const std::vector<LinkId>& path) {
  PathStats s;
  for (std::size_t i = 0; i < path.size(); ++i) {
    const auto& l = t.links()[path[i]];
    const auto& a = t.devices()[l.from];
    const auto& b = t.devices()[l.to];
    if (a.kind == DeviceKind::network_switch && b.kind == DeviceKind::network_switch) {
      ++s.switch_links;
      s.global += group_of(a.name) != group_of(b.name) ? 1 : 0;
    }
    if (i + 1 < path.size()) {
      s.passes.push_back(b.name);
    }
  }
  return s;
}

/// A route is a chain of links from `a` to `b`.
bool is_chain(const core::Topology& t, const std::vector<LinkId>& path, DeviceId a, DeviceId b) {
  DeviceId at = a;
  for (const LinkId l : path) {
    if (t.links()[l].from != at) {
      return false;
    }
    at = t.links()[l].to;
  }
  return at == b;
}

/// Every pair of devices of the network (NICs and switches) has a route, and it is a chain.
void check_all_pairs_connected(const core::Topology& t) {
  std::size_t bad = 0;
  for (DeviceId a = 0; a < t.devices().size(); ++a) {
    for (DeviceId b = 0; b < t.devices().size(); ++b) {
      if (a != b && !(t.devices()[a].node == t.devices()[b].node &&
                      t.devices()[a].node != core::kNetworkNode)) {
        bad += is_chain(t, t.route_between(a, b), a, b) ? 0 : 1;
      }
    }
  }
  CHECK(bad == 0);
}

core::NetworkSpec fat_tree(std::uint32_t levels, std::uint32_t radix, double taper = 1.0) {
  core::NetworkSpec s;
  s.kind = "fat_tree";
  s.levels = levels;
  s.radix = radix;
  s.taper = taper;
  return s;
}

core::NetworkSpec dragonfly(std::uint32_t p, std::uint32_t a, std::uint32_t h, std::uint32_t g,
                            const std::string& routing = "minimal") {
  core::NetworkSpec s;
  s.kind = "dragonfly";
  s.hosts_per_router = p;
  s.routers_per_group = a;
  s.global_links_per_router = h;
  s.groups = g;
  s.routing = routing;
  return s;
}

core::NetworkSpec dragonfly_plus(std::uint32_t g, std::uint32_t l, std::uint32_t s,
                                 std::uint32_t hosts, std::uint32_t h,
                                 const std::string& routing = "minimal") {
  core::NetworkSpec n;
  n.kind = "dragonfly_plus";
  n.groups = g;
  n.leaves_per_group = l;
  n.spines_per_group = s;
  n.hosts_per_leaf = hosts;
  n.global_links_per_spine = h;
  n.routing = routing;
  return n;
}

core::NetworkSpec torus(std::vector<std::uint32_t> dims, std::uint32_t hosts) {
  core::NetworkSpec s;
  s.kind = "torus";
  s.dims = std::move(dims);
  s.hosts_per_router = hosts;
  return s;
}

} // namespace

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

// ---- dragonfly ---------------------------------------------------------------------------------

TEST_CASE("dragonfly-1024 (p=4, a=8, h=4, 32 groups) has 256 routers, all-to-all groups and "
          "every pair of groups joined",
          "[topologies][network][dragonfly]") {
  const Net n = make_net(dragonfly(4, 8, 4, 32), 1024);
  const Counts c = count(n.t);
  CHECK(c.switches == 256);
  CHECK(c.nic_links == 2 * 1024);
  // local: 32 groups x 8*7 directed; global: 32 ports per group, all used (31 peers get one,
  // the group opposite, offset 16, a second).
  CHECK(c.switch_links == 32 * 8 * 7 + 32 * 32);
  std::map<std::pair<int, int>, int> pairs;
  std::map<std::string, int> global_ports;
  for (const auto& l : n.t.links()) {
    const auto& a = n.t.devices()[l.from];
    const auto& b = n.t.devices()[l.to];
    if (a.kind == DeviceKind::network_switch && b.kind == DeviceKind::network_switch &&
        group_of(a.name) != group_of(b.name)) {
      ++pairs[{group_of(a.name), group_of(b.name)}];
      ++global_ports[a.name];
    }
  }
  CHECK(pairs.size() == 32 * 31);
  for (const auto& [pair, links] : pairs) {
    CHECK(links == ((pair.second - pair.first + 32) % 32 == 16 ? 2 : 1));
  }
  // Every router uses exactly its h = 4 global ports: radix k = p + (a-1) + h = 15.
  CHECK(global_ports.size() == 256);
  for (const auto& [router, ports] : global_ports) {
    CHECK(ports == 4);
    CHECK(n.t.out_links(n.dev(router)).size() == 15);
  }
  CHECK(n.t.find_device("net/g31/r7"));
  CHECK(topologies::network_capacity(dragonfly(4, 8, 4, 0)) == 4 * 8 * 33);
  CHECK(topologies::network_capacity(dragonfly(4, 8, 4, 32)) == 1024);
}

TEST_CASE("dragonfly minimal routes cross exactly one global link and at most 3 router links "
          "between groups (all 256 x 256 router pairs)",
          "[topologies][network][dragonfly]") {
  const Net n = make_net(dragonfly(4, 8, 4, 32), 1024);
  const DeviceId r0 = n.dev("net/g0/r0");
  std::size_t failures = 0;
  std::uint32_t longest = 0;
  for (DeviceId a = r0; a < r0 + 256; ++a) {
    for (DeviceId b = r0; b < r0 + 256; ++b) {
      if (a == b) {
        continue;
      }
      const auto path = n.t.route_between(a, b);
      const auto s = stats(n.t, path);
      const bool same_group = group_of(n.name(a)) == group_of(n.name(b));
      const bool ok = is_chain(n.t, path, a, b) && s.switch_links == path.size() &&
                      s.switch_links <= 3 &&
                      (same_group ? s.global == 0 && path.size() == 1 : s.global == 1);
      failures += ok ? 0 : 1;
      longest = std::max<std::uint32_t>(longest, s.switch_links);
    }
  }
  CHECK(failures == 0);
  CHECK(longest == 3);
  // Between NICs: NIC -> router ... router -> NIC.
  const auto path = n.t.route_between(n.nic(0), n.nic(1023));
  CHECK(is_chain(n.t, path, n.nic(0), n.nic(1023)));
  CHECK(stats(n.t, path).global == 1);
  CHECK(path.size() <= 5);
  CHECK(n.t.route_between(n.nic(0), n.nic(3)).size() == 2); // same router
}

TEST_CASE("dragonfly Valiant routes go through an intermediate group: two global links",
          "[topologies][network][dragonfly]") {
  const Net n = make_net(dragonfly(4, 8, 4, 32, "valiant"), 1024);
  const DeviceId r0 = n.dev("net/g0/r0");
  std::size_t failures = 0;
  std::set<int> intermediates;
  for (DeviceId a = r0; a < r0 + 256; a += 3) {
    for (DeviceId b = r0; b < r0 + 256; ++b) {
      if (a == b) {
        continue;
      }
      const auto path = n.t.route_between(a, b);
      const auto s = stats(n.t, path);
      const int ga = group_of(n.name(a));
      const int gb = group_of(n.name(b));
      const bool ok = is_chain(n.t, path, a, b) && s.switch_links <= 5 &&
                      (ga == gb ? s.global == 0 : s.global == 2) && path == n.t.route_between(a, b);
      failures += ok ? 0 : 1;
      if (a == r0 && gb == 1) {
        for (const auto& dev : s.passes) {
          if (group_of(dev) != 0 && group_of(dev) != 1) {
            intermediates.insert(group_of(dev));
          }
        }
      }
    }
  }
  CHECK(failures == 0);
  CHECK(intermediates.size() > 3); // the hash spreads the intermediate groups
  CHECK(intermediates.count(0) == 0);
  CHECK(intermediates.count(1) == 0);
  const auto path = n.t.route_between(n.nic(0), n.nic(1023));
  CHECK(stats(n.t, path).global == 2);
}

TEST_CASE("a dragonfly with groups 0 builds as few groups as the NICs need",
          "[topologies][network][dragonfly]") {
  const Net n = make_net(dragonfly(4, 8, 4, 0), 100); // 32 hosts per group -> 4 groups
  CHECK(count(n.t).switches == 4 * 8);
  CHECK(n.t.find_device("net/g3/r7"));
  CHECK_FALSE(n.t.find_device("net/g4/r0"));
  check_all_pairs_connected(n.t);
}

TEST_CASE("dragonfly routes between every pair of devices are chains, for both routings",
          "[topologies][network][dragonfly]") {
  // 2 groups joined by a*h = 4 parallel global links; 5 groups with a*h = 4 = g - 1.
  check_all_pairs_connected(make_net(dragonfly(2, 2, 2, 2), 8).t);
  check_all_pairs_connected(make_net(dragonfly(2, 2, 2, 5), 20).t);
  check_all_pairs_connected(make_net(dragonfly(2, 2, 2, 5, "valiant"), 20).t);
  check_all_pairs_connected(make_net(dragonfly(2, 3, 2, 4, "valiant"), 24).t);
}

// ---- dragonfly+ --------------------------------------------------------------------------------

TEST_CASE("dragonfly+ groups are leaf/spine trees whose spines carry the global links",
          "[topologies][network][dragonfly_plus]") {
  // 5 groups x (4 leaves, 4 spines, 4 hosts per leaf), 2 global links per spine: 8 global ports
  // per group, 2 links to each of the 4 other groups.
  const Net n = make_net(dragonfly_plus(5, 4, 4, 4, 2), 80);
  const Counts c = count(n.t);
  CHECK(c.switches == 5 * (4 + 4));
  CHECK(c.nic_links == 2 * 80);
  CHECK(c.switch_links == 2 * (5 * 4 * 4 + 10 * 2)); // leaf-spine, 10 group pairs x 2
  CHECK(n.t.find_device("net/g4/leaf3"));
  CHECK(n.t.find_device("net/g4/spine3"));
  CHECK(topologies::network_capacity(dragonfly_plus(0, 4, 4, 4, 2)) == 9 * 4 * 4);
  for (const auto& l : n.t.links()) {
    const auto& a = n.t.devices()[l.from].name;
    const auto& b = n.t.devices()[l.to].name;
    if (group_of(a) >= 0 && group_of(b) >= 0 && group_of(a) != group_of(b)) {
      CHECK(a.find("spine") != std::string::npos);
      CHECK(b.find("spine") != std::string::npos);
    }
  }
}

TEST_CASE("dragonfly+ minimal routes cross at most one global link: leaf, spine, spine, leaf",
          "[topologies][network][dragonfly_plus]") {
  for (const std::string routing : {"minimal", "valiant"}) {
    const Net n = make_net(dragonfly_plus(5, 4, 4, 4, 2, routing), 80);
    std::size_t failures = 0;
    for (std::uint32_t a = 0; a < 80; ++a) {
      for (std::uint32_t b = 0; b < 80; ++b) {
        if (a == b) {
          continue;
        }
        const auto path = n.t.route_between(n.nic(a), n.nic(b));
        const auto s = stats(n.t, path);
        const bool same_leaf = a / 4 == b / 4;
        const bool same_group = a / 16 == b / 16;
        bool ok = is_chain(n.t, path, n.nic(a), n.nic(b));
        if (same_leaf) {
          ok = ok && path.size() == 2;
        } else if (same_group) {
          ok = ok && path.size() == 4 && s.global == 0;
        } else if (routing == "minimal") {
          ok = ok && s.global == 1 && s.switch_links == 3;
        } else {
          ok = ok && s.global == 2 && s.switch_links <= 7;
        }
        failures += ok ? 0 : 1;
      }
    }
    INFO(routing);
    CHECK(failures == 0);
    check_all_pairs_connected(n.t);
  }
}

// ---- torus -------------------------------------------------------------------------------------

TEST_CASE("a torus has wrap-around links in every dimension, one pair for a ring of 2",
          "[topologies][network][torus]") {
  const Net n = make_net(torus({4, 3, 2}, 2), 48);
  const Counts c = count(n.t);
  CHECK(c.switches == 24);
  CHECK(c.nic_links == 2 * 48);
  // x: 6 rings of 4 links, y: 8 rings of 3, z: 12 rings of 1.
  CHECK(c.switch_links == 2 * (6 * 4 + 8 * 3 + 12 * 1));
  CHECK(n.t.link_between(n.dev("net/t3.2.1"), n.dev("net/t0.2.1")));
  CHECK(n.t.link_between(n.dev("net/t1.0.0"), n.dev("net/t1.2.0")));
  CHECK(topologies::network_capacity(torus({4, 3, 2}, 2)) == 48);
  const Net flat = make_net(torus({2, 2}, 1), 4);
  CHECK(count(flat.t).switch_links == 2 * 4);
}

TEST_CASE("torus routes take dimension order and the shorter way round each ring",
          "[topologies][network][torus]") {
  const std::vector<std::uint32_t> dims{5, 4, 3};
  const Net n = make_net(torus(dims, 1), 60);
  const auto ring = [](std::uint32_t a, std::uint32_t b, std::uint32_t e) {
    const std::uint32_t d = (b + e - a) % e;
    return std::min(d, e - d);
  };
  std::size_t failures = 0;
  for (std::uint32_t a = 0; a < 60; ++a) {
    for (std::uint32_t b = 0; b < 60; ++b) {
      const std::uint32_t expected =
          ring(a % 5, b % 5, 5) + ring(a / 5 % 4, b / 5 % 4, 4) + ring(a / 20, b / 20, 3);
      const auto path = n.t.route_between(n.nic(a), n.nic(b));
      const auto s = stats(n.t, path);
      const bool ok = a == b ? path.empty()
                             : is_chain(n.t, path, n.nic(a), n.nic(b)) &&
                                   s.switch_links == expected && path.size() == expected + 2;
      failures += ok ? 0 : 1;
    }
  }
  CHECK(failures == 0);
  // x first, then y; a tie (2 of 4) goes the positive way: t0.0.0 -> t1.0.0 -> t1.1.0 -> t1.2.0.
  const auto s = stats(n.t, n.t.route_between(n.nic(0), n.nic(1 + 5 * 2)));
  CHECK(s.passes ==
        std::vector<std::string>{"net/t0.0.0", "net/t1.0.0", "net/t1.1.0", "net/t1.2.0"});
  // The short way: x from 0 to 4 of 5 goes backwards over the wrap-around link.
  const auto back = stats(n.t, n.t.route_between(n.nic(0), n.nic(4)));
  CHECK(back.passes == std::vector<std::string>{"net/t0.0.0", "net/t4.0.0"});
  check_all_pairs_connected(make_net(torus({3, 2}, 2), 12).t);
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
