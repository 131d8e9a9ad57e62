// NCCL's rings on nodes whose GPUs are joined by direct NVLinks without a switch (DGX-1's
// hybrid cube-mesh, 4-GPU boards with NVLink between every pair).
//
// NCCL's topology search (src/graph/search.cc ncclTopoSearchRec; rings.cc) builds each ring
// channel from GPU-to-GPU hops of the best path type it can sustain, NVLink first, and subtracts
// each ring's bandwidth from the links it uses, so later rings take other links: on DGX-1 the
// "three interwoven rings of single NVLink connections" in both directions [hardware.md S3]
// give six rings on disjoint links. A fixed rank order (0, 1, ..., 7) would instead cross pairs
// with no NVLink (3-4 and 7-0 on DGX-1) and put every channel on the same links.
//
// Here: on one node, the directed Hamiltonian cycles of the GPUs over direct NVLinks are
// enumerated (nodes of at most kMaxMesh GPUs, at most kMaxCycles of them); across nodes, for
// channel c the Hamiltonian paths from local GPU c to local GPU c - 1 (mod m), the entry and
// exit ring_order gives it, so that channels still cross the network through different GPUs
// and NICs. Channel c takes the candidate that keeps the most loaded link least loaded, a link's
// load being the channels on it over its NVLink count (ties: the smaller total, then the first
// found, so the choice is deterministic).

#include "nccl_support.hpp"

#include <algorithm>
#include <limits>
#include <vector>

namespace collsim::algorithms::nccl {
namespace {

constexpr std::size_t kMaxMesh = 12;
constexpr std::size_t kMaxCycles = 50000;

/// links[a][b]: the NVLinks from local GPU a to local GPU b (a link's bandwidth over the
/// smallest NVLink link's; 0: none).
using LinkCounts = std::vector<std::vector<double>>;

LinkCounts nvlink_counts(const core::Topology& t, const std::vector<core::Rank>& members) {
  const std::size_t m = members.size();
  LinkCounts out(m, std::vector<double>(m, 0.0));
  double unit = std::numeric_limits<double>::infinity();
  for (std::size_t a = 0; a < m; ++a) {
    for (std::size_t b = 0; b < m; ++b) {
      if (a == b) {
        continue;
      }
      const auto l = t.link_between(t.device_of(members[a]), t.device_of(members[b]));
      if (l && t.links()[*l].kind == core::LinkKind::nvlink) {
        out[a][b] = t.links()[*l].bandwidth.bytes_per_second;
        unit = std::min(unit, out[a][b]);
      }
    }
  }
  for (auto& row : out) {
    for (double& x : row) {
      x = x > 0.0 ? x / unit : 0.0;
    }
  }
  return out;
}

/// Directed Hamiltonian paths over direct links from local GPU `from` to local GPU `to`
/// (`to` == kNone: to any GPU); `closed`: only those whose last GPU also links back to `from`
/// (a cycle, for a ring that stays in the node).
std::vector<std::vector<std::uint32_t>> paths(const LinkCounts& links, std::uint32_t from,
                                              std::uint32_t to, bool closed) {
  const auto m = static_cast<std::uint32_t>(links.size());
  std::vector<std::vector<std::uint32_t>> out;
  std::vector<std::uint32_t> path{from};
  std::vector<bool> used(m, false);
  used[from] = true;
  // Depth-first, next GPU in ascending order.
  const auto search = [&](const auto& self) -> void {
    if (out.size() >= kMaxCycles) {
      return;
    }
    const std::uint32_t last = path.back();
    if (path.size() == m) {
      if ((to == kNone || last == to) && (!closed || links[last][from] > 0.0)) {
        out.push_back(path);
      }
      return;
    }
    for (std::uint32_t next = 0; next < m; ++next) {
      if (!used[next] && links[last][next] > 0.0 && (next != to || path.size() + 1 == m)) {
        used[next] = true;
        path.push_back(next);
        self(self);
        path.pop_back();
        used[next] = false;
      }
    }
  };
  search(search);
  return out;
}

/// Per channel, the node's local order, or empty when the node has no direct NVLink path for
/// its rings. A ring that stays in the node (`alone`) follows a cycle; a ring that crosses nodes
/// enters channel c's node at local GPU c mod m and leaves at c - 1 mod m, as ring_order, so the
/// channels still spread over the GPUs' NICs (any entry when no path ends there).
std::vector<std::vector<std::uint32_t>> node_orders(const core::Topology& t,
                                                    const std::vector<core::Rank>& members,
                                                    std::uint32_t channels, bool alone) {
  const auto m = static_cast<std::uint32_t>(members.size());
  if (m < 3 || m > kMaxMesh) {
    return {};
  }
  const LinkCounts links = nvlink_counts(t, members);
  const std::vector<std::vector<std::uint32_t>> cycles =
      alone ? paths(links, 0, kNone, true) : std::vector<std::vector<std::uint32_t>>{};
  if (alone && cycles.empty()) {
    return {};
  }
  std::vector<std::vector<double>> load(m, std::vector<double>(m, 0.0));
  std::vector<std::vector<std::uint32_t>> out;
  for (std::uint32_t c = 0; c < channels; ++c) {
    std::vector<std::vector<std::uint32_t>> own;
    if (!alone) {
      const std::uint32_t exit = (c + m - 1) % m;
      own = paths(links, c % m, exit, false);
      for (std::uint32_t s = 0; own.empty() && s < m; ++s) {
        if (s != exit) {
          own = paths(links, s, exit, false);
        }
      }
      if (own.empty()) {
        return {};
      }
    }
    const auto& candidates = alone ? cycles : own;
    const std::size_t hops = alone ? m : m - 1;
    std::size_t best = 0;
    double best_peak = std::numeric_limits<double>::infinity();
    double best_sum = std::numeric_limits<double>::infinity();
    for (std::size_t k = 0; k < candidates.size(); ++k) {
      double peak = 0.0;
      double sum = 0.0;
      const auto& order = candidates[k];
      for (std::size_t i = 0; i < hops; ++i) {
        const std::uint32_t a = order[i];
        const std::uint32_t b = order[(i + 1) % m];
        const double after = load[a][b] + 1.0 / links[a][b];
        peak = std::max(peak, after);
        sum += after;
      }
      if (peak < best_peak - 1e-12 || (peak < best_peak + 1e-12 && sum < best_sum - 1e-12)) {
        best = k;
        best_peak = peak;
        best_sum = sum;
      }
    }
    std::vector<std::uint32_t> order = candidates[best];
    for (std::size_t i = 0; i < hops; ++i) {
      load[order[i]][order[(i + 1) % m]] += 1.0 / links[order[i]][order[(i + 1) % m]];
    }
    if (alone) {
      std::rotate(order.begin(), order.begin() + c % m, order.end()); // as ring_order rotates
    }
    out.push_back(std::move(order));
  }
  return out;
}

} // namespace

std::vector<Ring> rings(const Request& req, const detail::NodeLayout& layout,
                        std::uint32_t channels) {
  std::vector<Ring> out = rings(layout, channels);
  if (req.topology == nullptr || req.topology->is_full_mesh() || channels == 0) {
    return out;
  }
  std::vector<std::vector<std::vector<std::uint32_t>>> per_node;
  bool any = false;
  const bool alone = layout.nodes() == 1;
  for (const auto& members : layout.members) {
    per_node.push_back(node_orders(*req.topology, members, channels, alone));
    any = any || !per_node.back().empty();
  }
  if (!any) {
    return out;
  }
  for (std::uint32_t c = 0; c < channels; ++c) {
    Ring& ring = out[c];
    ring.order.clear();
    for (std::size_t v = 0; v < layout.members.size(); ++v) {
      const auto& members = layout.members[v];
      const std::size_t m = members.size();
      for (std::size_t j = 0; j < m; ++j) {
        ring.order.push_back(per_node[v].empty() ? members[(c + j) % m]
                                                 : members[per_node[v][c][j]]);
      }
    }
    for (std::uint32_t i = 0; i < ring.order.size(); ++i) {
      ring.pos[ring.order[i]] = i;
    }
  }
  return out;
}

} // namespace collsim::algorithms::nccl
