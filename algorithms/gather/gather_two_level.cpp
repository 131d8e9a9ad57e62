// Two-level gather (algorithms.md GA5): an intra-node gather to each node's leader, then an
// inter-node gather of the nodes' shards among the leaders to the root.
//
// Source: MVAPICH2 MPIR_Gather_MV2_two_level_Direct (intra-node direct gather to the leader, then
// the leaders send to the root); SimGrid SMPI mvapich2_two_level; MPICH's inter-communicator
// local_gather_remote_send.
//
// Schedule: the node layout comes from the request's topology (detail::node_layout); the ranks of
// every node must be consecutive (refused otherwise), so node j's blocks form one shard
// [S_j, S_{j+1}). The leader of the root's node is the root itself and every other node is led by
// its lowest rank, so no extra intra-node step is needed. Two phases, composed by the generic
// composition pass (compose.hpp):
//   1. on every node of k > 1 ranks: gather (`intra`, default linear, MVAPICH2's direct) of the
//      node's shard to its leader, in place at S_j;
//   2. among the N node leaders (N > 1): gather (`inter`, default linear, MVAPICH2's direct) to
//      the root whose block j is node j's shard. When the shards differ in size (a partial last
//      node, or a remainder of n / p) it is a gatherv: the sub-schedule is generated for N blocks
//      of the largest shard and block-mapped onto the shards, which needs an inter algorithm that
//      moves whole blocks and no scratch (linear does; binomial stages subtrees in scratch in
//      relative order, and either is refused then with the reason).
// On every rank a phase starts when the rank has finished the previous one.
//
// Cost: T = T_gather,intra(ppn, n_node) + T_gather,inter(N leaders, n) on a hierarchy (not exact in
// general). Without a topology, or on a full mesh, every rank is a node of its own: when p divides
// n the schedule is exactly the inter algorithm on all p ranks, and the declared cost is its
// closed form (when it declares one); otherwise cost() declines.

#include "compose.hpp"
#include "gather/gather_algorithms.hpp"

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
  const std::vector<core::Rank> lead = compose::leaders(layout, req.root);
  compose::Level intra(req, "intra", CollectiveKind::gather);
  compose::Level inter(req, "inter", CollectiveKind::gather);
  for (std::uint32_t j = 0; j < layout.nodes(); ++j) {
    if (!compose::place(out, intra, layout.members[j], bounds[j + 1] - bounds[j],
                        layout.local[lead[j]], bounds[j], 0)) {
      return out;
    }
  }
  const std::uint64_t tmp = out.composition.tmp_bytes();
  compose::place_blocks(out, inter, lead, bounds, layout.node[req.root], tmp);
  return out;
}

std::optional<CostTerms> two_level_cost(const Request& req) {
  if (!compose::one_rank_per_node(detail::node_layout(req)) || req.bytes.value % req.ranks != 0) {
    return std::nullopt;
  }
  return compose::Level(req, "inter", CollectiveKind::gather)
      .cost(req.ranks, req.bytes.value, req.root);
}

} // namespace

AlgorithmInfo describe_gather_two_level() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = CollectiveKind::gather;
  a.summary = "intra-node gather to node leaders (the root leads its node), then inter-node "
              "gather of node shards to the root (each level's algorithm a parameter)";
  a.source = "MVAPICH2 MPIR_Gather_MV2_two_level_Direct; SimGrid SMPI mvapich2_two_level";
  a.aliases = {"smpi:mvapich2_two_level"};
  a.params = {compose::level_param("intra", CollectiveKind::gather, "linear",
                                   "gather algorithm inside each node (to its leader)"),
              compose::level_param("inter", CollectiveKind::gather, "linear",
                                   "gather algorithm among the node leaders")};
  a.constraints = {"the ranks of each node are consecutive",
                   "with nodes of different sizes, the inter algorithm moves whole blocks and "
                   "uses no scratch",
                   "each level's algorithm must accept its group"};
  compose::set_composed(a, plan_two_level);
  a.cost = two_level_cost;
  a.cost_formula = "T_gather,intra(ppn) + T_gather,inter(N leaders, n) (not exact on a hierarchy; "
                   "with one rank per node and p dividing n it is the inter algorithm's closed "
                   "form)";
  return a;
}

} // namespace collsim::algorithms
