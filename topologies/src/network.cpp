// The network of a `system` topology: dispatch to the builder of each kind, and the simplest kind,
// `switch`: one non-blocking switch that every NIC joins (a single-switch cluster, or the
// idealised fabric of textbook models).

#include "collsim/topologies/network.hpp"

#include "collsim/core/errors.hpp"
#include "network_builders.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <limits>
#include <memory>

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

void StarRouter::attach(core::DeviceId nic, core::LinkId up, core::LinkId down) {
  const auto at = std::upper_bound(ports_.begin(), ports_.end(), nic,
                                   [](core::DeviceId d, const Port& p) { return d < p.nic; });
  ports_.insert(at, Port{nic, up, down});
}

const StarRouter::Port& StarRouter::port(const core::Topology& t, core::DeviceId nic) const {
  const auto it = std::lower_bound(ports_.begin(), ports_.end(), nic,
                                   [](const Port& p, core::DeviceId d) { return p.nic < d; });
  if (it == ports_.end() || it->nic != nic) {
    throw core::EngineError(fmt::format("device '{}' is not attached to the switch '{}'",
                                        t.devices()[nic].name, t.devices()[hub_].name));
  }
  return *it;
}

void StarRouter::route(const core::Topology& t, core::DeviceId from, core::DeviceId to,
                       std::vector<core::LinkId>& path) const {
  if (from != hub_) {
    path.push_back(port(t, from).up);
  }
  if (to != hub_) {
    path.push_back(port(t, to).down);
  }
}

void build_switch(const core::NetworkSpec& spec, const HostPorts& ports, core::Topology& t) {
  core::Device sw = network_device("net/switch", spec);
  sw.reduces = spec.sharp;
  const core::DeviceId id = t.add_device(std::move(sw));
  auto router = std::make_shared<StarRouter>(id);
  for (const auto& node : ports.nics) {
    for (const core::DeviceId nic : node) {
      const core::LinkId up =
          t.add_link(core::Link{nic, id, ports.bandwidth, ports.latency, core::LinkKind::ib});
      const core::LinkId down =
          t.add_link(core::Link{id, nic, ports.bandwidth, ports.latency, core::LinkKind::ib});
      router->attach(nic, up, down);
    }
  }
  t.set_router(std::move(router));
}

} // namespace detail

std::uint64_t network_capacity(const core::NetworkSpec& spec) {
  if (spec.kind == "switch") {
    return std::numeric_limits<std::uint64_t>::max();
  }
  // block network-capacity
  if (spec.kind == "fat_tree") {
    return detail::fat_tree_capacity(spec);
  }
  if (spec.kind == "dragonfly") {
    return detail::dragonfly_capacity(spec);
  }
  if (spec.kind == "dragonfly_plus") {
    return detail::dragonfly_plus_capacity(spec);
  }
  if (spec.kind == "torus") {
    return detail::torus_capacity(spec);
  }
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
  if (net.kind == "fat_tree") {
    detail::check_fat_tree(spec, ports);
    return;
  }
  if (net.kind == "dragonfly") {
    detail::check_dragonfly(spec, ports);
    return;
  }
  if (net.kind == "dragonfly_plus") {
    detail::check_dragonfly_plus(spec, ports);
    return;
  }
  if (net.kind == "torus") {
    detail::check_torus(spec, ports);
    return;
  }
  // end of block network-check
  throw core::InternalError(fmt::format("network kind '{}' has no builder", net.kind));
}

void build_network(const core::NetworkSpec& spec, const HostPorts& ports, core::Topology& t) {
  if (spec.kind == "switch") {
    detail::build_switch(spec, ports, t);
    return;
  }
  // block network-build
  if (spec.kind == "fat_tree") {
    detail::build_fat_tree(spec, ports, t);
    return;
  }
  if (spec.kind == "dragonfly") {
    detail::build_dragonfly(spec, ports, t);
    return;
  }
  if (spec.kind == "dragonfly_plus") {
    detail::build_dragonfly_plus(spec, ports, t);
    return;
  }
  if (spec.kind == "torus") {
    detail::build_torus(spec, ports, t);
    return;
  }
  // end of block network-build
  throw core::InternalError(fmt::format("network kind '{}' has no builder", spec.kind));
}

} // namespace collsim::topologies
