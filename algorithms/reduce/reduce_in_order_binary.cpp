// In-order binary tree reduce (algorithms.md RD6), safe for non-commutative operations.
//
// Source: Open MPI ompi_coll_base_reduce_intra_in_order_binary (coll/tuned reduce algorithm 6) on
// ompi_coll_base_topo_build_in_order_bintree, unsegmented (Open MPI passes segment size 0); SMPI
// "ompi_in_order_binary". The tree is rooted at rank p-1 and every subtree is a contiguous rank
// range, so each reduction combines neighbouring ranges in order; when the root is not p-1, rank
// p-1 sends it the result.
//
// Cost: about 2 floor(lg p)(a + n b + n g), plus a + n b when the root is not p-1: every interior
// rank receives and reduces two vectors in turn, but the two subtrees differ in depth, so no exact
// closed form is declared.
//
// Schedule: the generic tree reduce with one segment on the in-order tree (a rank receives its left
// child's then its right child's vector into two scratch vectors, reduces each into data, and sends
// data to its parent), then the hand-over from p-1 to the root, which waits for the root's own
// send up the tree because it overwrites the data that send read.

#include "bcast/bcast_reduce_trees.hpp"
#include "reduce/reduce_algorithms.hpp"

namespace collsim::algorithms {
namespace {

constexpr const char* kName = "in_order_binary";
constexpr std::uint32_t kBuffers = 2;

} // namespace

AlgorithmInfo describe_reduce_in_order_binary() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::reduce;
  a.summary = "binary tree over contiguous rank ranges rooted at p-1 (operand order preserved)";
  a.source = "Open MPI ompi_coll_base_reduce_intra_in_order_binary "
             "(ompi_coll_base_topo_build_in_order_bintree)";
  a.aliases = {"ompi:6", "ompi:in-order_binary", "smpi:ompi_in_order_binary"};
  a.constraints = {"works for non-commutative operations",
                   "a root other than p-1 costs one more full-vector message"};
  a.check = [](const Request& req) {
    return detail::size_limit_refusal(detail::tree_reduce_counts(
        req.ranks, req.root, 1, kBuffers, detail::in_order_binary_tree(), req.ranks - 1));
  };
  a.generate = [](const Request& req) {
    return detail::generate_tree_reduce(req, kName, detail::in_order_binary_tree(), 0, kBuffers,
                                        req.ranks - 1);
  };
  a.cost = [](const Request&) { return std::optional<CostTerms>{}; };
  a.cost_formula = "about 2 floor(lg p)(a + n b + n g), + a + n b when the root is not p-1 "
                   "(approximate: no exact form)";
  return a;
}

} // namespace collsim::algorithms
