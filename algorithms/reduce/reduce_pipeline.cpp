// Pipelined chain reduce (algorithms.md RD3).
//
// Source: Open MPI ompi_coll_base_reduce_intra_pipeline (coll/tuned reduce algorithm 3: a chain of
// fanout 1 through ompi_coll_base_reduce_generic, two receive buffers); SMPI "ompi_pipeline" (64
// KiB segments for large messages).
//
// Cost, k = ceil(n/s) segments of s bytes: (p + k - 2)(a + s(b + g)) in the textbook single-port
// model. No exact form is declared: on the loggp engine segments stream behind each other, giving
// (p-1)(a + s g) + (p + k - 2) s b when g <= b (the reductions keep up with the arrivals) and a
// reduction-bound time otherwise.
//
// Schedule, relative rank vr = (r - root) mod p, chain p-1 -> p-2 -> ... -> 0: rank vr receives
// each segment from vr+1 into tmp, reduces it into data and sends the reduced segment to vr-1.
// Segment j is received into tmp at its own offset, so the receive of segment j+1 is posted before
// segment j is reduced and no receive waits for a reduction.

#include "bcast/bcast_reduce_trees.hpp"
#include "reduce/reduce_algorithms.hpp"

namespace collsim::algorithms {
namespace {

constexpr const char* kName = "pipeline";
constexpr std::int64_t kDefaultSegment = std::int64_t{64} << 10;
constexpr std::uint32_t kBuffers = 2;

std::uint64_t segment_of(const Request& req) {
  return static_cast<std::uint64_t>(detail::param_or(req, "segment_size", kDefaultSegment));
}

} // namespace

AlgorithmInfo describe_reduce_pipeline() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::reduce;
  a.summary = "pipelined chain ending at the root, reduced segment by segment";
  a.source = "Open MPI ompi_coll_base_reduce_intra_pipeline (ompi_coll_base_reduce_generic)";
  a.aliases = {"ompi:3", "ompi:pipeline", "smpi:ompi_pipeline"};
  a.params = {{"segment_size", kDefaultSegment, 0, std::int64_t{1} << 30,
               "bytes per pipeline segment (0: the whole vector in one message)"}};
  a.constraints = {"commutative operation unless the root is rank 0",
                   "the last segment is shorter when segment_size does not divide n"};
  a.check = [](const Request& req) {
    const std::uint64_t k = detail::segment_count(req.bytes.value, segment_of(req));
    return detail::size_limit_refusal(
        detail::tree_reduce_counts(req.ranks, req.root, k, kBuffers, detail::chain_tree(1)));
  };
  a.generate = [](const Request& req) {
    return detail::generate_tree_reduce(req, kName, detail::chain_tree(1), segment_of(req),
                                        kBuffers);
  };
  a.cost = [](const Request&) { return std::optional<CostTerms>{}; };
  a.cost_formula =
      "about (p + k - 2)(a + s b + s g), k = ceil(n/s) (single-port textbook form; not "
      "exact: on loggp (p-1)(a + s g) + (p + k - 2) s b when g <= b)";
  return a;
}

} // namespace collsim::algorithms
