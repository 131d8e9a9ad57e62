// Two-level scatter (algorithms.md SC4): an inter-node scatter of the nodes' shards from the root
// to the node leaders, then an intra-node scatter from each leader.
//
// Source: MVAPICH2 MPIR_Scatter_MV2_two_level_Binomial and _two_level_Direct
// (MV2_INTER_SCATTER_TUNING=3, 4: inter-node binomial or direct, intra-node binomial or direct);
// SimGrid SMPI mvapich2_two_level_direct (this algorithm's defaults; SMPI's
// mvapich2_two_level_binomial is `inter=binomial`).
//
// Schedule: the node layout comes from the request's topology (detail::node_layout); the ranks of
// every node must be consecutive (refused otherwise), so node j's blocks form one shard
// [S_j, S_{j+1}). The leader of the root's node is the root itself and every other node is led by
// its lowest rank, so no extra intra-node step is needed. Two phases, composed by the generic
// composition pass (compose.hpp):
//   1. among the N node leaders (N > 1): scatter (`inter`, default linear, MVAPICH2's direct) from
//      the root whose block j is node j's shard. When the shards differ in size (a partial last
//      node, or a remainder of n / p) it is a scatterv: the sub-schedule is generated for N blocks
//      of the largest shard and block-mapped onto the shards, which needs an inter algorithm that
//      moves whole blocks and no scratch (linear and linear_nb; binomial stages subtrees in
//      scratch in relative order and is then refused);
//   2. on every node of k > 1 ranks: scatter (`intra`, default linear, MVAPICH2's direct) of the
//      node's shard from its leader, in place at S_j.
// On every rank a phase starts when the rank has finished the previous one.
//
// Cost: T = T_scatter,inter(N leaders, n) + T_scatter,intra(ppn, n_node) on a hierarchy (not exact
// in general). Without a topology, or on a full mesh, every rank is a node of its own: when p
// divides n the schedule is exactly the inter algorithm on all p ranks, and the declared cost is
// its closed form (when it declares one); otherwise cost() declines.

#include "compose.hpp"
#include "scatter/scatter_algorithms.hpp"

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
  compose::Level inter(req, "inter", CollectiveKind::scatter);
  compose::Level intra(req, "intra", CollectiveKind::scatter);
  if (!compose::place_blocks(out, inter, lead, bounds, layout.node[req.root], 0)) {
    return out;
  }
  const std::uint64_t tmp = out.composition.tmp_bytes();
  for (std::uint32_t j = 0; j < layout.nodes(); ++j) {
    if (!compose::place(out, intra, layout.members[j], bounds[j + 1] - bounds[j],
                        layout.local[lead[j]], bounds[j], tmp)) {
      return out;
    }
  }
  return out;
}

std::optional<CostTerms> two_level_cost(const Request& req) {
  if (!compose::one_rank_per_node(detail::node_layout(req)) || req.bytes.value % req.ranks != 0) {
    return std::nullopt;
  }
  return compose::Level(req, "inter", CollectiveKind::scatter)
      .cost(req.ranks, req.bytes.value, req.root);
}

} // namespace

AlgorithmInfo describe_scatter_two_level() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = CollectiveKind::scatter;
  a.summary = "inter-node scatter of node shards to node leaders (the root leads its node), then "
              "intra-node scatter (each level's algorithm a parameter)";
  a.source = "MVAPICH2 MPIR_Scatter_MV2_two_level_Direct / _Binomial; SimGrid SMPI "
             "mvapich2_two_level_direct";
  a.aliases = {"smpi:mvapich2_two_level_direct"};
  a.params = {compose::level_param("inter", CollectiveKind::scatter, "linear",
                                   "scatter algorithm among the node leaders"),
              compose::level_param("intra", CollectiveKind::scatter, "linear",
                                   "scatter algorithm inside each node (from its leader)")};
  a.constraints = {"the ranks of each node are consecutive",
                   "with nodes of different sizes, the inter algorithm moves whole blocks and "
                   "uses no scratch",
                   "each level's algorithm must accept its group"};
  compose::set_composed(a, plan_two_level);
  a.cost = two_level_cost;
  a.cost_formula = "T_scatter,inter(N leaders, n) + T_scatter,intra(ppn) (not exact on a "
                   "hierarchy; with one rank per node and p dividing n it is the inter "
                   "algorithm's closed form)";
  return a;
}

} // namespace collsim::algorithms
