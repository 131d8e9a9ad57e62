#pragma once
// The largest bus bandwidth a topology's wires allow for a result row: what the preset and
// property tests hold every simulated row to.

#include "collsim/core/result.hpp"
#include "collsim/core/topology.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <string>

namespace collsim::testing {

/// Sum of the bandwidths of the links leaving device d.
inline double egress(const core::Topology& t, core::DeviceId d) {
  double sum = 0.0;
  for (const core::LinkId id : t.out_links(d)) {
    sum += t.links()[id].bandwidth.bytes_per_second;
  }
  return sum;
}

/// Per node hosting ranks: its rank count and its injection bandwidth (NIC links into the network).
struct NodeShare {
  std::uint32_t ranks = 0;
  double injection = 0.0;
};

inline std::map<std::uint32_t, NodeShare> nodes_of(const core::Topology& t) {
  std::map<std::uint32_t, NodeShare> out;
  for (core::Rank r = 0; r < t.rank_count(); ++r) {
    ++out[t.node_of(r)].ranks;
  }
  for (const auto& l : t.links()) {
    const auto& from = t.devices()[l.from];
    if (from.kind == core::DeviceKind::nic && t.devices()[l.to].node == core::kNetworkNode) {
      auto it = out.find(from.node);
      if (it != out.end()) {
        it->second.injection += l.bandwidth.bytes_per_second;
      }
    }
  }
  return out;
}

inline bool in_network(const std::string& algorithm) {
  return algorithm.find("nvls") != std::string::npos ||
         algorithm.find("collnet") != std::string::npos ||
         algorithm.find("sharp") != std::string::npos;
}

/// The largest bus bandwidth (algorithm bandwidth for in-network algorithms, whose busbw is not a
/// wire rate) the topology allows for this row, B/s:
///   * every rank sends (and receives) at least busbw x time bytes (nccl-tests' busbw is defined
///   so),
///     so busbw <= the smallest total egress of a rank's device; an in-network algorithm still
///     sends its whole buffer once: algbw <= that egress;
///   * across N nodes (Patarasuk & Yuan 2009 with nodes as participants): allreduce and allgather
///     move at least (N-1)/N of the data (twice for allreduce) through each node's NICs, so
///     busbw <= injection x N(p-1) / ((N-1)p); alltoall sends ppn x (p-ppn)/p of the data out of
///     a node of ppn ranks; in-network: algbw <= injection.
/// across_nodes = false leaves the second bound out: for an engine that does not share a node's
/// NICs among its ranks (loggp: no contention), it holds only with one rank per node.
inline double busbw_bound(const core::Topology& t, const core::ResultRow& row,
                          bool across_nodes = true) {
  if (t.is_full_mesh()) { // p - 1 implicit links per rank
    return t.route_cost(0, 1).bottleneck.bytes_per_second * (row.ranks - 1);
  }
  double rank_egress = std::numeric_limits<double>::infinity();
  for (core::Rank r = 0; r < t.rank_count(); ++r) {
    rank_egress = std::min(rank_egress, egress(t, t.device_of(r)));
  }
  double b = rank_egress;
  const auto nodes = nodes_of(t);
  const double p = row.ranks;
  const double n_nodes = static_cast<double>(nodes.size());
  if (nodes.size() >= 2 && across_nodes) {
    for (const auto& [node, share] : nodes) {
      const double inj = share.injection;
      if (in_network(row.algorithm)) {
        b = std::min(b, inj);
      } else if (row.collective == core::CollectiveKind::allreduce ||
                 row.collective == core::CollectiveKind::allgather) {
        b = std::min(b, inj * n_nodes * (p - 1) / ((n_nodes - 1) * p));
      } else if (row.collective == core::CollectiveKind::alltoall) {
        const double ppn = share.ranks;
        b = std::min(b, inj * (p - 1) / (ppn * (p - ppn)));
      }
    }
  }
  return b;
}

} // namespace collsim::testing
