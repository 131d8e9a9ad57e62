#include "collsim/core/topology.hpp"

#include "collsim/core/errors.hpp"

#include <algorithm>
#include <boost/graph/adjacency_list.hpp>
#include <fmt/format.h>
#include <limits>
#include <unordered_map>

namespace collsim::core {

struct Topology::Graph {
  boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS, boost::no_property,
                        boost::property<boost::edge_index_t, LinkId>>
      g;
};

Topology::GraphPtr::GraphPtr() : graph_(std::make_unique<Graph>()) {}
Topology::GraphPtr::GraphPtr(const GraphPtr& other)
    : graph_(other.graph_ ? std::make_unique<Graph>(*other.graph_) : std::make_unique<Graph>()) {}
Topology::GraphPtr::GraphPtr(GraphPtr&& other) noexcept = default;
Topology::GraphPtr& Topology::GraphPtr::operator=(const GraphPtr& other) {
  if (this != &other) {
    *this = GraphPtr(other);
  }
  return *this;
}
Topology::GraphPtr& Topology::GraphPtr::operator=(GraphPtr&& other) noexcept = default;
Topology::GraphPtr::~GraphPtr() = default;

Topology::Graph& Topology::GraphPtr::get() {
  if (!graph_) {
    graph_ = std::make_unique<Graph>();
  }
  return *graph_;
}

template <typename F>
void Topology::each_out_link(DeviceId d, F&& f) const {
  const Graph* graph = graph_.find();
  if (graph == nullptr) {
    return;
  }
  const auto index = boost::get(boost::edge_index, graph->g);
  for (auto [e, end] = boost::out_edges(d, graph->g); e != end; ++e) {
    if (!f(index[*e], static_cast<DeviceId>(boost::target(*e, graph->g)))) {
      return;
    }
  }
}

std::string_view to_string(DeviceKind k) {
  switch (k) {
  case DeviceKind::endpoint: return "endpoint";
  case DeviceKind::gpu: return "gpu";
  case DeviceKind::cpu: return "cpu";
  case DeviceKind::nvswitch: return "nvswitch";
  case DeviceKind::pcie_switch: return "pcie_switch";
  case DeviceKind::nic: return "nic";
  case DeviceKind::network_switch: return "network_switch";
  case DeviceKind::numa: return "numa";
  case DeviceKind::core: return "core";
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
  case LinkKind::memory: return "memory";
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
  boost::add_vertex(graph_.get().g);
  return id;
}

LinkId Topology::add_link(Link l) {
  if (l.from >= devices_.size() || l.to >= devices_.size()) {
    throw InternalError("add_link with an unknown device");
  }
  const auto id = static_cast<LinkId>(links_.size());
  boost::add_edge(l.from, l.to, id, graph_.get().g);
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

std::vector<LinkId> Topology::shortest_path(DeviceId from, DeviceId to,
                                            std::uint32_t within) const {
  if (from == to) {
    return {};
  }
  constexpr LinkId kNone = std::numeric_limits<LinkId>::max();
  constexpr std::uint32_t kUnseen = std::numeric_limits<std::uint32_t>::max();
  // Sparse state: a search inside one node touches a handful of devices of a graph that may hold
  // a million, so nothing of size n is allocated or cleared per search.
  struct Visit {
    std::uint32_t dist = kUnseen;
    LinkId via = kNone; // the link that reached the vertex on its best path
    double width = 0.0; // that path's bottleneck bandwidth
  };
  std::unordered_map<DeviceId, Visit> visits;
  visits.reserve(32);
  const auto find = [&](DeviceId v) -> Visit* {
    const auto it = visits.find(v);
    return it == visits.end() ? nullptr : &it->second;
  };
  visits.emplace(from, Visit{0, kNone, std::numeric_limits<double>::infinity()});
  std::vector<DeviceId> queue{from};
  std::uint32_t target_dist = kUnseen;
  // Breadth-first by levels, in link-id order: fewest hops; among equally short paths the widest
  // bottleneck wins (a double NVLink over a single one), and the first in link order after that,
  // so routes are deterministic. A vertex of level L+1 is only expanded after every vertex of
  // level L, so improving its predecessor before then is safe.
  for (std::size_t head = 0; head < queue.size(); ++head) {
    const DeviceId u = queue[head];
    const Visit here = *find(u);
    if (here.dist >= target_dist) {
      break;
    }
    each_out_link(u, [&](LinkId id, DeviceId v) {
      if (v != to && devices_[v].node != within) {
        return true;
      }
      const double width = std::min(here.width, links_[id].bandwidth.bytes_per_second);
      Visit* seen = find(v);
      if (seen == nullptr) {
        visits.emplace(v, Visit{here.dist + 1, id, width});
        queue.push_back(v);
        if (v == to) {
          target_dist = here.dist + 1;
        }
      } else if (seen->dist == here.dist + 1 && width > seen->width) {
        seen->via = id;
        seen->width = width;
      }
      return true;
    });
  }
  if (target_dist == kUnseen) {
    throw EngineError(fmt::format("no route from device '{}' to device '{}'", devices_[from].name,
                                  devices_[to].name));
  }
  std::vector<LinkId> path;
  for (DeviceId v = to; v != from;) {
    const LinkId via = find(v)->via;
    path.push_back(via);
    v = links_[via].from;
  }
  std::reverse(path.begin(), path.end());
  return path;
}

void Topology::network_path(DeviceId from, DeviceId to, std::vector<LinkId>& path) const {
  if (from == to) {
    return;
  }
  if (router_) {
    router_->route(*this, from, to, path);
    return;
  }
  const auto mid = shortest_path(from, to, kNetworkNode);
  path.insert(path.end(), mid.begin(), mid.end());
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
  std::vector<LinkId> path;
  // A leg inside a node, through `via` where it is a device: host memory, for data staged there
  // (GPUs without peer-to-peer between them; without GPUDirect RDMA, on the way to or from the
  // NIC).
  const auto leg = [&](DeviceId from, DeviceId to, DeviceId via, std::uint32_t node) {
    for (const auto& [a, b] : {std::pair{from, via == kNoDevice ? to : via}, std::pair{via, to}}) {
      if (a == kNoDevice) {
        break;
      }
      const auto part = shortest_path(a, b, node);
      path.insert(path.end(), part.begin(), part.end());
    }
  };
  if (src.node == dst.node && src.node != kNetworkNode) {
    leg(da, db, staged_between(da, db) ? src.host : kNoDevice, src.node);
    return path;
  }
  // Leaving the node: to another node's device, or to a device of the network itself. A device
  // without an egress NIC (a NIC, or a node with no NIC) enters the network where it is.
  const DeviceId out = src.node != kNetworkNode && src.egress != kNoDevice ? src.egress : da;
  const DeviceId in = dst.node != kNetworkNode && dst.egress != kNoDevice ? dst.egress : db;
  if (out != da) {
    leg(da, out, staged_to_network(da) ? src.host : kNoDevice, src.node);
  }
  network_path(out, in, path);
  if (in != db) {
    leg(in, db, staged_to_network(db) ? dst.host : kNoDevice, dst.node);
  }
  return path;
}

bool Topology::staged_to_network(DeviceId d) const {
  const Device& dev = devices_[d];
  return !dev.gdr && dev.kind == DeviceKind::gpu && dev.host != kNoDevice &&
         dev.node != kNetworkNode;
}

bool Topology::staged_between(DeviceId a, DeviceId b) const {
  if (full_mesh_ || a == b) {
    return false;
  }
  const Device& src = devices_[a];
  const Device& dst = devices_[b];
  return src.node == dst.node && src.node != kNetworkNode && (!src.p2p || !dst.p2p) &&
         src.kind == DeviceKind::gpu && dst.kind == DeviceKind::gpu && src.host != kNoDevice;
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

std::vector<LinkId> Topology::out_links(DeviceId d) const {
  std::vector<LinkId> out;
  if (full_mesh_) {
    return out;
  }
  each_out_link(d, [&](LinkId id, DeviceId) {
    out.push_back(id);
    return true;
  });
  return out;
}

std::optional<LinkId> Topology::link_between(DeviceId a, DeviceId b) const {
  if (full_mesh_) {
    return std::nullopt;
  }
  std::optional<LinkId> found;
  each_out_link(a, [&](LinkId id, DeviceId to) {
    if (to == b) {
      found = id;
    }
    return !found;
  });
  return found;
}

LinkId Topology::link(DeviceId a, DeviceId b) const {
  const auto l = link_between(a, b);
  if (!l) {
    throw InternalError(
        fmt::format("no link from '{}' to '{}'", devices_[a].name, devices_[b].name));
  }
  return *l;
}

RouteCost Topology::cost_of(const std::vector<LinkId>& path) const {
  RouteCost c;
  c.bottleneck = Bandwidth{std::numeric_limits<double>::infinity()};
  for (std::size_t i = 0; i < path.size(); ++i) {
    const Link& l = links_[path[i]];
    c.latency = c.latency + l.latency;
    if (i + 1 < path.size()) {
      c.latency = c.latency + devices_[l.to].latency; // a switch (or GPU) passed through
    }
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
         (router_ ? router_->describe() : "") == (other.router_ ? other.router_->describe() : "") &&
         mesh_bandwidth_ == other.mesh_bandwidth_ && mesh_latency_ == other.mesh_latency_;
}

} // namespace collsim::core
