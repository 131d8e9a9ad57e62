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
// block network-declarations
// end of block network-declarations

} // namespace collsim::topologies::detail
