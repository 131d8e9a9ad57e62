// MPICH tree broadcast (algorithms.md BC11 without pipelining; MPICH `tree`): the root sends the
// whole vector to its k children of a k-ary tree over relative ranks, and every rank forwards it
// to its own children (non-blocking sends) once it has received it.
//
// Source: MPICH MPIR_Bcast_intra_tree (src/mpi/coll/bcast/bcast_intra_tree.c: "For short messages,
// we use a kary/knomial tree-based algorithm. Cost = lgp.alpha + n.lgp.beta"), with
// tree_type kary (MPIR_CVAR_BCAST_TREE_TYPE's default), branching factor MPIR_CVAR_BCAST_TREE_KVAL
// (default 2) and non-blocking sends (MPIR_CVAR_BCAST_IS_NON_BLOCKING). The knomial_1/knomial_2
// tree types are not modelled (use bcast `knomial` for a k-nomial tree).
//
// Tree: relative rank l = (r - root) mod p; parent (l-1)/k; children l k + 1 .. l k + k (< p).
// The schedule is the pipelined_tree one with a single chunk (detail::kary_tree_bcast): MPICH's
// pipelined variant cuts the vector into chunks, this one does not.
//
// Cost: h (a + k n b) for a tree of height h = the depth of the deepest rank, the k children's
// sends sharing the rank's port; not exact on the loggp engine (consecutive sends overlap their
// latencies), so no closed form is declared.

#include "bcast/bcast_algorithms.hpp"
#include "generator_support.hpp"

namespace collsim::algorithms {
namespace {

constexpr const char* kName = "tree";

} // namespace

AlgorithmInfo describe_bcast_tree() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::bcast;
  a.summary = "the whole vector down a k-ary tree, each rank forwarding it to its children";
  a.source = "MPICH MPIR_Bcast_intra_tree (kary tree, non-blocking sends)";
  a.aliases = {"mpich:tree"};
  a.params = {
      {"radix", 2, 2, 1024, "k: children per rank (MPIR_CVAR_BCAST_TREE_KVAL, default 2)", {}}};
  a.check = [](const Request& req) { return detail::kary_tree_bcast_refusal(req, false); };
  a.generate = [](const Request& req) { return detail::kary_tree_bcast(req, kName, false); };
  a.cost = [](const Request&) { return std::optional<CostTerms>{}; };
  a.cost_formula = "about h (a + k n b) down a k-ary tree of height h; not exact on loggp "
                   "(overlapping sends), no closed form";
  return a;
}

} // namespace collsim::algorithms
