#pragma once
// What a built topology looks like, for people (`collsim topology show`, docs/topology.md): device
// and link counts, the bandwidth a node can inject into the network, the bisection bandwidth
// between the two halves of the nodes, the diameter of the routes between ranks, and the hops of
// one route.

#include "collsim/core/topology.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace collsim::topologies {

/// No duplex partner (duplex_partners).
inline constexpr core::LinkId kNoLink = 0xffffffffu;

/// The links of one kind. Links are directed: a full-duplex cable is two links.
struct LinkKindSummary {
  std::uint64_t directed = 0;     ///< directed links of this kind
  std::uint64_t duplex_pairs = 0; ///< pairs a->b, b->a of equal bandwidth and latency among them
  core::Bandwidth total;          ///< sum of the bandwidths of the directed links
  bool operator==(const LinkKindSummary&) const = default;
};

/// The bandwidth node `node` can put into the network: the sum of the links from its NICs into
/// devices of the network (Device::node == core::kNetworkNode); 0 for a node without a NIC.
struct NodeInjection {
  std::uint32_t node = 0;
  core::Bandwidth bandwidth;
  bool operator==(const NodeInjection&) const = default;
};

/// The largest route between ranks, in links and in latency (the two may come from different
/// pairs). Latency is RouteCost::latency: link latencies plus switch forwarding latencies.
struct Diameter {
  std::uint32_t links = 0;
  core::Seconds latency;
  std::uint64_t pairs = 0; ///< rank pairs whose routes were measured
  bool sampled = false;    ///< true: a sample of node pairs, so a lower bound
  std::string method;      ///< which pairs, in words
  bool operator==(const Diameter&) const = default;
};

struct TopologySummary {
  std::uint32_t ranks = 0;
  std::uint32_t nodes = 0;       ///< distinct nodes that host ranks
  std::uint32_t total_nodes = 0; ///< distinct nodes with devices (some may host no rank)
  bool full_mesh = false;
  /// Full mesh only: the bandwidth and latency of every implicit link.
  core::Bandwidth mesh_bandwidth;
  core::Seconds mesh_latency;
  std::map<core::DeviceKind, std::uint64_t> devices; ///< device count per kind
  std::map<core::LinkKind, LinkKindSummary> links;   ///< per kind (full mesh: implicit generic)
  std::vector<NodeInjection> injection;              ///< per node hosting ranks, in node order
  core::Bandwidth injection_min;                     ///< over `injection` (full mesh: (p-1) bw)
  core::Bandwidth injection_max;
  /// The minimum cut between the ranks of the first half of the nodes hosting ranks (node id
  /// order, floor(n/2) nodes) and the ranks of the other half, per direction: the smaller of the
  /// two directions' max-flows on the device graph with link bandwidths as capacities (devices of
  /// nodes without ranks excluded: hosts do not forward). Routing is ignored, so it bounds what
  /// routed traffic can reach. Empty when the ranks are on one node.
  std::optional<core::Bandwidth> bisection;
  Diameter diameter;
  std::string routing; ///< the network's routing (NetworkRouter::describe), or "shortest path"
  bool operator==(const TopologySummary&) const = default;
};

/// Which rank pairs the diameter measures. Routes cost O(hops) on fabrics with a NetworkRouter
/// but a breadth-first search elsewhere, so the pair counts bound the time a summary takes.
struct SummaryOptions {
  std::uint32_t all_pairs_ranks = 256; ///< up to this many ranks: every pair of ranks
  std::uint32_t all_pairs_nodes = 512; ///< up to this many nodes: every pair of nodes
  std::uint32_t sampled_pairs = 4096;  ///< beyond: this many node pairs, drawn with a fixed seed
  std::uint32_t node_ranks = 512;      ///< pairs inside the first node: among its first this many
};

/// Summarises `t` (see TopologySummary for the definitions).
TopologySummary summarize(const core::Topology& t, const SummaryOptions& options = {});

/// For each link, the link that carries the opposite direction with the same bandwidth, latency
/// and kind (kNoLink: none). Partners are matched in link id order, so parallel links pair up
/// deterministically; partner[partner[l]] == l.
std::vector<core::LinkId> duplex_partners(const core::Topology& t);

/// The name printers use for device d ("rank3" on a full mesh, whose devices have no names).
std::string device_name(const core::Topology& t, core::DeviceId d);

/// The route from rank a to rank b, one line per link
/// ("node0/gpu0 -> node0/pcie0 (pcie, 31.5 GB/s, 0.5 us)", with "+ 0.105 us in node0/pcie0" when
/// the route passes through a device with a forwarding latency), then a total line with the
/// latency, the bottleneck and the number of links. Throws core::UsageError for a rank that the
/// topology does not have.
std::vector<std::string> describe_route(const core::Topology& t, core::Rank a, core::Rank b);

/// "31.5 GB/s" (GB = 10^9 bytes), up to three decimals.
std::string format_gbps(core::Bandwidth bw);
/// "0.5 us", up to three decimals.
std::string format_us(core::Seconds s);

} // namespace collsim::topologies
