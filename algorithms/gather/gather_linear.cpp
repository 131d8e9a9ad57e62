// Linear gather (algorithms.md GA1): every rank sends its block straight to the root, which
// receives them in rank order.
//
// Source: Open MPI ompi_coll_base_gather_intra_basic_linear (coll/tuned gather algorithm 1); SMPI
// "ompi_basic_linear".
//
// Cost (p >= 2): a + (n - the root's block) b on `uniform` (LogGP with o = g = 0), which is
// a + (p-1)/p n b when p divides n: all blocks leave at once, and the root's link takes them one
// after the other. The textbook (p-1)a of a blocking loop appears here as (p-1)o: the root's
// receives are blocking, each posted when the one before it has completed.
//
// Schedule: rank r != root sends data[block r] to the root; the root receives block q from rank q
// for q = 0..p-1 (its own block is already in place; detail::linear_rooted, shared with linear
// scatter). Dependency: each of the root's receives
// waits for the one before it (Open MPI's blocking MPI_Recv loop).

#include "gather/gather_algorithms.hpp"
#include "generator_support.hpp"

namespace collsim::algorithms {
namespace {

constexpr const char* kName = "linear";

} // namespace

AlgorithmInfo describe_gather_linear() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::gather;
  a.summary = "every rank sends its block to the root, which receives them in rank order";
  a.source = "Open MPI ompi_coll_base_gather_intra_basic_linear";
  a.aliases = {"ompi:1", "ompi:basic_linear", "smpi:ompi_basic_linear"};
  a.check = [](const Request& req) {
    return detail::size_limit_refusal(detail::linear_rooted_counts(req.ranks));
  };
  a.generate = [](const Request& req) { return detail::linear_rooted(req, kName, true); };
  a.cost = detail::linear_rooted_cost;
  a.counts = true; // gatherv / scatterv: Open MPI coll/basic's, zero counts skipped
  a.cost_formula = "a + (n - the root's block) b, i.e. a + (p-1)/p n b when p divides n";
  return a;
}

} // namespace collsim::algorithms
