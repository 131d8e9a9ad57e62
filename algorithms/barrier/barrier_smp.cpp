// SMP (two-level) barrier (algorithms.md BA8): a barrier inside every node, a barrier among the
// node leaders, then each leader releases its node with a one-byte broadcast.
//
// Source: MPICH MPIR_Barrier_intra_smp (src/mpi/coll/barrier/barrier_intra_smp.c): MPIR_Barrier on
// node_comm, MPIR_Barrier on node_roots_comm, then MPIR_Bcast of 1 byte from local rank 0 on
// node_comm ("0-byte broadcast just returns without doing anything"); its default barrier on a
// flat communicator is MPIR_Barrier_intra_k_dissemination with k = 2 (algorithms.md 2.2, "barrier:
// hierarchy -> smp; else k_dissemination") and a one-byte broadcast is binomial. SimGrid SMPI
// barrier__mpich_smp (src/smpi/colls/barrier/barrier-mpich-smp.cpp) does the same with
// barrier__mpich (= ompi_bruck, dissemination) on the intra-node and leader communicators and
// bcast__mpich (binomial below 12 KiB) for the release, so "smpi:mpich_smp" names this algorithm.
//
// Schedule: the node layout comes from the request's topology (detail::node_layout); a node's
// leader is its lowest rank (local rank 0). Three phases, composed by the generic composition pass
// (compose.hpp), each a registry algorithm with its default parameters:
//   1. on every node of k > 1 ranks: dissemination barrier (radix 2) among its ranks;
//   2. among the N node leaders (N > 1): dissemination barrier (radix 2);
//   3. on every node of k > 1 ranks: binomial bcast from the leader, the release.
// The levels are fixed (MPICH's defaults) because the composition pass offers no barrier level
// choice. The release carries zero bytes, not MPICH's one byte: a barrier's schedule has no buffer
// to send from (its messages are empty), and one byte changes the time by one byte's b.
//
// Cost: without a topology, or on a full mesh, every rank is a node of its own and the schedule is
// the dissemination barrier on all p ranks: ceil(lg p) a, exact. On a hierarchy,
// ceil(lg ppn) a_intra + ceil(lg N) a_inter + ceil(lg ppn) a_intra, not exact (nodes finish at
// different times, intra and inter latencies differ), so cost() declines.

#include "barrier/barrier_algorithms.hpp"
#include "bcast/bcast_algorithms.hpp"
#include "compose.hpp"

#include <fmt/format.h>
#include <map>

namespace collsim::algorithms {
namespace {

using core::CollectiveKind;

constexpr const char* kName = "smp";

/// Sub-schedules of one fixed registry algorithm, by group size (root 0, zero bytes).
class FixedLevel {
public:
  FixedLevel(AlgorithmInfo info, CollectiveKind collective)
      : info_(std::move(info)), collective_(collective) {}
  /// Places the algorithm on `ranks` (a group of one rank needs nothing); false with the refusal
  /// in plan.refusal when the algorithm refuses the group.
  bool place(compose::Plan& plan, const std::vector<core::Rank>& ranks) {
    if (ranks.size() < 2) {
      return true;
    }
    const auto k = static_cast<std::uint32_t>(ranks.size());
    auto [it, fresh] = cache_.try_emplace(k);
    if (fresh) {
      Request sub;
      sub.collective = collective_;
      sub.ranks = k;
      const Registry none;
      if (std::string why = none.refusal(info_, sub); !why.empty()) {
        plan.refusal = fmt::format("{} on {} ranks: {}", info_.name, k, why);
        return false;
      }
      it->second = std::make_shared<const core::Schedule>(none.generate(info_, sub));
    }
    plan.composition.add(compose::Placement{it->second, ranks, 0, 0, {}});
    return true;
  }

private:
  AlgorithmInfo info_;
  CollectiveKind collective_;
  std::map<std::uint32_t, std::shared_ptr<const core::Schedule>> cache_;
};

compose::Plan plan_smp(const Request& req) {
  compose::Plan out(req.ranks);
  const detail::NodeLayout layout = detail::node_layout(req);
  FixedLevel barrier(describe_barrier_dissemination(), CollectiveKind::barrier);
  FixedLevel release(describe_bcast_binomial(), CollectiveKind::bcast);
  for (const auto& members : layout.members) {
    if (!barrier.place(out, members)) {
      return out;
    }
  }
  if (!barrier.place(out, compose::leaders(layout, 0))) {
    return out;
  }
  for (const auto& members : layout.members) {
    if (!release.place(out, members)) {
      return out;
    }
  }
  return out;
}

std::optional<CostTerms> smp_cost(const Request& req) {
  if (!compose::one_rank_per_node(detail::node_layout(req))) {
    return std::nullopt;
  }
  return CostTerms{static_cast<double>(detail::ceil_log2(req.ranks)), 0.0, 0.0};
}

} // namespace

AlgorithmInfo describe_barrier_smp() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = CollectiveKind::barrier;
  a.summary = "dissemination barrier inside each node, dissemination barrier among node leaders, "
              "binomial release from each leader";
  a.source = "MPICH MPIR_Barrier_intra_smp; SimGrid SMPI barrier__mpich_smp";
  a.aliases = {"mpich:smp", "smpi:mpich_smp"};
  a.constraints = {"the node layout comes from the topology (no topology: one rank per node, "
                   "which is the dissemination barrier)"};
  compose::set_composed(a, plan_smp);
  a.cost = smp_cost;
  a.cost_formula = "one rank per node: ceil(lg p) a; on a hierarchy 2 ceil(lg ppn) a_intra + "
                   "ceil(lg N) a_inter (not exact)";
  return a;
}

} // namespace collsim::algorithms
