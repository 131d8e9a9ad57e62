// Linear (flat-tree) reduce (algorithms.md RD1).
//
// Source: Open MPI ompi_coll_base_reduce_intra_basic_linear (coll/tuned reduce algorithm 1): every
// rank sends its vector to the root, which receives them from rank p-1 down to 0 into one scratch
// buffer and reduces each in turn; SMPI "flat_tree" and "ompi_basic_linear".
//
// Cost: (p-1)(a + n b + n g) in the textbook single-port model. No exact form is declared: on the
// loggp engine the p-1 messages arrive back to back while the root reduces, so the time is
// a + (p-1) n b + n g when g <= b but a + n b + (p-1) n g when g > b.
//
// Schedule: a non-root rank sends data to the root. The root receives from p-1, p-2, ..., 0
// (skipping itself) into tmp and reduces into data; each receive waits for the reduction that read
// tmp before it.

#include "bcast/bcast_reduce_trees.hpp"
#include "reduce/reduce_algorithms.hpp"

namespace collsim::algorithms {
namespace {

constexpr const char* kName = "linear";

} // namespace

AlgorithmInfo describe_reduce_linear() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::reduce;
  a.summary = "flat tree: the root receives and reduces every other rank's vector in turn";
  a.source = "Open MPI ompi_coll_base_reduce_intra_basic_linear";
  a.aliases = {"ompi:1", "ompi:linear", "smpi:flat_tree", "smpi:ompi_basic_linear"};
  a.check = [](const Request& req) {
    return detail::size_limit_refusal(
        detail::tree_reduce_counts(req.ranks, req.root, 1, 1, detail::flat_tree(true)));
  };
  a.generate = [](const Request& req) {
    return detail::generate_tree_reduce(req, kName, detail::flat_tree(true), 0, 1);
  };
  a.cost = [](const Request&) { return std::optional<CostTerms>{}; };
  a.cost_formula = "about (p-1)(a + n b + n g) (single-port textbook form; not exact: receptions "
                   "and reductions overlap)";
  return a;
}

} // namespace collsim::algorithms
