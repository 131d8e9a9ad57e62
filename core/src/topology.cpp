#include "collsim/core/topology.hpp"

#include "collsim/core/errors.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <limits>

namespace collsim::core {

std::string_view to_string(DeviceKind k) {
  switch (k) {
  case DeviceKind::endpoint: return "endpoint";
  case DeviceKind::gpu: return "gpu";
  case DeviceKind::cpu: return "cpu";
  case DeviceKind::nvswitch: return "nvswitch";
  case DeviceKind::pcie_switch: return "pcie_switch";
  case DeviceKind::nic: return "nic";
  case DeviceKind::network_switch: return "network_switch";
  }
  throw InternalError("unknown DeviceKind value");
}

std::string_view to_string(LinkKind k) {
  switch (k) {
  case LinkKind::generic: return "generic";
  case LinkKind::nvlink: return "nvlink";
  case LinkKind::pcie: return "pcie";
  case LinkKind::ib: return "ib";
  case LinkKind::ethernet: return "ethernet";
  case LinkKind::upi: return "upi";
  case LinkKind::intra: return "intra";
  }
  throw InternalError("unknown LinkKind value");
}

Topology Topology::full_mesh(std::uint32_t ranks, Bandwidth bandwidth, Seconds latency,
                             EndpointParams endpoint) {
  Topology t;
  t.full_mesh_ = true;
  t.mesh_bandwidth_ = bandwidth;
  t.mesh_latency_ = latency;
  t.devices_.reserve(ranks);
  std::vector<DeviceId> map(ranks);
  for (std::uint32_t r = 0; r < ranks; ++r) {
    // Names are generated on demand by printers; storing 2^20 strings would cost more than the
    // study.
    Device d;
    d.kind = DeviceKind::endpoint;
    d.node = r;
    d.endpoint = endpoint;
    t.devices_.push_back(std::move(d));
    map[r] = r;
  }
  t.rank_device_ = std::move(map);
  return t;
}

DeviceId Topology::add_device(Device d) {
  if (full_mesh_) {
    throw InternalError("add_device on a full-mesh topology");
  }
  const auto id = static_cast<DeviceId>(devices_.size());
  devices_.push_back(std::move(d));
  boost::add_vertex(graph_);
  return id;
}

LinkId Topology::add_link(Link l) {
  if (l.from >= devices_.size() || l.to >= devices_.size()) {
    throw InternalError("add_link with an unknown device");
  }
  const auto id = static_cast<LinkId>(links_.size());
  boost::add_edge(l.from, l.to, id, graph_);
  links_.push_back(l);
  return id;
}

void Topology::add_duplex(DeviceId a, DeviceId b, Bandwidth bw, Seconds latency, LinkKind kind) {
  add_link(Link{a, b, bw, latency, kind});
  add_link(Link{b, a, bw, latency, kind});
}

void Topology::map_ranks(std::vector<DeviceId> devices) {
  for (DeviceId d : devices) {
    if (d >= devices_.size()) {
      throw InternalError("map_ranks with an unknown device");
    }
  }
  rank_device_ = std::move(devices);
}

std::vector<LinkId> Topology::shortest_path(DeviceId from, DeviceId to) const {
  if (from == to) {
    return {};
  }
  const auto n = boost::num_vertices(graph_);
  constexpr LinkId kNone = std::numeric_limits<LinkId>::max();
  std::vector<LinkId> via(n, kNone); // the link that first reached each vertex
  std::vector<bool> seen(n, false);
  std::vector<DeviceId> queue{from};
  seen[from] = true;
  const auto index = boost::get(boost::edge_index, graph_);
  // Breadth-first in link-id order: deterministic, fewest hops.
  for (std::size_t head = 0; head < queue.size() && !seen[to]; ++head) {
    const DeviceId u = queue[head];
    for (auto [e, end] = boost::out_edges(u, graph_); e != end; ++e) {
      const auto v = static_cast<DeviceId>(boost::target(*e, graph_));
      if (!seen[v]) {
        seen[v] = true;
        via[v] = index[*e];
        queue.push_back(v);
      }
    }
  }
  if (!seen[to]) {
    throw EngineError(fmt::format("no route from device '{}' to device '{}'", devices_[from].name,
                                  devices_[to].name));
  }
  std::vector<LinkId> path;
  for (DeviceId v = to; v != from; v = links_[via[v]].from) {
    path.push_back(via[v]);
  }
  std::reverse(path.begin(), path.end());
  return path;
}

std::vector<LinkId> Topology::route(Rank a, Rank b) const {
  if (full_mesh_ || a == b) {
    return {};
  }
  return route_between(rank_device_[a], rank_device_[b]);
}

std::vector<LinkId> Topology::route_between(DeviceId da, DeviceId db) const {
  if (full_mesh_) {
    throw InternalError("route_between on a full-mesh topology");
  }
  if (da == db) {
    return {};
  }
  const Device& src = devices_[da];
  const Device& dst = devices_[db];
  // Leaving the node: to another node's device, or to a device of the network itself.
  const auto leaves = [](const Device& from, const Device& to) {
    return from.egress != kNoDevice &&
           (to.node != from.node || to.kind == DeviceKind::network_switch);
  };
  const DeviceId out = leaves(src, dst) ? src.egress : da;
  const DeviceId in = leaves(dst, src) ? dst.egress : db;
  auto path = shortest_path(da, out);
  const auto mid = shortest_path(out, in);
  const auto tail = shortest_path(in, db);
  path.insert(path.end(), mid.begin(), mid.end());
  path.insert(path.end(), tail.begin(), tail.end());
  return path;
}

RouteCost Topology::route_cost_between(DeviceId a, DeviceId b) const {
  return cost_of(route_between(a, b));
}

std::optional<DeviceId> Topology::find_device(std::string_view name) const {
  for (DeviceId d = 0; d < devices_.size(); ++d) {
    if (devices_[d].name == name) {
      return d;
    }
  }
  return std::nullopt;
}

std::vector<DeviceId> Topology::reducing_switches() const {
  std::vector<DeviceId> out;
  for (DeviceId d = 0; d < devices_.size(); ++d) {
    if (devices_[d].reduces) {
      out.push_back(d);
    }
  }
  return out;
}

RouteCost Topology::cost_of(const std::vector<LinkId>& path) const {
  RouteCost c;
  c.bottleneck = Bandwidth{std::numeric_limits<double>::infinity()};
  for (LinkId id : path) {
    const Link& l = links_[id];
    c.latency = c.latency + l.latency;
    c.bottleneck = std::min(c.bottleneck, l.bandwidth);
  }
  c.hops = static_cast<std::uint32_t>(path.size());
  return c;
}

RouteCost Topology::route_cost(Rank a, Rank b) const {
  if (full_mesh_) {
    if (a == b) {
      return RouteCost{Seconds{0.0}, Bandwidth{std::numeric_limits<double>::infinity()}, 0};
    }
    return RouteCost{mesh_latency_, mesh_bandwidth_, 1};
  }
  return cost_of(route(a, b));
}

bool Topology::operator==(const Topology& other) const {
  return devices_ == other.devices_ && links_ == other.links_ &&
         rank_device_ == other.rank_device_ && full_mesh_ == other.full_mesh_ &&
         mesh_bandwidth_ == other.mesh_bandwidth_ && mesh_latency_ == other.mesh_latency_;
}

} // namespace collsim::core
