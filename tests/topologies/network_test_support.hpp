#pragma once
// What the network-builder tests share (network_test.cpp: fat trees and check_network;
// network_dragonfly_torus_test.cpp): a network of NICs built from a spec, its switch and link
// counts, route checks and the specs of each kind.

#include "collsim/core/errors.hpp"
#include "collsim/core/scenario.hpp"
#include "collsim/core/topology.hpp"
#include "collsim/topologies/network.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <vector>

namespace collsim::testing::net {

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
inline Net make_net(const core::NetworkSpec& spec, std::uint32_t nodes, std::uint32_t nics = 1) {
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

inline Counts count(const core::Topology& t) {
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
inline int group_of(const std::string& name) {
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

inline PathStats stats(const core::Topology& t, const std::vector<LinkId>& path) {
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
inline bool is_chain(const core::Topology& t, const std::vector<LinkId>& path, DeviceId a,
                     DeviceId b) {
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
inline void check_all_pairs_connected(const core::Topology& t) {
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

inline core::NetworkSpec fat_tree(std::uint32_t levels, std::uint32_t radix, double taper = 1.0) {
  core::NetworkSpec s;
  s.kind = "fat_tree";
  s.levels = levels;
  s.radix = radix;
  s.taper = taper;
  return s;
}

inline core::NetworkSpec dragonfly(std::uint32_t p, std::uint32_t a, std::uint32_t h,
                                   std::uint32_t g, const std::string& routing = "minimal") {
  core::NetworkSpec s;
  s.kind = "dragonfly";
  s.hosts_per_router = p;
  s.routers_per_group = a;
  s.global_links_per_router = h;
  s.groups = g;
  s.routing = routing;
  return s;
}

inline core::NetworkSpec dragonfly_plus(std::uint32_t g, std::uint32_t l, std::uint32_t s,
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

inline core::NetworkSpec torus(std::vector<std::uint32_t> dims, std::uint32_t hosts) {
  core::NetworkSpec s;
  s.kind = "torus";
  s.dims = std::move(dims);
  s.hosts_per_router = hosts;
  return s;
}

} // namespace collsim::testing::net
