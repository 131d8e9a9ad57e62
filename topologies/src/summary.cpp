// Topology summaries (docs/topology.md). The bisection is a max-flow (Boost.Graph push-relabel,
// Goldberg & Tarjan 1988) on the device graph, link bandwidths as integer capacities in bytes/s:
// a super source feeds the ranks' devices of the first half of the nodes, the ranks' devices of
// the second half drain into a super sink. The super edges carry the device's total out (in)
// capacity, which no flow can exceed, so they act as infinite without risking overflow.

#include "collsim/topologies/summary.hpp"

#include "collsim/core/errors.hpp"

#include <algorithm>
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/push_relabel_max_flow.hpp>
#include <cmath>
#include <fmt/format.h>
#include <unordered_map>
#include <utility>

namespace collsim::topologies {
namespace {

using core::DeviceId;
using core::LinkId;
using core::Rank;

std::string trimmed(double v) {
  std::string s = fmt::format("{:.3f}", v);
  while (!s.empty() && s.back() == '0') {
    s.pop_back();
  }
  if (!s.empty() && s.back() == '.') {
    s.pop_back();
  }
  return s == "-0" ? std::string("0") : s;
}

/// SplitMix64 (Steele, Lea & Flood 2014): a fixed-seed sequence, so samples are reproducible.
struct SplitMix {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
};

using FlowTraits = boost::adjacency_list_traits<boost::vecS, boost::vecS, boost::directedS>;
using FlowGraph = boost::adjacency_list<
    boost::vecS, boost::vecS, boost::directedS, boost::no_property,
    boost::property<
        boost::edge_capacity_t, std::int64_t,
        boost::property<boost::edge_residual_capacity_t, std::int64_t,
                        boost::property<boost::edge_reverse_t, FlowTraits::edge_descriptor>>>>;

std::int64_t capacity_of(core::Bandwidth bw) {
  if (!(bw.bytes_per_second > 0.0)) {
    return 0;
  }
  // 10^15 B/s (1 PB/s) per link keeps sums over a million links far from overflow.
  return std::llround(std::min(bw.bytes_per_second, 1e15));
}

/// The max-flow from the devices `from` to the devices `to` (disjoint sets), in bytes/s, over the
/// links between devices that are `usable`.
std::int64_t max_flow(const core::Topology& t, const std::vector<bool>& usable,
                      const std::vector<DeviceId>& from, const std::vector<DeviceId>& to) {
  const auto n = t.devices().size();
  FlowGraph g(n + 2);
  const auto source = static_cast<FlowGraph::vertex_descriptor>(n);
  const auto sink = static_cast<FlowGraph::vertex_descriptor>(n + 1);
  auto cap = boost::get(boost::edge_capacity, g);
  auto rev = boost::get(boost::edge_reverse, g);
  const auto add = [&](std::size_t u, std::size_t v, std::int64_t c) {
    const auto e = boost::add_edge(u, v, g).first;
    const auto r = boost::add_edge(v, u, g).first;
    cap[e] = c;
    cap[r] = 0;
    rev[e] = r;
    rev[r] = e;
  };
  std::vector<std::int64_t> out_cap(n, 0);
  std::vector<std::int64_t> in_cap(n, 0);
  for (const core::Link& l : t.links()) {
    if (!usable[l.from] || !usable[l.to]) {
      continue;
    }
    const std::int64_t c = capacity_of(l.bandwidth);
    add(l.from, l.to, c);
    out_cap[l.from] += c;
    in_cap[l.to] += c;
  }
  for (const DeviceId d : from) {
    add(source, d, out_cap[d]);
  }
  for (const DeviceId d : to) {
    add(d, sink, in_cap[d]);
  }
  return boost::push_relabel_max_flow(g, source, sink);
}

std::vector<DeviceId> unique_devices(const core::Topology& t, const std::vector<Rank>& ranks) {
  std::vector<DeviceId> out;
  out.reserve(ranks.size());
  for (const Rank r : ranks) {
    out.push_back(t.device_of(r));
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

void measure(const core::Topology& t, Rank a, Rank b, Diameter& d) {
  const core::RouteCost c = t.route_cost(a, b);
  d.links = std::max(d.links, c.hops);
  d.latency = std::max(d.latency, c.latency);
  ++d.pairs;
}

Diameter diameter(const core::Topology& t, const std::vector<std::uint32_t>& nodes,
                  const std::map<std::uint32_t, std::vector<Rank>>& ranks_of,
                  const SummaryOptions& o) {
  Diameter d;
  const std::uint32_t p = t.rank_count();
  if (p <= o.all_pairs_ranks) {
    for (Rank a = 0; a < p; ++a) {
      for (Rank b = a + 1; b < p; ++b) {
        measure(t, a, b, d);
      }
    }
    d.method = "every pair of ranks";
    return d;
  }
  // Pairs inside the first node, then one representative (the lowest rank) per node.
  const std::vector<Rank>& first = ranks_of.at(nodes.front());
  const auto inside = static_cast<std::uint32_t>(std::min<std::size_t>(first.size(), o.node_ranks));
  for (std::uint32_t i = 0; i < inside; ++i) {
    for (std::uint32_t j = i + 1; j < inside; ++j) {
      measure(t, first[i], first[j], d);
    }
  }
  const std::string node_part =
      first.size() <= o.node_ranks
          ? fmt::format("every pair of ranks on node {}", nodes.front())
          : fmt::format("every pair of the first {} ranks of node {}", o.node_ranks, nodes.front());
  d.sampled = first.size() > o.node_ranks;
  const auto m = static_cast<std::uint32_t>(nodes.size());
  std::vector<Rank> reps;
  reps.reserve(m);
  for (const std::uint32_t node : nodes) {
    reps.push_back(ranks_of.at(node).front());
  }
  const auto rep = [&](std::uint32_t i) { return reps[i]; };
  if (m <= o.all_pairs_nodes) {
    for (std::uint32_t i = 0; i < m; ++i) {
      for (std::uint32_t j = i + 1; j < m; ++j) {
        measure(t, rep(i), rep(j), d);
      }
    }
    d.method = fmt::format("{}, and every pair of nodes (the lowest rank of each)", node_part);
    return d;
  }
  SplitMix rng{0x636f6c6c73696dULL}; // "collsim"
  for (std::uint32_t k = 0; k < o.sampled_pairs; ++k) {
    const auto i = static_cast<std::uint32_t>(rng.next() % m);
    auto j = static_cast<std::uint32_t>(rng.next() % (m - 1));
    if (j >= i) {
      ++j;
    }
    measure(t, rep(std::min(i, j)), rep(std::max(i, j)), d);
  }
  d.sampled = true;
  d.method = fmt::format("{}, and {} node pairs drawn at random with a fixed seed (the lowest "
                         "rank of each node)",
                         node_part, o.sampled_pairs);
  return d;
}

TopologySummary summarize_full_mesh(const core::Topology& t) {
  TopologySummary s;
  const std::uint32_t p = t.rank_count();
  s.ranks = p;
  s.nodes = p;
  s.total_nodes = p;
  s.full_mesh = true;
  s.routing = "full mesh (every pair of ranks has its own link)";
  if (p > 0) {
    s.devices[core::DeviceKind::endpoint] = p;
  }
  if (p < 2) {
    s.diameter.method = "a single rank";
    return s;
  }
  const core::RouteCost c = t.route_cost(0, 1);
  s.mesh_bandwidth = c.bottleneck;
  s.mesh_latency = c.latency;
  const double bw = c.bottleneck.bytes_per_second;
  const std::uint64_t directed = static_cast<std::uint64_t>(p) * (p - 1);
  s.links[core::LinkKind::generic] =
      LinkKindSummary{directed, directed / 2, core::Bandwidth{static_cast<double>(directed) * bw}};
  s.injection_min = s.injection_max = core::Bandwidth{(p - 1.0) * bw};
  const double half = p / 2;
  s.bisection = core::Bandwidth{half * (p - half) * bw};
  s.diameter.links = 1;
  s.diameter.latency = c.latency;
  s.diameter.pairs = directed / 2;
  s.diameter.method = "every pair of ranks has its own link";
  return s;
}

} // namespace

std::string format_gbps(core::Bandwidth bw) {
  if (std::isinf(bw.bytes_per_second)) {
    return "unlimited";
  }
  return trimmed(bw.gbps()) + " GB/s";
}

std::string format_us(core::Seconds s) {
  return trimmed(s.us()) + " us";
}

std::vector<LinkId> duplex_partners(const core::Topology& t) {
  const auto& links = t.links();
  std::vector<LinkId> partner(links.size(), kNoLink);
  // Links sorted by (from, to), then id; a link takes the first unmatched equal reverse link.
  const auto key = [](DeviceId a, DeviceId b) { return (static_cast<std::uint64_t>(a) << 32) | b; };
  std::vector<std::pair<std::uint64_t, LinkId>> by_ends(links.size());
  for (LinkId id = 0; id < links.size(); ++id) {
    by_ends[id] = {key(links[id].from, links[id].to), id};
  }
  std::sort(by_ends.begin(), by_ends.end());
  for (LinkId id = 0; id < links.size(); ++id) {
    if (partner[id] != kNoLink) {
      continue;
    }
    const core::Link& l = links[id];
    const std::uint64_t back_key = key(l.to, l.from);
    for (auto it = std::lower_bound(by_ends.begin(), by_ends.end(), std::make_pair(back_key, 0U));
         it != by_ends.end() && it->first == back_key; ++it) {
      const LinkId r = it->second;
      const core::Link& back = links[r];
      if (r != id && partner[r] == kNoLink && back.bandwidth == l.bandwidth &&
          back.latency == l.latency && back.kind == l.kind) {
        partner[id] = r;
        partner[r] = id;
        break;
      }
    }
  }
  return partner;
}

std::string device_name(const core::Topology& t, DeviceId d) {
  const std::string& name = t.devices()[d].name;
  if (!name.empty()) {
    return name;
  }
  return t.is_full_mesh() ? fmt::format("rank{}", d) : fmt::format("device{}", d);
}

TopologySummary summarize(const core::Topology& t, const SummaryOptions& options) {
  if (t.is_full_mesh()) {
    return summarize_full_mesh(t);
  }
  TopologySummary s;
  s.ranks = t.rank_count();
  s.routing = t.router() != nullptr ? t.router()->describe() : "shortest path";
  const auto& devices = t.devices();
  std::vector<std::uint32_t> all_nodes;
  for (const core::Device& d : devices) {
    ++s.devices[d.kind];
    if (d.node != core::kNetworkNode) {
      all_nodes.push_back(d.node);
    }
  }
  std::sort(all_nodes.begin(), all_nodes.end());
  all_nodes.erase(std::unique(all_nodes.begin(), all_nodes.end()), all_nodes.end());
  s.total_nodes = static_cast<std::uint32_t>(all_nodes.size());

  const auto partner = duplex_partners(t);
  const auto& links = t.links();
  std::unordered_map<std::uint32_t, double> injected;
  for (LinkId id = 0; id < links.size(); ++id) {
    const core::Link& l = links[id];
    LinkKindSummary& k = s.links[l.kind];
    ++k.directed;
    k.total = core::Bandwidth{k.total.bytes_per_second + l.bandwidth.bytes_per_second};
    if (partner[id] != kNoLink && partner[id] > id) {
      ++k.duplex_pairs;
    }
    const core::Device& from = devices[l.from];
    if (from.kind == core::DeviceKind::nic && from.node != core::kNetworkNode &&
        devices[l.to].node == core::kNetworkNode) {
      injected[from.node] += l.bandwidth.bytes_per_second;
    }
  }

  std::map<std::uint32_t, std::vector<Rank>> ranks_of;
  for (Rank r = 0; r < s.ranks; ++r) {
    ranks_of[t.node_of(r)].push_back(r);
  }
  std::vector<std::uint32_t> nodes;
  for (const auto& [node, ranks] : ranks_of) {
    nodes.push_back(node);
    const auto it = injected.find(node);
    s.injection.push_back(
        NodeInjection{node, core::Bandwidth{it == injected.end() ? 0.0 : it->second}});
  }
  s.nodes = static_cast<std::uint32_t>(nodes.size());
  if (!s.injection.empty()) {
    const auto [lo, hi] = std::minmax_element(
        s.injection.begin(), s.injection.end(),
        [](const NodeInjection& a, const NodeInjection& b) { return a.bandwidth < b.bandwidth; });
    s.injection_min = lo->bandwidth;
    s.injection_max = hi->bandwidth;
  }

  if (nodes.size() >= 2) {
    std::vector<Rank> first;
    std::vector<Rank> second;
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      auto& side = i < nodes.size() / 2 ? first : second;
      const auto& r = ranks_of.at(nodes[i]);
      side.insert(side.end(), r.begin(), r.end());
    }
    // A node without ranks does not forward: hosts are not routers.
    std::vector<bool> usable(devices.size());
    for (DeviceId d = 0; d < devices.size(); ++d) {
      usable[d] = devices[d].node == core::kNetworkNode || ranks_of.count(devices[d].node) != 0;
    }
    const auto a = unique_devices(t, first);
    const auto b = unique_devices(t, second);
    const std::int64_t flow = std::min(max_flow(t, usable, a, b), max_flow(t, usable, b, a));
    s.bisection = core::Bandwidth{static_cast<double>(flow)};
  }

  if (s.ranks < 2) {
    s.diameter.method = "a single rank";
  } else {
    s.diameter = diameter(t, nodes, ranks_of, options);
  }
  return s;
}

std::vector<std::string> describe_route(const core::Topology& t, Rank a, Rank b) {
  const std::uint32_t p = t.rank_count();
  for (const Rank r : {a, b}) {
    if (r >= p) {
      throw core::UsageError(
          fmt::format("rank {} does not exist: the topology has {} ranks (0 to {})", r, p, p - 1));
    }
  }
  std::vector<std::string> out;
  if (a == b) {
    out.push_back(fmt::format("rank {} to itself: no links", a));
    return out;
  }
  const core::RouteCost cost = t.route_cost(a, b);
  if (t.is_full_mesh()) {
    out.push_back(fmt::format("{} -> {} (implicit link, {}, {})", device_name(t, t.device_of(a)),
                              device_name(t, t.device_of(b)), format_gbps(cost.bottleneck),
                              format_us(cost.latency)));
  } else {
    const auto path = t.route(a, b);
    for (std::size_t i = 0; i < path.size(); ++i) {
      const core::Link& l = t.links()[path[i]];
      std::string line =
          fmt::format("{} -> {} ({}, {}, {})", device_name(t, l.from), device_name(t, l.to),
                      core::to_string(l.kind), format_gbps(l.bandwidth), format_us(l.latency));
      const core::Seconds forwarding = t.devices()[l.to].latency;
      if (i + 1 < path.size() && forwarding.value > 0.0) {
        line += fmt::format(" + {} in {}", format_us(forwarding), device_name(t, l.to));
      }
      out.push_back(std::move(line));
    }
  }
  out.push_back(fmt::format("total: {}, bottleneck {}, {} hop{}", format_us(cost.latency),
                            format_gbps(cost.bottleneck), cost.hops, cost.hops == 1 ? "" : "s"));
  return out;
}

} // namespace collsim::topologies
