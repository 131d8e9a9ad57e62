#pragma once
// Internal: the tree shapes Open MPI and MPICH build for their tree-based bcast and reduce
// (ompi_coll_base_topo_build_{chain,tree,kmtree}, MPICH's binomial), and the two generic schedules
// every tree algorithm of both collectives shares: a segmented tree broadcast (Open MPI
// ompi_coll_base_bcast_intra_generic) and a segmented tree reduction (Open MPI
// ompi_coll_base_reduce_generic). Each algorithm file picks a shape, a segment size and, for
// reduce, the number of receive buffers; the generic code does the rest, so the dependency rules
// that keep the race check quiet live in one place.

#include "collsim/algorithms/registry.hpp"
#include "generator_support.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace collsim::algorithms::detail {

/// The value of parameter `name` in `req` (Registry fills in defaults before generating), or
/// `fallback` when a caller bypassed the registry.
inline std::int64_t param_or(const Request& req, const std::string& name, std::int64_t fallback) {
  const auto it = req.params.find(name);
  return it == req.params.end() ? fallback : it->second;
}

/// One rank's links in a tree, in real ranks: its parent (unless it is the root) and its children
/// in the order the algorithm sends to (bcast) or receives from (reduce) them.
struct TreeLinks {
  bool has_parent = false;
  core::Rank parent = 0;
  std::vector<core::Rank> children;
};

/// Fills `out` with the links of rank `r` in a tree over `p` ranks rooted at `root`.
using TreeShape = std::function<void(std::uint32_t p, core::Rank root, core::Rank r, TreeLinks&)>;

/// MPICH's binomial tree (bcast_intra_binomial / reduce_intra_binomial) on relative ranks
/// vr = (r - root) mod p: the parent is vr - lowbit(vr); the children are vr + m for m = 2^j <
/// lowbit (the root: every power of two below p). `far_first`: children from the largest m down
/// (bcast sends to the biggest subtree first); otherwise from m = 1 up (reduce receives in mask
/// order).
TreeShape binomial_tree(bool far_first);
/// k-nomial tree (Open MPI ompi_coll_base_topo_build_kmtree, MPICH knomial): the parent clears the
/// lowest nonzero base-`radix` digit of vr; the children are vr + c radix^i for every i below that
/// digit and c = 1..radix-1, largest radix^i first when `far_first`.
TreeShape knomial_tree(std::uint32_t radix, bool far_first);
/// Open MPI ompi_coll_base_topo_build_chain: the root heads `fanout` chains of consecutive relative
/// ranks (fanout capped at p-1); the first (p-1) mod fanout chains are one rank longer.
TreeShape chain_tree(std::uint32_t fanout);
/// Open MPI ompi_coll_base_topo_build_tree: a level-order `fanout`-ary tree on relative ranks; the
/// children of vr on level L are vr + fanout^L (i + 1) for i = 0..fanout-1.
TreeShape kary_tree(std::uint32_t fanout);
/// Open MPI ompi_coll_base_topo_build_in_order_bintree: a binary tree rooted at rank p-1 (the root
/// argument is ignored) whose subtrees are contiguous rank ranges: below a parent of subtree size
/// s, the right child heads ranks [0, s/2) and the left child (parent - 1) the ranks in between, so
/// every reduction combines neighbouring ranges in rank order. Children: left, then right.
TreeShape in_order_binary_tree();
/// Wraps `a.generate` so that its schedules run over shared-memory flags and cells inside a node:
/// peers poll flags and read each other's buffers in place, with no MPI matching
/// (core::Protocol::intra_node_overhead 0, the reader copies): HCOLL's basesmuma, MPICH's POSIX
/// release_gather.
void over_shared_memory_flags(AlgorithmInfo& a);
/// MPICH's MPIR_Treealgo k-ary tree (tree_type kary) on relative ranks l: parent (l - 1) / k,
/// children l k + 1 .. l k + k below p (heap order; kary_tree is Open MPI's level order).
TreeShape heap_kary_tree(std::uint32_t k);
/// The flat tree of the basic linear algorithms: the root's children are every other rank, in
/// ascending rank order, or descending when `descending` (Open MPI's linear reduce receives from
/// p-1 down to 0).
TreeShape flat_tree(bool descending);

/// Number of segments of `n` bytes cut into pieces of `segment` bytes (0: one segment, Open MPI's
/// "no segmentation"). Zero bytes still make one (empty) segment, so the message count does not
/// depend on n.
std::uint64_t segment_count(std::uint64_t n, std::uint64_t segment);

/// Exact totals of generate_tree_bcast.
OpCounts tree_bcast_counts(std::uint32_t p, core::Rank root, std::uint64_t segments,
                           const TreeShape& shape);
/// Segmented tree broadcast in place in `data`: a rank receives segment j from its parent (the
/// receive of segment j+1 is posted before segment j is forwarded) and sends it to each child in
/// order. No scratch: every byte of `data` is written once, before it is read.
core::Schedule generate_tree_bcast(const Request& req, const std::string& name,
                                   const TreeShape& shape, std::uint64_t segment);

/// Exact totals of generate_tree_reduce.
/// `tree_root` is the rank `shape` roots the tree at when that is not req.root (Open MPI's in-order
/// binary tree ends at p-1): that rank then sends the whole result to req.root.
OpCounts tree_reduce_counts(std::uint32_t p, core::Rank root, std::uint64_t segments,
                            std::uint32_t buffers, const TreeShape& shape,
                            std::optional<core::Rank> tree_root = std::nullopt);
/// The largest number of children any rank has.
std::uint32_t max_children(std::uint32_t p, core::Rank root, const TreeShape& shape);
/// Segmented tree reduction: for each segment, a rank receives the segment from each child into
/// one of `buffers` scratch vectors (child i uses tmp vector i mod buffers), reduces it into
/// `data`, and sends the reduced segment to its parent. With one buffer a child's receive waits for
/// the previous child's reduction (MPICH's binomial, Open MPI's linear); with two, the next child's
/// segment arrives while the previous one is reduced (Open MPI's inbuf[2]).
core::Schedule generate_tree_reduce(const Request& req, const std::string& name,
                                    const TreeShape& shape, std::uint64_t segment,
                                    std::uint32_t buffers,
                                    std::optional<core::Rank> tree_root = std::nullopt);

} // namespace collsim::algorithms::detail
