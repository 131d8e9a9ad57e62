// The DragonFly, DragonFly+ and torus builders of the `system` topology: router and link counts
// against their formulas, and the routes of each routing (fat trees: network_test.cpp).

#include "network_test_support.hpp"

#include <catch2/catch.hpp>
#include <map>
#include <set>
#include <string>
#include <vector>

using namespace collsim;
using namespace collsim::testing::net;
using core::DeviceId;
using core::DeviceKind;
using core::LinkId;

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
