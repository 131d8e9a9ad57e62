// Pipelined chain broadcast (algorithms.md BC4).
//
// Source: Open MPI ompi_coll_base_bcast_intra_pipeline (coll/tuned bcast algorithm 3, a chain of
// fanout 1 through ompi_coll_base_bcast_intra_generic); SMPI "ompi_pipeline" (128 KiB segments,
// the segment size Open MPI's fixed rules used for large messages); MVAPICH2-GDR's pipelined chain.
//
// Cost, k = ceil(n/s) segments of s bytes: (p-1) a + (p + k - 2) s b, exact on the loggp engine
// when s divides n (or k = 1, s = n): the last segment leaves the root after k s b and crosses
// p-1 links, and segments stream behind each other, so each hop's latency is paid once. The
// textbook single-port form, (p + k - 2)(a + s b), charges a start-up per segment and slot. A
// shorter last segment makes cost() decline.
//
// Schedule, relative rank vr = (r - root) mod p: rank vr receives each segment from vr-1 into data
// and sends it on to vr+1; the receive of segment j+1 is posted before segment j is forwarded.

#include "bcast/bcast_algorithms.hpp"
#include "bcast/bcast_reduce_trees.hpp"

namespace collsim::algorithms {
namespace {

constexpr const char* kName = "pipeline";
constexpr std::int64_t kDefaultSegment = std::int64_t{128} << 10;

std::uint64_t segment_of(const Request& req) {
  return static_cast<std::uint64_t>(detail::param_or(req, "segment_size", kDefaultSegment));
}

std::optional<CostTerms> pipeline_cost(const Request& req) {
  const std::uint64_t n = req.bytes.value;
  const std::uint64_t seg = segment_of(req);
  const std::uint64_t k = detail::segment_count(n, seg);
  if (k > 1 && n % seg != 0) {
    return std::nullopt; // a shorter last segment
  }
  const std::uint64_t piece = k == 1 ? n : seg;
  if (req.ranks < 2) {
    return CostTerms{};
  }
  const auto slots = static_cast<double>(req.ranks + k - 2);
  return CostTerms{static_cast<double>(req.ranks - 1), slots * static_cast<double>(piece), 0.0};
}

} // namespace

AlgorithmInfo describe_bcast_pipeline() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::bcast;
  a.summary = "pipelined chain root -> root+1 -> ... -> root-1, in segments of segment_size bytes";
  a.source = "Open MPI ompi_coll_base_bcast_intra_pipeline; Awan et al., MVAPICH2-GDR pipelined "
             "chain (arXiv 1707.09414)";
  a.aliases = {"ompi:3", "ompi:pipeline", "smpi:ompi_pipeline"};
  a.params = {{"segment_size", kDefaultSegment, 0, std::int64_t{1} << 30,
               "bytes per pipeline segment (0: the whole vector in one message)"}};
  a.constraints = {"the last segment is shorter when segment_size does not divide n"};
  a.check = [](const Request& req) {
    const std::uint64_t k = detail::segment_count(req.bytes.value, segment_of(req));
    return detail::size_limit_refusal(
        detail::tree_bcast_counts(req.ranks, req.root, k, detail::chain_tree(1)));
  };
  a.generate = [](const Request& req) {
    return detail::generate_tree_bcast(req, kName, detail::chain_tree(1), segment_of(req));
  };
  a.cost = pipeline_cost;
  a.cost_formula = "(p-1) a + (p + k - 2) s b, k = ceil(n/s) (exact when s divides n; single-port "
                   "textbook form: (p + k - 2)(a + s b))";
  return a;
}

} // namespace collsim::algorithms
