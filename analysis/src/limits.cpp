// The physical bus-bandwidth limit (limits.hpp).

#include "collsim/analysis/limits.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <map>
#include <set>
#include <vector>

namespace collsim::analysis {
namespace {

/// The kind of the narrowest link on the route from a to b ("nvlink", "ib", ...).
std::string bottleneck_kind(const core::Topology& t, core::Rank a, core::Rank b) {
  if (t.is_full_mesh()) {
    return "link";
  }
  const std::vector<core::LinkId> path = t.route(a, b);
  const core::Link* narrowest = nullptr;
  for (core::LinkId id : path) {
    const core::Link& l = t.links()[id];
    if (narrowest == nullptr ||
        l.bandwidth.bytes_per_second < narrowest->bandwidth.bytes_per_second) {
      narrowest = &l;
    }
  }
  return narrowest == nullptr ? "link" : std::string(core::to_string(narrowest->kind));
}

} // namespace

BusbwLimit busbw_limit(const core::Topology& t) {
  const std::uint32_t p = t.rank_count();
  if (p < 2) {
    return {core::Bandwidth{0}, "one rank: no communication"};
  }
  if (t.is_full_mesh()) {
    const double bw = t.route_cost(0, 1).bottleneck.bytes_per_second;
    return {core::Bandwidth{bw}, fmt::format("the rank-to-rank link ({:.1f} GB/s)", bw / 1e9)};
  }
  std::map<std::uint32_t, std::vector<core::Rank>> by_node;
  for (core::Rank r = 0; r < p; ++r) {
    by_node[t.node_of(r)].push_back(r);
  }
  double best = 0.0;
  std::string reason;
  bool have = false;
  // A rank's own links: the widest route to a neighbour of its node (checked against the node's
  // first rank and the next rank, which covers rings and stars without pricing every pair).
  for (const auto& [node, ranks] : by_node) {
    if (ranks.size() < 2) {
      continue;
    }
    for (std::size_t i = 0; i < ranks.size(); ++i) {
      const core::Rank a = ranks[i];
      double widest = 0.0;
      core::Rank via = a;
      for (core::Rank b : {ranks[(i + 1) % ranks.size()], ranks[i == 0 ? 1 : 0]}) {
        const double bw = t.route_cost(a, b).bottleneck.bytes_per_second;
        if (bw > widest) {
          widest = bw;
          via = b;
        }
      }
      // On a mesh (DGX-1's NVLink cube-mesh, a 4-GPU board's all-to-all NVLinks) a GPU sends to
      // several neighbours at once, each over its own links: its links of the kind its widest
      // route leaves by, together (a single link into an NVSwitch or a PCIe switch is the route).
      double together = 0.0;
      const std::vector<core::LinkId> path = t.route(a, via); // empty when via is a itself
      if (!path.empty()) {
        const core::LinkKind kind = t.links()[path.front()].kind;
        for (const core::LinkId id : t.out_links(t.device_of(a))) {
          if (t.links()[id].kind == kind) {
            together += t.links()[id].bandwidth.bytes_per_second;
          }
        }
      }
      if (!have || std::max(widest, together) < best) {
        have = true;
        best = std::max(widest, together);
        reason = together > widest ? fmt::format("a rank's {} links inside its node ({:.1f} GB/s)",
                                                 bottleneck_kind(t, a, via), together / 1e9)
                                   : fmt::format("a rank's {} route inside its node ({:.1f} GB/s)",
                                                 bottleneck_kind(t, a, via), widest / 1e9);
      }
    }
  }
  // The node's way out: the sum over its NICs of the route to another node.
  if (by_node.size() > 1) {
    for (const auto& [node, ranks] : by_node) {
      const core::Rank other = by_node.begin()->first == node
                                   ? std::next(by_node.begin())->second[0]
                                   : by_node.begin()->second[0];
      std::set<core::DeviceId> nics;
      double sum = 0.0;
      std::string kind;
      for (core::Rank a : ranks) {
        const core::DeviceId nic = t.devices()[t.device_of(a)].egress;
        if (!nics.insert(nic).second) {
          continue;
        }
        sum += t.route_cost(a, other).bottleneck.bytes_per_second;
        kind = bottleneck_kind(t, a, other);
      }
      if (!have || sum < best) {
        have = true;
        best = sum;
        reason = fmt::format("a node's way out: {} {} route{} ({:.1f} GB/s)", nics.size(), kind,
                             nics.size() == 1 ? "" : "s", sum / 1e9);
      }
    }
  }
  return {core::Bandwidth{best}, reason};
}

} // namespace collsim::analysis
