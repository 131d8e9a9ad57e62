// `cluster`: N nodes of G devices. Inside a node every device has a full-duplex link to the node's
// switch (so two devices of a node talk at intra_bandwidth with intra_latency end to end: each of
// the two links carries half the latency). Each node has K NICs on that switch; device g leaves the
// node through NIC floor(g*K/G) (GPU-to-NIC affinity). NICs join one non-blocking network switch.
// Inter-node latency = intra_latency + 2*nic_latency + switch_latency.

#include "collsim/core/errors.hpp"
#include "collsim/topologies/build.hpp"
#include "network_builders.hpp"

#include <fmt/format.h>

namespace collsim::topologies {

core::Topology build_cluster(const core::ClusterSpec& c, const core::EndpointSpec& e,
                             std::uint32_t ranks) {
  using core::Bandwidth;
  using core::Device;
  using core::DeviceKind;
  using core::LinkKind;
  using core::Seconds;
  const std::uint32_t g = c.devices_per_node;
  if (g == 0 || c.nics_per_node == 0) {
    throw core::UsageError("cluster: devices_per_node and nics_per_node must be at least 1");
  }
  const std::uint32_t nodes = c.nodes != 0 ? c.nodes : (ranks + g - 1) / g;
  const std::uint64_t capacity = static_cast<std::uint64_t>(nodes) * g;
  if (capacity < ranks) {
    throw core::UsageError(
        fmt::format("the cluster has {} devices ({} nodes x {}) but {} ranks were requested",
                    capacity, nodes, g, ranks));
  }
  core::EndpointParams ep;
  ep.overhead = e.overhead;
  ep.gap = e.gap;
  ep.copy_bandwidth = e.copy_bandwidth;
  ep.reduce_bandwidth = c.reduce_bandwidth;

  core::Topology t;
  core::EndpointParams switch_ep;
  switch_ep.reduce_bandwidth = c.switch_reduce_bandwidth;
  const core::DeviceId net =
      t.add_device(Device{"network", DeviceKind::network_switch, core::kNetworkNode,
                          core::kNoDevice, switch_ep, c.network_switch_reduces});
  // One switch: routes NIC, switch, NIC without scanning the switch's ports.
  auto router = std::make_shared<detail::StarRouter>(net);
  const Seconds half_intra = c.intra_latency * 0.5;
  const Seconds nic_link = c.nic_latency + c.switch_latency * 0.5;
  std::vector<core::DeviceId> rank_device;
  rank_device.reserve(ranks);
  for (std::uint32_t n = 0; n < nodes; ++n) {
    const core::DeviceId sw =
        t.add_device(Device{fmt::format("node{}/switch", n),
                            c.node_switch_reduces ? DeviceKind::nvswitch : DeviceKind::pcie_switch,
                            n, core::kNoDevice, switch_ep, c.node_switch_reduces});
    std::vector<core::DeviceId> nics;
    for (std::uint32_t k = 0; k < c.nics_per_node; ++k) {
      const core::DeviceId nic = t.add_device(
          Device{fmt::format("node{}/nic{}", n, k), DeviceKind::nic, n, core::kNoDevice, {}});
      t.add_duplex(sw, nic, c.intra_bandwidth, Seconds{0.0}, LinkKind::pcie);
      const core::LinkId up =
          t.add_link(core::Link{nic, net, c.nic_bandwidth, nic_link, LinkKind::ib});
      const core::LinkId down =
          t.add_link(core::Link{net, nic, c.nic_bandwidth, nic_link, LinkKind::ib});
      router->attach(nic, up, down);
      nics.push_back(nic);
    }
    for (std::uint32_t d = 0; d < g; ++d) {
      const core::DeviceId egress = nics[static_cast<std::size_t>(d) * c.nics_per_node / g];
      const core::DeviceId dev =
          t.add_device(Device{fmt::format("node{}/dev{}", n, d), DeviceKind::gpu, n, egress, ep});
      t.add_duplex(dev, sw, c.intra_bandwidth, half_intra, LinkKind::intra);
      if (rank_device.size() < ranks) {
        rank_device.push_back(dev);
      }
    }
  }
  t.set_router(std::move(router));
  t.map_ranks(std::move(rank_device));
  return t;
}

} // namespace collsim::topologies
