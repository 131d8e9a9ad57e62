// The network of a `system` topology: dispatch to the builder of each kind, and the simplest kind,
// `switch`: one non-blocking switch that every NIC joins (a single-switch cluster, or the
// idealised fabric of textbook models).

#include "collsim/topologies/network.hpp"

#include "collsim/core/errors.hpp"
#include "network_builders.hpp"

#include <fmt/format.h>
#include <limits>

namespace collsim::topologies {

namespace detail {

core::Device network_device(std::string name, const core::NetworkSpec& spec) {
  core::Device d;
  d.name = std::move(name);
  d.kind = core::DeviceKind::network_switch;
  d.node = core::kNetworkNode;
  d.latency = spec.switch_latency;
  d.endpoint.reduce_bandwidth = spec.sharp_reduce_bandwidth;
  return d;
}

core::Bandwidth link_bandwidth(const core::NetworkSpec& spec, const HostPorts& ports) {
  return spec.link_bandwidth.bytes_per_second > 0 ? spec.link_bandwidth : ports.bandwidth;
}

void build_switch(const core::NetworkSpec& spec, const HostPorts& ports, core::Topology& t) {
  core::Device sw = network_device("net/switch", spec);
  sw.reduces = spec.sharp;
  const core::DeviceId id = t.add_device(std::move(sw));
  for (const auto& node : ports.nics) {
    for (const core::DeviceId nic : node) {
      t.add_duplex(nic, id, ports.bandwidth, ports.latency, core::LinkKind::ib);
    }
  }
}

} // namespace detail

std::uint64_t network_capacity(const core::NetworkSpec& spec) {
  if (spec.kind == "switch") {
    return std::numeric_limits<std::uint64_t>::max();
  }
  // block network-capacity
  // end of block network-capacity
  throw core::InternalError(fmt::format("network kind '{}' has no builder", spec.kind));
}

void check_network(const core::TopologySpec& spec, std::uint64_t ports) {
  const core::NetworkSpec& net = spec.system.network;
  if (net.kind == "switch") {
    (void)ports;
    return;
  }
  // block network-check
  // end of block network-check
  throw core::InternalError(fmt::format("network kind '{}' has no builder", net.kind));
}

void build_network(const core::NetworkSpec& spec, const HostPorts& ports, core::Topology& t) {
  if (spec.kind == "switch") {
    detail::build_switch(spec, ports, t);
    return;
  }
  // block network-build
  // end of block network-build
  throw core::InternalError(fmt::format("network kind '{}' has no builder", spec.kind));
}

} // namespace collsim::topologies
