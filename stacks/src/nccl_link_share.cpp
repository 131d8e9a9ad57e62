#include "nccl_link_share.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <vector>

namespace collsim::stacks::detail {

double intra_node_link_share(const core::Schedule& schedule, const core::Topology& topology) {
  if (topology.is_full_mesh()) {
    return 1.0; // every pair has its own link: nothing in the middle to share
  }
  // The sender-receiver pairs inside a node. Between nodes NCCL's graph search spreads channels
  // over the NICs in a way collsim's rings and trees do not copy (the rail each channel takes),
  // so shares of NICs and fabric links are left to the simgrid engine.
  const std::uint32_t ranks = std::min(schedule.ranks(), topology.rank_count());
  std::set<std::pair<core::Rank, core::Rank>> pairs;
  for (core::Rank r = 0; r < ranks; ++r) {
    for (core::OpId id = schedule.rank_begin(r); id < schedule.rank_end(r); ++id) {
      if (schedule.kind(id) != core::OpKind::send) {
        continue;
      }
      const core::Rank peer = schedule.peer(id);
      if (peer < ranks && peer != r && topology.node_of(r) == topology.node_of(peer)) {
        pairs.emplace(r, peer);
      }
    }
  }
  std::vector<std::vector<core::LinkId>> routes;
  std::map<core::LinkId, std::set<core::LinkId>> ports; // middle link -> first links crossing it
  for (const auto& [a, b] : pairs) {
    routes.push_back(topology.route(a, b));
    const std::vector<core::LinkId>& path = routes.back();
    for (std::size_t i = 1; i + 1 < path.size(); ++i) {
      ports[path[i]].insert(path.front());
    }
  }
  double share = 1.0;
  for (const std::vector<core::LinkId>& path : routes) {
    if (path.size() < 3) {
      continue;
    }
    const double bottleneck = topology.cost_of(path).bottleneck.bytes_per_second;
    for (std::size_t i = 1; i + 1 < path.size(); ++i) {
      const auto n = static_cast<double>(ports[path[i]].size());
      share =
          std::min(share, topology.links()[path[i]].bandwidth.bytes_per_second / n / bottleneck);
    }
  }
  return share;
}

} // namespace collsim::stacks::detail
