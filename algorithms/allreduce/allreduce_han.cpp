// Open MPI 5.0's coll/han allreduce (the `openmpi-5.0` stack's choice across nodes,
// docs/stacks.md): the vector cut into segments that move through a four-stage pipeline: a reduce
// inside each node to its leader, a reduce among the node leaders, a bcast among the leaders, a
// bcast inside each node.
//
// Source: Open MPI v5.0.9 ompi/mca/coll/han:
//   - coll_han_component.c: priority 35 (over coll/tuned's 30); on a communicator spanning
//     nodes every collective HAN implements dynamically runs HAN (mca_sub_components[coll]
//     [GLOBAL_COMMUNICATOR] = HAN), with coll/tuned inside nodes and libnbc between them
//     (allreduce_low_module 0 = tuned, allreduce_up_module 0 = libnbc), segments of
//     allreduce_segsize 65536 B, and the task-based, not the simple, algorithm
//     (use_simple_allreduce false);
//   - coll_han_allreduce.c mca_coll_han_allreduce_intra: per segment t0 a low (intra-node) reduce,
//     t1 an up (inter-node) ireduce, t2 an up ibcast, t3 a low bcast; task t3 of segment s runs
//     beside t2 of s+1, t1 of s+2 and t0 of s+3: four segments in flight. HAN takes only
//     commutative operations and nodes holding the same number of ranks;
//   - libnbc's choices for the up level (nbc_ireduce.c, nbc_ibcast.c, algorithm 0): ireduce is
//     reduce-scatter + gather (collsim's reduce `rabenseifner`) for p > 2 leaders, binomial
//     otherwise; ibcast is linear up to 4 leaders, binomial below 64 KiB, chain from there.
// The low level's reduce and bcast are coll/tuned's choices for the node's ranks and a segment:
// parameters `low_reduce` and `low_bcast` (the stack's `auto` sets them from Open MPI's fixed
// rules; binomial by default).
//
// Schedule: segment s of `segment` bytes (the last shorter) composed (compose.hpp) of the four
// stages in lane s mod `depth`: on each rank a segment starts when the segment `depth` before it
// has finished there (a looser bound than HAN's lock-step tasks). Without a topology every rank
// is a node of its own: the up level alone.
//
// Cost (not exact, no closed form): about (S + 3) stage times for S segments, each stage the
// slowest of the four stages' times for one segment.

#include "allreduce/allreduce_algorithms.hpp"
#include "bcast/bcast_algorithms.hpp"
#include "bcast/bcast_reduce_trees.hpp"
#include "compose.hpp"
#include "reduce/reduce_algorithms.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace collsim::algorithms {
namespace {

using core::CollectiveKind;

constexpr const char* kName = "han";
constexpr std::int64_t kSegment = 65536; // coll_han allreduce_segsize
constexpr std::int64_t kDepth = 4;       // tasks t0..t3 in flight
constexpr std::uint64_t kMaxSegments = std::uint64_t{1} << 16;

/// libnbc's ireduce (nbc_ireduce.c, algorithm 0) for p leaders (commutative operations; collsim
/// assumes count >= p's power of two, true for a segment of 4-byte elements).
AlgorithmInfo up_reduce(std::uint32_t p) {
  return p > 2 ? describe_reduce_rabenseifner() : describe_reduce_binomial();
}

/// libnbc's ibcast (nbc_ibcast.c, algorithm 0) for p leaders and s bytes.
AlgorithmInfo up_bcast(std::uint32_t p, std::uint64_t s) {
  if (p <= 4) {
    return describe_bcast_linear();
  }
  return s < 65536 ? describe_bcast_binomial() : describe_bcast_chain();
}

compose::Plan plan_han(const Request& req) {
  compose::Plan out(req.ranks);
  const detail::NodeLayout layout = detail::node_layout(req);
  if (!layout.uniform()) {
    out.refusal = "HAN needs the same number of ranks on every node (coll_han_allreduce.c); "
                  "Open MPI falls back to coll/tuned";
    return out;
  }
  const std::uint64_t n = req.bytes.value;
  const auto segment = static_cast<std::uint64_t>(detail::param_or(req, "segment", kSegment));
  const auto depth = static_cast<std::uint32_t>(detail::param_or(req, "depth", kDepth));
  if (n > 0 && (n + segment - 1) / segment > kMaxSegments) {
    out.refusal =
        fmt::format("{} B in {} B segments is more than {} segments", n, segment, kMaxSegments);
    return out;
  }
  compose::Level low_reduce(req, "low_reduce", CollectiveKind::reduce);
  compose::Level low_bcast(req, "low_bcast", CollectiveKind::bcast);
  const std::vector<core::Rank> leaders = compose::leaders(layout, 0);
  const auto up = static_cast<std::uint32_t>(leaders.size());
  compose::Level up_red("up_reduce", up_reduce(up), {});
  compose::Level up_full("up_bcast", up_bcast(up, segment), {});
  compose::Level up_last("up_bcast", up_bcast(up, n % segment), {});
  compose::place_segments(
      out, n, segment, depth,
      [&](std::uint64_t at, std::uint64_t len, std::uint32_t lane, std::uint64_t tmp) {
        const auto place = [&](compose::Level& level, const std::vector<core::Rank>& ranks) {
          return compose::place(out, level, ranks, len, 0, at, tmp, {}, lane);
        };
        const auto on_nodes = [&](compose::Level& level) {
          return std::all_of(layout.members.begin(), layout.members.end(),
                             [&](const std::vector<core::Rank>& m) { return place(level, m); });
        };
        return on_nodes(low_reduce) && place(up_red, leaders) &&
               place(len == segment ? up_full : up_last, leaders) && on_nodes(low_bcast);
      });
  return out;
}

} // namespace

AlgorithmInfo describe_allreduce_han() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = CollectiveKind::allreduce;
  a.summary = "Open MPI 5.0 coll/han: 64 KiB segments through a four-stage pipeline (reduce in "
              "each node, reduce and bcast among node leaders by libnbc's rules, bcast in each "
              "node)";
  a.source = "Open MPI v5.0.9 ompi/mca/coll/han (coll_han_allreduce.c, coll_han_component.c), "
             "ompi/mca/coll/libnbc (nbc_ireduce.c, nbc_ibcast.c)";
  a.aliases = {"ompi5:han"};
  a.params = {
      compose::level_param("low_reduce", CollectiveKind::reduce, "binomial",
                           "reduce inside each node (coll/tuned's choice for the node's ranks "
                           "and a segment; the stack's auto sets it)"),
      compose::level_param("low_bcast", CollectiveKind::bcast, "binomial",
                           "bcast inside each node (coll/tuned's choice; the stack's auto sets "
                           "it)"),
      {"segment", kSegment, 1, std::int64_t{1} << 30,
       "bytes per segment (coll_han_allreduce_segsize, default 65536)"},
      {"depth", kDepth, 1, 32, "segments in flight (HAN's four tasks, default 4)"}};
  a.constraints = {"commutative operations only; every node must hold the same number of ranks "
                   "(else Open MPI falls back to coll/tuned)"};
  compose::set_composed(a, plan_han);
  a.cost_formula = "about (S + 3) stage times for S segments, a stage the slowest of a segment's "
                   "low reduce, up reduce, up bcast and low bcast (not exact)";
  return a;
}

} // namespace collsim::algorithms
