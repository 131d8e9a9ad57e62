// Two-level (SMP) allgather (algorithms.md AG14): an intra-node gather to each node's leader, an
// inter-node allgather of the nodes' shards among the leaders, and an intra-node bcast of the
// whole vector.
//
// Source: MVAPICH2 MPIR_2lvl_Allgather_MV2 (MV2_INTER_ALLGATHER_TUNING_TWO_LEVEL=1: gather to the
// leader, inter-leader allgather by RD, Bruck or ring, then bcast); SimGrid SMPI mvapich2_smp.
// (SMPI's SMP_NTS and smp_simple are two-level too but hard-code 8 cores per node.)
//
// Schedule: the node layout comes from the request's topology (detail::node_layout); the ranks of
// every node must be consecutive (refused otherwise), so node j's blocks form one shard
// [S_j, S_{j+1}) of the vector. The leader of a node is its lowest rank. Three phases, composed by
// the generic composition pass (compose.hpp):
//   1. on every node of k > 1 ranks: gather (`intra_gather`, default linear, MVAPICH2's direct
//      gather) of the node's shard to its leader, in place at S_j;
//   2. among the N node leaders (N > 1): allgather (`inter`, default ring) whose block j is node
//      j's shard. When the shards differ in size (a partial last node, or a remainder of n / p) it
//      is a gatherv-style exchange: the sub-schedule is generated for N blocks of the largest
//      shard and block-mapped onto the shards, which needs an inter algorithm that moves whole
//      blocks and no scratch (ring, recursive_doubling, neighbor_exchange, direct, linear,
//      sparbit; bruck uses scratch and is then refused);
//   3. on every node: bcast (`intra_bcast`, default binomial) of all n bytes from its leader.
// Each phase's scratch has its own region of tmp; on every rank a phase starts when the rank has
// finished the previous one.
//
// Cost: T = T_gather,intra(ppn, n_node) + T_allgather,inter(N, n) + T_bcast,intra(ppn, n) on a
// hierarchy (not exact in general). Without a topology, or on a full mesh, every rank is a node of
// its own: when p divides n the schedule is exactly the inter algorithm on all p ranks, and the
// declared cost is its closed form (when it declares one); otherwise cost() declines.

#include "allgather/allgather_algorithms.hpp"
#include "compose.hpp"

namespace collsim::algorithms {
namespace {

using core::CollectiveKind;

constexpr const char* kName = "two_level";

compose::Plan plan_two_level(const Request& req) {
  compose::Plan out(req.ranks);
  const detail::NodeLayout layout = detail::node_layout(req);
  if (std::string why = compose::consecutive_nodes_refusal(layout); !why.empty()) {
    out.refusal = std::move(why);
    return out;
  }
  const std::uint64_t n = req.bytes.value;
  const std::vector<std::uint64_t> bounds = compose::node_bounds(layout, n);
  compose::Level intra_gather(req, "intra_gather", CollectiveKind::gather);
  compose::Level inter(req, "inter", CollectiveKind::allgather);
  compose::Level intra_bcast(req, "intra_bcast", CollectiveKind::bcast);
  for (std::uint32_t j = 0; j < layout.nodes(); ++j) {
    if (!compose::place(out, intra_gather, layout.members[j], bounds[j + 1] - bounds[j], 0,
                        bounds[j], 0)) {
      return out;
    }
  }
  std::uint64_t tmp = out.composition.tmp_bytes();
  if (!compose::place_blocks(out, inter, compose::leaders(layout, 0), bounds, 0, tmp)) {
    return out;
  }
  tmp = out.composition.tmp_bytes();
  for (const auto& members : layout.members) {
    if (!compose::place(out, intra_bcast, members, n, 0, 0, tmp)) {
      return out;
    }
  }
  return out;
}

std::optional<CostTerms> two_level_cost(const Request& req) {
  if (!compose::one_rank_per_node(detail::node_layout(req)) || req.bytes.value % req.ranks != 0) {
    return std::nullopt;
  }
  return compose::Level(req, "inter", CollectiveKind::allgather).cost(req.ranks, req.bytes.value);
}

} // namespace

AlgorithmInfo describe_allgather_two_level() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = CollectiveKind::allgather;
  a.summary = "intra-node gather to node leaders, inter-node allgather of node shards, intra-node "
              "bcast (each level's algorithm a parameter)";
  a.source = "MVAPICH2 MPIR_2lvl_Allgather_MV2; SimGrid SMPI mvapich2_smp";
  a.aliases = {"smpi:mvapich2_smp"};
  a.params = {compose::level_param("intra_gather", CollectiveKind::gather, "linear",
                                   "gather algorithm inside each node (to its lowest rank)"),
              compose::level_param("inter", CollectiveKind::allgather, "ring",
                                   "allgather algorithm among the node leaders"),
              compose::level_param("intra_bcast", CollectiveKind::bcast, "binomial",
                                   "bcast algorithm inside each node (from its lowest rank)")};
  a.constraints = {"the ranks of each node are consecutive",
                   "with nodes of different sizes, the inter algorithm moves whole blocks and "
                   "uses no scratch",
                   "each level's algorithm must accept its group"};
  compose::set_composed(a, plan_two_level);
  a.cost = two_level_cost;
  a.cost_formula = "T_gather,intra + T_allgather,inter(N, n) + T_bcast,intra(ppn, n) (not exact on "
                   "a hierarchy; with one rank per node and p dividing n it is the inter "
                   "algorithm's closed form)";
  return a;
}

} // namespace collsim::algorithms
