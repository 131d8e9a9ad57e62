// Pipelined binary tree reduce (algorithms.md RD4).
//
// Source: Open MPI ompi_coll_base_reduce_intra_binary (coll/tuned reduce algorithm 4) on
// ompi_coll_base_topo_build_tree(2) through ompi_coll_base_reduce_generic (two receive buffers);
// SMPI "ompi_binary" (32 KiB segments).
//
// Cost, k = ceil(n/s) segments, h = floor(lg p): about 2(h + k - 1)(a + s(b + g)) [algorithms.md,
// derived]: an interior rank receives and reduces two segments per slot. Not exact, so no closed
// form is declared.
//
// Schedule: the generic segmented tree reduce on the level-order binary tree (children of vr on
// level L: vr + 2^L and vr + 2^(L+1)): for each segment a rank receives its children's segments
// into two scratch vectors, reduces them into data, and sends the segment to its parent.

#include "bcast/bcast_reduce_trees.hpp"
#include "reduce/reduce_algorithms.hpp"

namespace collsim::algorithms {
namespace {

constexpr const char* kName = "binary";
constexpr std::int64_t kDefaultSegment = std::int64_t{32} << 10;
constexpr std::uint32_t kBuffers = 2;

std::uint64_t segment_of(const Request& req) {
  return static_cast<std::uint64_t>(detail::param_or(req, "segment_size", kDefaultSegment));
}

} // namespace

AlgorithmInfo describe_reduce_binary() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::reduce;
  a.summary = "pipelined binary tree (level order), reduced segment by segment";
  a.source = "Open MPI ompi_coll_base_reduce_intra_binary (ompi_coll_base_reduce_generic)";
  a.aliases = {"ompi:4", "ompi:binary", "smpi:ompi_binary"};
  a.params = {{"segment_size", kDefaultSegment, 0, std::int64_t{1} << 30,
               "bytes per pipeline segment (0: the whole vector in one message)"}};
  a.constraints = {"commutative operation",
                   "the last segment is shorter when segment_size does not divide n"};
  a.check = [](const Request& req) {
    const std::uint64_t k = detail::segment_count(req.bytes.value, segment_of(req));
    return detail::size_limit_refusal(
        detail::tree_reduce_counts(req.ranks, req.root, k, kBuffers, detail::kary_tree(2)));
  };
  a.generate = [](const Request& req) {
    return detail::generate_tree_reduce(req, kName, detail::kary_tree(2), segment_of(req),
                                        kBuffers);
  };
  a.cost = [](const Request&) { return std::optional<CostTerms>{}; };
  a.cost_formula = "about 2(h + k - 1)(a + s b + s g), h = floor(lg p), k = ceil(n/s) "
                   "(approximate: no exact form)";
  return a;
}

} // namespace collsim::algorithms
