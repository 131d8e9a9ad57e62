// Two-level (SMP) reduce (algorithms.md RD9): an intra-node reduce to each node's leader, then an
// inter-node reduce among the leaders to the root.
//
// Source: MVAPICH2 MPIR_Reduce_two_level_helper_MV2 (intra-node reduce to the local leader, then
// an inter-leader binomial or knomial reduce); MPICH "smp" (MPIR_Reduce_intra_smp); SimGrid SMPI
// mvapich2_two_level.
//
// Schedule: the node layout comes from the request's topology (detail::node_layout). The leader of
// the root's node is the root itself and every other node is led by its lowest rank, so the
// extra intra-node send that algorithms.md mentions for a root that is not its node's leader is
// never needed. Two phases, composed by the generic composition pass (compose.hpp):
//   1. on every node of k > 1 ranks: reduce (`intra`, default binomial) of n bytes to its leader;
//   2. among the N node leaders (N > 1): reduce (`inter`, default binomial, MVAPICH2's
//      MV2_INTER_REDUCE_TUNING=1) of n bytes to the root.
// Each phase's scratch has its own region of tmp; on every rank a phase starts when the rank has
// finished the previous one. Any p, any node sizes, any root.
//
// Cost: T = T_reduce,intra(ppn, n) + T_reduce,inter(N, n) on a hierarchy (not exact in general:
// intra and inter links differ, and leaders finish at different times). Without a topology, or on
// a full mesh, every rank is a node of its own: the schedule is exactly the inter algorithm on all
// p ranks, and the declared cost is its closed form (when it declares one); otherwise cost()
// declines.

#include "compose.hpp"
#include "reduce/reduce_algorithms.hpp"

namespace collsim::algorithms {
namespace {

using core::CollectiveKind;

constexpr const char* kName = "two_level";

compose::Plan plan_two_level(const Request& req) {
  compose::Plan out(req.ranks);
  const detail::NodeLayout layout = detail::node_layout(req);
  const std::uint64_t n = req.bytes.value;
  const std::vector<core::Rank> lead = compose::leaders(layout, req.root);
  compose::Level intra(req, "intra", CollectiveKind::reduce);
  compose::Level inter(req, "inter", CollectiveKind::reduce);
  for (std::uint32_t j = 0; j < layout.nodes(); ++j) {
    if (!compose::place(out, intra, layout.members[j], n, layout.local[lead[j]], 0, 0)) {
      return out;
    }
  }
  const std::uint64_t tmp = out.composition.tmp_bytes();
  compose::place(out, inter, lead, n, layout.node[req.root], 0, tmp);
  return out;
}

std::optional<CostTerms> two_level_cost(const Request& req) {
  if (!compose::one_rank_per_node(detail::node_layout(req))) {
    return std::nullopt;
  }
  return compose::Level(req, "inter", CollectiveKind::reduce)
      .cost(req.ranks, req.bytes.value, req.root);
}

} // namespace

AlgorithmInfo describe_reduce_two_level() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = CollectiveKind::reduce;
  a.summary = "intra-node reduce to node leaders (the root leads its node), then inter-node reduce "
              "to the root (each level's algorithm a parameter)";
  a.source = "MVAPICH2 MPIR_Reduce_two_level_helper_MV2; MPICH smp";
  a.aliases = {"mpich:smp", "smpi:mvapich2_two_level"};
  a.params = {compose::level_param("intra", CollectiveKind::reduce, "binomial",
                                   "reduce algorithm inside each node (to its leader)"),
              compose::level_param("inter", CollectiveKind::reduce, "binomial",
                                   "reduce algorithm among the node leaders")};
  a.constraints = {"each level's algorithm must accept its group"};
  compose::set_composed(a, plan_two_level);
  a.cost = two_level_cost;
  a.cost_formula = "T_reduce,intra(ppn, n) + T_reduce,inter(N, n) (not exact on a hierarchy; with "
                   "one rank per node it is the inter algorithm's closed form)";
  return a;
}

} // namespace collsim::algorithms
