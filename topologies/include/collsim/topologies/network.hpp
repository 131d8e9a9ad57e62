#pragma once
// Network builders of the `system` topology: the fabric that joins the nodes' NICs. Each adds its
// switches (kind network_switch, node core::kNetworkNode, forwarding latency switch_latency) and
// links to a Topology under construction and installs its deterministic routing
// (core::NetworkRouter), so routes are computed on demand in O(hops).

#include "collsim/core/scenario.hpp"
#include "collsim/core/topology.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace collsim::topologies {

/// The NICs to attach: nics[n][k] is NIC k of node n (every node has the same count).
struct HostPorts {
  std::vector<std::vector<core::DeviceId>> nics;
  core::Bandwidth bandwidth; ///< NIC to its switch, per direction
  core::Seconds latency;     ///< NIC to its switch
};

/// How many NICs the network of `spec` can attach (UINT64_MAX: unbounded). For `groups: 0` the
/// largest group count the network's wiring allows.
std::uint64_t network_capacity(const core::NetworkSpec& spec);

/// Checks the network's counts (a radix too small for the taper, too few global links to join the
/// groups, ...) against `ports` NICs; throws core::ScenarioError at the offending value of `spec`.
void check_network(const core::TopologySpec& spec, std::uint64_t ports);

/// Adds the network to `t` and attaches every NIC of `ports`; installs its router.
void build_network(const core::NetworkSpec& spec, const HostPorts& ports, core::Topology& t);

} // namespace collsim::topologies
