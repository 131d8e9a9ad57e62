// Imbalance-aware reduce: a reduction tree built from the ranks' arrival times, so that the ranks
// that arrive early combine among themselves while the late ones are still away, and a late
// rank's vector costs one message when it comes (detail::arrival_tree).
//
// Source: Marendic, Lemeire, Haber, Vucinic & Schelkens, "An Investigation into the Performance
// of Reduction Algorithms under Load Imbalance" (Euro-Par 2012, LNCS 7484: the clairvoyant tree
// from a priori arrival times) and "A novel MPI reduction algorithm resilient to imbalances in
// process arrival times" (J. Supercomputing 72(5), 2016). The arrival times are the scenario's
// skew (Request::arrivals): a library would learn them at run time, as the dynamic variants of
// those papers do; collsim knows them in advance, so this is the clairvoyant bound.
//
// Schedule: Open MPI's generic tree reduction (detail::generate_tree_reduce, unsegmented, two
// receive buffers so that a child's vector arrives while the previous one is reduced) over the
// arrival tree: a rank receives and reduces its children's vectors in merge order, then sends
// its partial result to its parent. With every rank arriving at once the tree is binomial-like
// (depth ceil(lg p)).
//
// Cost: no closed form is declared (the tree depends on the arrivals). With one rank late by D
// and the others on time, the root finishes at D + one combine (a message and a reduction) once
// the early ranks' tree is done before D.

#include "arrival_tree.hpp"
#include "reduce/reduce_algorithms.hpp"

#include <memory>

namespace collsim::algorithms {
namespace {

constexpr const char* kName = "arrival_tree";

detail::TreeShape shape_for(const Request& req) {
  auto tree = std::make_shared<detail::ArrivalTree>(
      detail::arrival_tree(detail::arrivals_of(req), req.ranks, req.root,
                           detail::combine_estimate(req, req.bytes.value)));
  return [tree](std::uint32_t, core::Rank, core::Rank r, detail::TreeLinks& out) {
    out = tree->links[r];
  };
}

} // namespace

AlgorithmInfo describe_reduce_arrival_tree() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::reduce;
  a.summary = "imbalance-aware: a tree built from arrival times, the earliest two partial results "
              "combining first; a late rank costs one message";
  a.source = "Marendic et al., Euro-Par 2012 (LNCS 7484) and J. Supercomputing 2016";
  a.aliases = {"imbalance_aware"};
  a.constraints = {"commutative operation (ranks combine in arrival order)"};
  a.check = [](const Request& req) {
    return detail::size_limit_refusal(
        detail::tree_reduce_counts(req.ranks, req.root, 1, 2, shape_for(req)));
  };
  a.generate = [](const Request& req) {
    return detail::generate_tree_reduce(req, kName, shape_for(req), 0, 2);
  };
  a.cost_formula = "none (the tree follows the arrivals); one rank late by D: about D + a + n b + "
                   "n g";
  return a;
}

} // namespace collsim::algorithms
