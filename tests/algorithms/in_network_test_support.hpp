#pragma once
// Helpers shared by the in-network algorithm tests (block H): cluster topologies with reducing
// switches, requests on them, and per-participant traffic (ranks and agents).

#include "algorithm_test_support.hpp"
#include "collsim/algorithms/registry.hpp"
#include "collsim/core/scenario.hpp"
#include "collsim/core/schedule.hpp"
#include "collsim/topologies/build.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace collsim::testing {

/// A cluster of `per_node` ranks per node (the last node may be partial) with `nics` NICs per node;
/// the node switches and the network switch reduce as asked.
inline core::Topology innet_cluster(std::uint32_t ranks, std::uint32_t per_node, bool node_reduces,
                                    bool network_reduces, std::uint32_t nics = 1) {
  core::ClusterSpec c;
  c.devices_per_node = per_node;
  c.nics_per_node = nics;
  c.node_switch_reduces = node_reduces;
  c.network_switch_reduces = network_reduces;
  return topologies::build_cluster(c, core::EndpointSpec{}, ranks);
}

inline algorithms::Request innet_request(core::CollectiveKind c, std::uint32_t ranks,
                                         std::uint64_t bytes,
                                         const core::Topology* topology = nullptr) {
  algorithms::Request req = allreduce_request(ranks, bytes);
  req.collective = c;
  req.topology = topology;
  return req;
}

/// Traffic of every participant: ranks, then agents.
inline std::vector<RankTraffic> participant_traffic(const core::Schedule& s) {
  std::vector<RankTraffic> out(s.participants());
  for (core::Rank r = 0; r < s.participants(); ++r) {
    RankTraffic& t = out[r];
    for (core::OpId id = s.rank_begin(r); id < s.rank_end(r); ++id) {
      const std::uint64_t len = s.length(id);
      switch (s.kind(id)) {
      case core::OpKind::send:
        ++t.sends;
        t.send_bytes += len;
        t.send_peers.push_back(s.peer(id));
        t.send_lengths.push_back(len);
        break;
      case core::OpKind::recv_reduce: t.reduced_bytes += len; [[fallthrough]];
      case core::OpKind::recv:
        ++t.recvs;
        t.recv_bytes += len;
        break;
      case core::OpKind::reduce: t.reduced_bytes += len; break;
      case core::OpKind::copy: break;
      }
    }
  }
  return out;
}

/// The refusal reason of `name` for `req` ("" when accepted).
inline std::string innet_refusal(const algorithms::Registry& reg, core::CollectiveKind c,
                                 const std::string& name, algorithms::Request req) {
  return reg.refusal(reg.find(c, name), req);
}

} // namespace collsim::testing
