#include "collsim/analysis/collapse.hpp"

#include "collsim/core/verify.hpp"

#include <algorithm>
#include <bit>
#include <set>
#include <vector>

namespace collsim::analysis {
namespace {

using core::OpId;
using core::OpKind;
using core::Rank;

/// The partners of one representative's messages in a schedule collapsed to the algorithm's own
/// period m: rank x's partners are those of representative x mod m, moved by x - x mod m.
struct Partners {
  std::vector<Rank> to;   ///< send partners
  std::vector<Rank> from; ///< receive partners
};

std::vector<Partners> partners_of(const core::Schedule& base) {
  std::vector<Partners> out;
  for (Rank q = 0; q < base.ranks(); ++q) {
    std::set<Rank> to;
    std::set<Rank> from;
    for (OpId id = base.rank_begin(q); id < base.rank_end(q); ++id) {
      const OpKind k = base.kind(id);
      if (k == OpKind::send) {
        to.insert(base.route_peer(id));
      } else if (k == OpKind::recv || k == OpKind::recv_reduce) {
        from.insert(base.route_peer(id));
      }
    }
    out.push_back({{to.begin(), to.end()}, {from.begin(), from.end()}});
  }
  return out;
}

/// What the loggp engine reads of a route from a to b.
struct RouteSig {
  double latency;
  double bottleneck;
  bool same_node;
  bool operator==(const RouteSig&) const = default;
};

class Checker {
public:
  /// `base`: the schedule collapsed to the algorithm's period.
  Checker(const core::Topology& t, const core::Schedule& base, core::SymmetryKind kind,
          std::uint32_t p)
      : t_(t), kind_(kind), p_(p), period_(base.ranks()), partners_(partners_of(base)),
        per_link_(base.header().protocol.port_per_link && !t.is_full_mesh()) {}

  /// Whether k programs give exact times.
  [[nodiscard]] bool admits(std::uint32_t k) const {
    if (per_link_ && !nodes_closed(k)) {
      return false;
    }
    for (Rank x = 0; x < p_; ++x) {
      const Rank r = x % k; // x's representative; x = shift(x - r) of r
      if (x == r) {
        continue;
      }
      if (!same_endpoint(x, r)) {
        return false;
      }
      if (t_.is_full_mesh()) {
        continue; // every route alike; ports by peer, which the shift carries along
      }
      // x and r both run base program q, moved by x - q and r - q.
      const Rank q = x % period_;
      const Partners& ps = partners_[q];
      for (const Rank b : ps.to) {
        if (!(sig(x, image(x - q, b)) == sig(r, image(r - q, b)))) {
          return false;
        }
      }
      for (const Rank b : ps.from) {
        if (!(sig(image(x - q, b), x) == sig(image(r - q, b), r))) {
          return false;
        }
      }
      if (per_link_ && ports(x) != ports(r)) {
        return false;
      }
    }
    return true;
  }

private:
  [[nodiscard]] Rank image(Rank shift, Rank b) const {
    return core::symmetry_image(kind_, p_, shift, b);
  }
  [[nodiscard]] RouteSig sig(Rank a, Rank b) const {
    const core::RouteCost c = t_.route_cost(a, b);
    return {c.latency.value, c.bottleneck.bytes_per_second, t_.node_of(a) == t_.node_of(b)};
  }
  [[nodiscard]] bool same_endpoint(Rank x, Rank r) const {
    if (t_.is_full_mesh()) {
      return t_.endpoint(x) == t_.endpoint(r);
    }
    const core::Device& dx = t_.devices()[t_.device_of(x)];
    const core::Device& dr = t_.devices()[t_.device_of(r)];
    return dx.endpoint == dr.endpoint && dx.kind == dr.kind;
  }
  /// Which of x's messages share a port (the first link of a send's route, the last of a
  /// receive's), as a pattern: each message's index of the first message on its port.
  [[nodiscard]] std::vector<std::uint32_t> ports(Rank x) const {
    std::vector<core::LinkId> links;
    const Rank q = x % period_;
    for (const Rank b : partners_[q].to) {
      const auto path = t_.route(x, image(x - q, b));
      links.push_back(path.empty() ? core::LinkId(-1) : path.front());
    }
    for (const Rank b : partners_[q].from) {
      const auto path = t_.route(image(x - q, b), x);
      links.push_back(path.empty() ? core::LinkId(-1) : path.back());
    }
    std::vector<std::uint32_t> pattern;
    for (std::size_t i = 0; i < links.size(); ++i) {
      pattern.push_back(static_cast<std::uint32_t>(std::find(links.begin(), links.end(), links[i]) -
                                                   links.begin()));
    }
    return pattern;
  }
  /// With a port per link the loggp engine books links inside a node that several ports cross
  /// (middle_links.hpp): every rank on a representative's node must be a representative.
  [[nodiscard]] bool nodes_closed(std::uint32_t k) const {
    std::set<std::uint32_t> nodes;
    for (Rank r = 0; r < k; ++r) {
      nodes.insert(t_.node_of(r));
    }
    for (Rank x = k; x < p_; ++x) {
      if (nodes.count(t_.node_of(x)) != 0) {
        return false;
      }
    }
    return true;
  }

  const core::Topology& t_;
  core::SymmetryKind kind_;
  std::uint32_t p_;
  std::uint32_t period_;
  std::vector<Partners> partners_; // per program of the base schedule
  bool per_link_;
};

/// Whether the collapsed schedule's matching is the full schedule's: FIFO per representative pair
/// merges the full schedule's connections into a class's, which keeps their order only if every
/// message lands on a receive that, moved into its receiver's frame, is from its sender.
bool matches_full(const core::Schedule& s) {
  const core::Collapse& c = s.header().collapse;
  const core::Matching m = core::match_messages(s);
  if (m.unmatched != 0) {
    return false;
  }
  for (Rank a = 0; a < s.ranks(); ++a) {
    for (OpId id = s.rank_begin(a); id < s.rank_end(a); ++id) {
      if (s.kind(id) != OpKind::send) {
        continue;
      }
      const Rank b = s.route_peer(id); // the receiver; s.peer(id) its representative
      const OpId recv = m.partner[id];
      const Rank shift = b - s.peer(id);
      if (core::symmetry_image(c.kind, c.ranks, shift, s.route_peer(recv)) != a) {
        return false;
      }
    }
  }
  return true;
}

} // namespace

std::optional<core::Schedule> collapse_programs(const algorithms::AlgorithmInfo& algo,
                                                const algorithms::Request& request,
                                                const core::Topology& topology,
                                                const CollapsedBuilder& build) {
  const std::uint32_t p = request.ranks;
  if (!algo.symmetry || p < 2 || topology.rank_count() < p || !request.arrivals.empty() ||
      !request.counts.empty()) {
    return std::nullopt;
  }
  const algorithms::Symmetry sym = algo.symmetry(request);
  const core::SymmetryKind kind = sym.kind;
  if (kind == core::SymmetryKind::none) {
    return std::nullopt;
  }
  if (sym.period == 0 || p % sym.period != 0 || sym.period >= p) {
    return std::nullopt;
  }
  core::Schedule one = build(sym.period);
  if (!one.header().agents.empty() || !one.header().collapse.active()) {
    return std::nullopt; // the stack brought in agents of its own (host staging): run in full
  }
  const Checker checker(topology, one, kind, p);
  // Candidates in increasing order; a program costs one.op_count() operations.
  const std::uint64_t most = core::Schedule::kMaxOps / std::max<std::size_t>(one.op_count(), 1);
  for (std::uint64_t k = sym.period; k < p && k <= most * sym.period; k += sym.period) {
    const bool shape =
        p % k == 0 && (kind != core::SymmetryKind::xor_blocks || std::has_single_bit(k));
    if (!shape || !checker.admits(static_cast<std::uint32_t>(k))) {
      continue;
    }
    core::Schedule s = k == sym.period ? one : build(static_cast<std::uint32_t>(k));
    if (matches_full(s)) {
      return s;
    }
  }
  return std::nullopt;
}

} // namespace collsim::analysis
