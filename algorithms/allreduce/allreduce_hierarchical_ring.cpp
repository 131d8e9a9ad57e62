// Hierarchical reduce-scatter / allreduce / allgather ("2D ring") allreduce (algorithms.md AR15):
// shard-based, so each of a node's ppn ranks carries only n/ppn bytes across the network.
//
// Source: the Horovod-style hierarchical allreduce (intra-node reduce-scatter, inter-node
// allreduce of each shard, intra-node allgather); NCCL CollNet Direct and NVLS are instances of
// the pattern; ASTRA-sim's 2-D allreduce. algorithms.md 1.10 item 3 (shard-based hierarchy).
//
// Schedule: the node layout comes from the request's topology (detail::node_layout); every node
// must hold the same number ppn of ranks (refused otherwise, with the node sizes). Shard i is
// block_range(n, ppn, i). Three phases, composed by the generic composition pass (compose.hpp):
//   1. on every node: reduce-scatter (`intra_reduce_scatter`, default ring) of n bytes over its
//      ppn ranks; local rank i ends with shard i reduced over the node;
//   2. for every i: allreduce (`inter`, default ring) of shard i among the N ranks of local index
//      i (one per node), in place at the shard's offset;
//   3. on every node: allgather (`intra_allgather`, default ring) of the ppn shards.
// Each phase's scratch has its own region of tmp; on every rank a phase starts when the rank has
// finished the previous one.
//
// Cost (ring at every level) [algorithms.md, derived]:
//   T = 2(ppn-1)(a_i + (n/ppn) b_i) + 2(N-1)(a_e + (n/(ppn N)) b_e) + (p-1)/p n g.
// Not exact in general (intra and inter links differ, and uneven shards pace each step). Without
// a topology, or on a full mesh, every rank is a node of its own (ppn = 1): the schedule is exactly
// the inter algorithm on all p ranks, and the declared cost is its closed form (when it declares
// one); otherwise cost() declines.

#include "allreduce/allreduce_algorithms.hpp"
#include "compose.hpp"

#include <fmt/format.h>

namespace collsim::algorithms {
namespace {

using core::CollectiveKind;

constexpr const char* kName = "hierarchical_ring";

compose::Plan plan_hierarchical_ring(const Request& req) {
  compose::Plan out(req.ranks);
  const detail::NodeLayout layout = detail::node_layout(req);
  if (!layout.uniform()) {
    std::vector<std::size_t> sizes;
    for (const auto& m : layout.members) {
      sizes.push_back(m.size());
    }
    out.refusal =
        fmt::format("every node must hold the same number of ranks (the {} nodes hold {} ranks)",
                    layout.nodes(), fmt::join(sizes, ", "));
    return out;
  }
  const std::uint64_t n = req.bytes.value;
  const std::uint32_t ppn = layout.max_per_node();
  compose::Level intra_rs(req, "intra_reduce_scatter", CollectiveKind::reduce_scatter);
  compose::Level inter(req, "inter", CollectiveKind::allreduce);
  compose::Level intra_ag(req, "intra_allgather", CollectiveKind::allgather);
  for (const auto& members : layout.members) {
    if (!compose::place(out, intra_rs, members, n, 0, 0, 0)) {
      return out;
    }
  }
  const std::uint64_t tmp = out.composition.tmp_bytes();
  std::vector<core::Rank> column(layout.nodes());
  for (std::uint32_t i = 0; i < ppn; ++i) {
    for (std::uint32_t j = 0; j < layout.nodes(); ++j) {
      column[j] = layout.members[j][i];
    }
    const auto [offset, length] = core::block_range(n, ppn, i);
    if (!compose::place(out, inter, column, length, 0, offset, tmp)) {
      return out;
    }
  }
  const std::uint64_t tmp2 = out.composition.tmp_bytes();
  for (const auto& members : layout.members) {
    if (!compose::place(out, intra_ag, members, n, 0, 0, tmp2)) {
      return out;
    }
  }
  return out;
}

std::optional<CostTerms> hierarchical_ring_cost(const Request& req) {
  const detail::NodeLayout layout = detail::node_layout(req);
  if (!compose::one_rank_per_node(layout)) {
    return std::nullopt;
  }
  return compose::Level(req, "inter", CollectiveKind::allreduce).cost(req.ranks, req.bytes.value);
}

} // namespace

AlgorithmInfo describe_allreduce_hierarchical_ring() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = CollectiveKind::allreduce;
  a.summary = "intra-node reduce-scatter, inter-node allreduce of each shard among same-local-rank "
              "ranks, intra-node allgather (2D ring)";
  a.source = "Horovod-style hierarchical allreduce; ASTRA-sim 2-D allreduce; algorithms.md AR15";
  a.params = {compose::level_param("intra_reduce_scatter", CollectiveKind::reduce_scatter, "ring",
                                   "reduce-scatter algorithm inside each node"),
              compose::level_param("inter", CollectiveKind::allreduce, "ring",
                                   "allreduce algorithm of each shard across the nodes"),
              compose::level_param("intra_allgather", CollectiveKind::allgather, "ring",
                                   "allgather algorithm inside each node")};
  a.constraints = {"every node holds the same number of ranks",
                   "each level's algorithm must accept its group"};
  compose::set_composed(a, plan_hierarchical_ring);
  a.cost = hierarchical_ring_cost;
  a.cost_formula = "ring levels: 2(ppn-1)(a_i + n/ppn b_i) + 2(N-1)(a_e + n/(ppn N) b_e) + "
                   "(p-1)/p n g (not exact on a hierarchy; with one rank per node it is the inter "
                   "algorithm's closed form)";
  return a;
}

} // namespace collsim::algorithms
