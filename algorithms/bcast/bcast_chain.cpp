// Segmented multi-chain broadcast (algorithms.md BC3).
//
// Source: Open MPI ompi_coll_base_bcast_intra_chain (coll/tuned bcast algorithm 2) with the chain
// topology of ompi_coll_base_topo_build_chain: the root heads `chains` chains of consecutive
// relative ranks (the first (p-1) mod f chains one rank longer) and sends every segment to each
// chain head in turn; each chain forwards it like the pipeline. Open MPI's default fanout
// (coll_tuned_bcast_chain_fanout) is 4; the segment size defaults to the pipeline's 128 KiB.
//
// Cost, f = min(chains, p-1), k = ceil(n/s) segments, L = (p-1)/f when f divides p-1:
// L a + (k f + L - 1) s b [derived], exact on the loggp engine when s divides n: the root sends
// k f segments back to back; the last one, to chain f-1, leaves after k f s b and crosses L links,
// latencies overlapping behind it. f = 1 gives the pipeline. When f does not divide p-1 the longer
// chains and the later-served chains compete for the critical path (which wins depends on a versus
// s b), so cost() declines; it also declines for a shorter last segment.
//
// Schedule: as the pipeline (generic segmented tree bcast), on the chain tree.

#include "bcast/bcast_algorithms.hpp"
#include "bcast/bcast_reduce_trees.hpp"

namespace collsim::algorithms {
namespace {

constexpr const char* kName = "chain";
constexpr std::int64_t kDefaultSegment = std::int64_t{128} << 10;
constexpr std::int64_t kDefaultChains = 4;

std::uint64_t segment_of(const Request& req) {
  return static_cast<std::uint64_t>(detail::param_or(req, "segment_size", kDefaultSegment));
}
std::uint32_t chains_of(const Request& req) {
  return static_cast<std::uint32_t>(detail::param_or(req, "chains", kDefaultChains));
}

std::optional<CostTerms> chain_cost(const Request& req) {
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
  const std::uint64_t p = req.ranks;
  const std::uint64_t f = std::min<std::uint64_t>(chains_of(req), p - 1);
  if ((p - 1) % f != 0) {
    return std::nullopt; // chains of two lengths
  }
  const std::uint64_t len = (p - 1) / f;
  const auto slots = static_cast<double>(k * f + len - 1);
  return CostTerms{static_cast<double>(len), slots * static_cast<double>(piece), 0.0};
}

} // namespace

AlgorithmInfo describe_bcast_chain() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::bcast;
  a.summary = "the root feeds `chains` pipelined chains of consecutive ranks, segment by segment";
  a.source = "Open MPI ompi_coll_base_bcast_intra_chain (ompi_coll_base_topo_build_chain)";
  a.aliases = {"ompi:2", "ompi:chain"};
  a.params = {{"chains", kDefaultChains, 1, 1024, "number of chains the root feeds (fanout)"},
              {"segment_size", kDefaultSegment, 0, std::int64_t{1} << 30,
               "bytes per pipeline segment (0: the whole vector in one message)"}};
  a.constraints = {"chains is capped at p-1",
                   "the last segment is shorter when segment_size does not divide n"};
  a.check = [](const Request& req) {
    const std::uint64_t k = detail::segment_count(req.bytes.value, segment_of(req));
    return detail::size_limit_refusal(
        detail::tree_bcast_counts(req.ranks, req.root, k, detail::chain_tree(chains_of(req))));
  };
  a.generate = [](const Request& req) {
    return detail::generate_tree_bcast(req, kName, detail::chain_tree(chains_of(req)),
                                       segment_of(req));
  };
  a.cost = chain_cost;
  a.cost_formula = "L a + (k f + L - 1) s b, f = min(chains, p-1), L = (p-1)/f, k = ceil(n/s) "
                   "(exact when f divides p-1 and s divides n)";
  return a;
}

} // namespace collsim::algorithms
