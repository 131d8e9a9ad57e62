// Two-level (SMP) bcast (algorithms.md BC14): an inter-node bcast among the node leaders, then an
// intra-node bcast from each leader.
//
// Source: MVAPICH2's two-level bcast (inter-leader knomial / binomial / scatter-allgather /
// pipelined, then MPIR_Shmem_Bcast_MV2 or Knomial_Bcast_intra_node inside each node; the
// Stampede table in algorithms.md 2.3); MPICH "smp" (MPIR_Bcast_intra_smp); SimGrid SMPI
// mvapich2_inter_node.
//
// Schedule: the node layout comes from the request's topology (detail::node_layout). The leader of
// the root's node is the root itself and every other node is led by its lowest rank, so no extra
// intra-node step is needed. Two phases, composed by the generic composition pass (compose.hpp):
//   1. among the N node leaders (N > 1): bcast (`inter`, default knomial, MVAPICH2's inter-node
//      knomial with factor 4) of n bytes from the root's node;
//   2. on every node of k > 1 ranks: bcast (`intra`, default binomial, MPICH's node bcast) of n
//      bytes from its leader.
// Each phase's scratch has its own region of tmp; on every rank a phase starts when the rank has
// finished the previous one. Any p, any node sizes, any root.
//
// Cost: T = T_bcast,inter(N, n) + T_bcast,intra(ppn, n) on a hierarchy (not exact in general: intra
// and inter links differ, and leaders receive at different times). Without a topology, or on a
// full mesh, every rank is a node of its own: the schedule is exactly the inter algorithm on all p
// ranks, and the declared cost is its closed form (when it declares one); otherwise cost()
// declines.

#include "bcast/bcast_algorithms.hpp"
#include "compose.hpp"

namespace collsim::algorithms {
namespace {

using core::CollectiveKind;

constexpr const char* kName = "two_level";

compose::Plan plan_two_level(const Request& req) {
  compose::Plan out(req.ranks);
  const detail::NodeLayout layout = detail::node_layout(req);
  const std::uint64_t n = req.bytes.value;
  const std::vector<core::Rank> lead = compose::leaders(layout, req.root);
  compose::Level inter(req, "inter", CollectiveKind::bcast);
  compose::Level intra(req, "intra", CollectiveKind::bcast);
  if (!compose::place(out, inter, lead, n, layout.node[req.root], 0, 0)) {
    return out;
  }
  const std::uint64_t tmp = out.composition.tmp_bytes();
  for (std::uint32_t j = 0; j < layout.nodes(); ++j) {
    if (!compose::place(out, intra, layout.members[j], n, layout.local[lead[j]], 0, tmp)) {
      return out;
    }
  }
  return out;
}

std::optional<CostTerms> two_level_cost(const Request& req) {
  if (!compose::one_rank_per_node(detail::node_layout(req))) {
    return std::nullopt;
  }
  return compose::Level(req, "inter", CollectiveKind::bcast)
      .cost(req.ranks, req.bytes.value, req.root);
}

} // namespace

AlgorithmInfo describe_bcast_two_level() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = CollectiveKind::bcast;
  a.summary = "inter-node bcast among node leaders (the root leads its node), then intra-node "
              "bcast (each level's algorithm a parameter)";
  a.source = "MVAPICH2 two-level bcast (Knomial_Bcast_inter_node + Shmem_Bcast); MPICH smp";
  a.aliases = {"mpich:smp", "smpi:mvapich2_inter_node"};
  a.params = {compose::level_param("inter", CollectiveKind::bcast, "knomial",
                                   "bcast algorithm among the node leaders"),
              compose::level_param("intra", CollectiveKind::bcast, "binomial",
                                   "bcast algorithm inside each node (from its leader)")};
  a.constraints = {"each level's algorithm must accept its group"};
  compose::set_composed(a, plan_two_level);
  a.cost = two_level_cost;
  a.cost_formula =
      "T_bcast,inter(N, n) + T_bcast,intra(ppn, n) (not exact on a hierarchy; with one "
      "rank per node it is the inter algorithm's closed form)";
  return a;
}

} // namespace collsim::algorithms
