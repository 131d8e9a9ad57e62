// Linear scatter (algorithms.md SC1): the root sends every other rank its block, one blocking send
// after the other.
//
// Source: Open MPI ompi_coll_base_scatter_intra_basic_linear (coll/tuned scatter algorithm 1);
// SMPI "ompi_basic_linear".
//
// Cost (p >= 2): a + (n - the root's block) b on `uniform` (LogGP with o = g = 0), which is
// a + (p-1)/p n b when p divides n: the root's link is the bottleneck and the last block's latency
// overlaps nothing. Each blocking send starts when the previous one has left, so a per-message
// overhead o adds (p-1)o; linear_nb overlaps it instead.
//
// Schedule: the root sends data[block q] to rank q for q = 0..p-1 (not itself: its own block is
// in place); rank q != root receives into data[block q] (detail::linear_rooted, shared with linear
// gather). Dependency: each of the root's sends waits for the one before it (MPI_Send is
// blocking).

#include "generator_support.hpp"
#include "scatter/scatter_algorithms.hpp"

namespace collsim::algorithms {
namespace {

constexpr const char* kName = "linear";

} // namespace

AlgorithmInfo describe_scatter_linear() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::scatter;
  a.summary = "the root sends each rank its block, one blocking send after the other";
  a.source = "Open MPI ompi_coll_base_scatter_intra_basic_linear";
  a.aliases = {"ompi:1", "ompi:basic_linear", "smpi:ompi_basic_linear"};
  a.check = [](const Request& req) {
    return detail::size_limit_refusal(detail::linear_rooted_counts(req.ranks));
  };
  a.generate = [](const Request& req) { return detail::linear_rooted(req, kName, false); };
  a.cost = detail::linear_rooted_cost;
  a.counts = true; // gatherv / scatterv: Open MPI coll/basic's, zero counts skipped
  a.cost_formula = "a + (n - the root's block) b, i.e. a + (p-1)/p n b when p divides n";
  return a;
}

} // namespace collsim::algorithms
