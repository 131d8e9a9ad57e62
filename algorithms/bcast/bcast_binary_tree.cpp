// Pipelined binary tree broadcast (algorithms.md BC6).
//
// Source: Open MPI ompi_coll_base_bcast_intra_bintree (coll/tuned bcast algorithm 5) on
// ompi_coll_base_topo_build_tree(2): a level-order binary tree on relative ranks, where the
// children of vr on level L are vr + 2^L and vr + 2^(L+1); segments flow through
// ompi_coll_base_bcast_intra_generic. Segment size default 8 KiB (the pipelined binary tree
// broadcasts of SMPI, NTSB, use 8 KiB pieces).
//
// Cost, k = ceil(n/s) segments, h = floor(lg p): about 2(h + k - 1)(a + s b) [algorithms.md,
// derived]: an interior rank sends each segment twice, but the first child is served a slot
// earlier than the second, so no exact closed form is declared.
//
// Schedule: the generic segmented tree broadcast: each rank receives segment j from its parent
// (posting segment j+1's receive first) and sends it to its children in order.

#include "bcast/bcast_algorithms.hpp"
#include "bcast/bcast_reduce_trees.hpp"

namespace collsim::algorithms {
namespace {

constexpr const char* kName = "binary_tree";
constexpr std::int64_t kDefaultSegment = std::int64_t{8} << 10;

std::uint64_t segment_of(const Request& req) {
  return static_cast<std::uint64_t>(detail::param_or(req, "segment_size", kDefaultSegment));
}

} // namespace

AlgorithmInfo describe_bcast_binary_tree() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::bcast;
  a.summary = "pipelined binary tree (level order), in segments of segment_size bytes";
  a.source = "Open MPI ompi_coll_base_bcast_intra_bintree (ompi_coll_base_topo_build_tree)";
  a.aliases = {"ompi:5", "ompi:binary_tree"};
  a.params = {{"segment_size", kDefaultSegment, 0, std::int64_t{1} << 30,
               "bytes per pipeline segment (0: the whole vector in one message)"}};
  a.constraints = {"the last segment is shorter when segment_size does not divide n"};
  a.check = [](const Request& req) {
    const std::uint64_t k = detail::segment_count(req.bytes.value, segment_of(req));
    return detail::size_limit_refusal(
        detail::tree_bcast_counts(req.ranks, req.root, k, detail::kary_tree(2)));
  };
  a.generate = [](const Request& req) {
    return detail::generate_tree_bcast(req, kName, detail::kary_tree(2), segment_of(req));
  };
  a.cost = [](const Request&) { return std::optional<CostTerms>{}; };
  a.cost_formula = "about 2(h + k - 1)(a + s b), h = floor(lg p), k = ceil(n/s) (approximate: no "
                   "exact form)";
  return a;
}

} // namespace collsim::algorithms
