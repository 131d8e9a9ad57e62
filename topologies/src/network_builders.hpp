#pragma once
// What the network builders share (topologies/src/network_*.cpp).

#include "collsim/topologies/network.hpp"

#include <string>

namespace collsim::topologies::detail {

/// A switch or router of the network: kind network_switch, node kNetworkNode, forwarding latency
/// spec.switch_latency, reducing (if marked so) at spec.sharp_reduce_bandwidth.
core::Device network_device(std::string name, const core::NetworkSpec& spec);
/// Switch-to-switch link bandwidth: spec.link_bandwidth, or the NICs' when not given.
core::Bandwidth link_bandwidth(const core::NetworkSpec& spec, const HostPorts& ports);

void build_switch(const core::NetworkSpec& spec, const HostPorts& ports, core::Topology& t);

/// The routing of one switch that every NIC joins (the `switch` network, the `cluster` builder):
/// NIC, switch, NIC. Without it a route would scan every port of the switch, which costs a
/// million-port cluster a million steps per route.
class StarRouter final : public core::NetworkRouter {
public:
  explicit StarRouter(core::DeviceId hub) : hub_(hub) {}
  /// Records NIC `nic`'s links to and from the hub (call for every NIC, in any order).
  void attach(core::DeviceId nic, core::LinkId up, core::LinkId down);
  void route(const core::Topology& t, core::DeviceId from, core::DeviceId to,
             std::vector<core::LinkId>& path) const override;
  [[nodiscard]] std::string describe() const override { return "one switch"; }

private:
  struct Port {
    core::DeviceId nic;
    core::LinkId up;
    core::LinkId down;
  };
  [[nodiscard]] const Port& port(const core::Topology& t, core::DeviceId nic) const;
  core::DeviceId hub_;
  /// Sorted by NIC as they are attached: route() only reads, so that the points of a sweep can
  /// route on one topology from several threads (a sort on first use raced there).
  std::vector<Port> ports_;
};
// block network-declarations
// network_common.cpp: what every structured network shares.

/// Throws core::ScenarioError at the value `topology.network.<key>` of `spec`.
[[noreturn]] void network_error(const core::TopologySpec& spec, const std::string& key,
                                std::string message);
/// Refuses options the kind of spec.system.network cannot have: `sharp` (only a switch or a
/// fat-tree of InfiniBand switches reduces) and `rail_optimized` (only fat-trees have rails).
void check_network_options(const core::TopologySpec& spec);

/// The NICs of HostPorts in the order the network attaches them (port i on switch i / ports per
/// switch): node-major (node n NIC k) or rail-major (NIC 0 of every node, then NIC 1, ...).
class PortOrder {
public:
  PortOrder(const HostPorts& ports, bool rail_major);
  [[nodiscard]] std::uint32_t size() const { return static_cast<std::uint32_t>(devices_.size()); }
  [[nodiscard]] core::DeviceId device(std::uint32_t port) const { return devices_[port]; }
  /// The port of NIC `d`, or kNoPort when `d` is not one of the NICs.
  [[nodiscard]] std::uint32_t port_of(core::DeviceId d) const;
  static constexpr std::uint32_t kNoPort = 0xffffffffu;

private:
  std::vector<core::DeviceId> devices_;
  std::vector<std::pair<core::DeviceId, std::uint32_t>> sorted_; ///< (NIC, port), by NIC
};

/// How the global ports of a DragonFly (or DragonFly+) group reach the other groups, the same in
/// every group: each pair of groups gets floor(ports / (groups-1)) links, and the remaining ports
/// add one more link to groups at mirrored offsets (+o and -o, so the wiring is symmetric; offset
/// groups/2 pairs with itself). Port e of a group sits on its router (spine) e / per_router.
class GlobalWiring {
public:
  GlobalWiring(std::uint32_t groups, std::uint32_t ports);
  /// Links between group i and group (i + offset) mod groups, 0 < offset < groups.
  [[nodiscard]] std::uint32_t copies(std::uint32_t offset) const;
  /// The group port carrying copy `copy` (< copies(offset)) of the link towards offset `offset`;
  /// the same link arrives at port port(groups - offset, copy) of the other group.
  [[nodiscard]] std::uint32_t port(std::uint32_t offset, std::uint32_t copy) const;
  /// Ports of a group that carry a link (the rest stay dark).
  [[nodiscard]] std::uint32_t used_ports() const;

  /// One global link from group `from` to group `to` (!= from), copy `key` mod copies: the port
  /// it leaves `from` by and the port it arrives at in `to` (the switch of a port is port / h).
  struct Crossing {
    std::uint32_t out = 0;
    std::uint32_t in = 0;
  };
  [[nodiscard]] Crossing crossing(std::uint32_t from, std::uint32_t to, std::uint32_t key) const;

private:
  std::uint32_t groups_;
  std::uint32_t base_ = 0;
  std::vector<std::uint32_t> extra_rank_; ///< per offset: its place among the extra links
  std::uint32_t extras_ = 0;
};

/// What the checks of the group-based networks (dragonfly, dragonfly+) need to know of a shape:
/// `carriers` switches per group carry `h` global links each; `units` switches per group carry
/// `hosts` NICs each.
struct GroupedShape {
  const char* kind;       ///< "dragonfly", "dragonfly+"
  const char* global_key; ///< "global_links_per_router"
  const char* carriers_key;
  std::uint32_t carriers = 0;
  std::uint32_t h = 0;
  const char* units_name; ///< "routers", "leaves"
  std::uint32_t units = 0;
  const char* hosts_key;
  std::uint32_t hosts = 0;
  std::uint64_t max_groups = 0;
  std::uint64_t capacity = 0;
};
/// The checks they share: the options, the routing, enough global links to join every pair of
/// groups, and room for `ports` NICs.
void check_grouped(const core::TopologySpec& spec, std::uint64_t ports, const GroupedShape& s);

/// A deterministic 64-bit mix (splitmix64's finaliser), for Valiant's intermediate groups.
std::uint64_t mix_bits(std::uint64_t x);

// network_fat_tree.cpp
std::uint64_t fat_tree_capacity(const core::NetworkSpec& spec);
void check_fat_tree(const core::TopologySpec& spec, std::uint64_t ports);
void build_fat_tree(const core::NetworkSpec& spec, const HostPorts& ports, core::Topology& t);
// network_dragonfly.cpp
std::uint64_t dragonfly_capacity(const core::NetworkSpec& spec);
void check_dragonfly(const core::TopologySpec& spec, std::uint64_t ports);
void build_dragonfly(const core::NetworkSpec& spec, const HostPorts& ports, core::Topology& t);
// network_dragonfly_plus.cpp
std::uint64_t dragonfly_plus_capacity(const core::NetworkSpec& spec);
void check_dragonfly_plus(const core::TopologySpec& spec, std::uint64_t ports);
void build_dragonfly_plus(const core::NetworkSpec& spec, const HostPorts& ports, core::Topology& t);
// network_torus.cpp
std::uint64_t torus_capacity(const core::NetworkSpec& spec);
void check_torus(const core::TopologySpec& spec, std::uint64_t ports);
void build_torus(const core::NetworkSpec& spec, const HostPorts& ports, core::Topology& t);
// end of block network-declarations

} // namespace collsim::topologies::detail
