// Linear (flat-tree) broadcast (algorithms.md BC1).
//
// Source: Open MPI ompi_coll_base_bcast_intra_basic_linear (coll/tuned bcast algorithm 1): the
// root posts one send of the whole vector to every other rank, in rank order; SMPI "flattree".
//
// Cost: a + (p-1) n b, exact on the loggp engine: the root's p-1 sends leave back to back and
// their latencies overlap. The textbook single-port form, (p-1)(a + n b), charges a start-up per
// send.
//
// Schedule: the root sends data to ranks 0..p-1 (skipping itself) with no dependencies; every
// other rank receives the vector into data once.

#include "bcast/bcast_algorithms.hpp"
#include "bcast/bcast_reduce_trees.hpp"

namespace collsim::algorithms {
namespace {

constexpr const char* kName = "linear";

std::optional<CostTerms> linear_cost(const Request& req) {
  if (req.ranks < 2) {
    return CostTerms{};
  }
  const auto sends = static_cast<double>(req.ranks - 1);
  return CostTerms{1.0, sends * static_cast<double>(req.bytes.value), 0.0};
}

} // namespace

AlgorithmInfo describe_bcast_linear() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::bcast;
  a.summary = "flat tree: the root sends the whole vector to every other rank in turn";
  a.source = "Open MPI ompi_coll_base_bcast_intra_basic_linear";
  a.aliases = {"ompi:1", "ompi:basic_linear", "smpi:flattree"};
  a.check = [](const Request& req) {
    return detail::size_limit_refusal(
        detail::tree_bcast_counts(req.ranks, req.root, 1, detail::flat_tree(false)));
  };
  a.generate = [](const Request& req) {
    return detail::generate_tree_bcast(req, kName, detail::flat_tree(false), 0);
  };
  a.cost = linear_cost;
  a.cost_formula = "a + (p-1) n b (single-port textbook form: (p-1)(a + n b))";
  return a;
}

} // namespace collsim::algorithms
