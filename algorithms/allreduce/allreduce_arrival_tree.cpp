// Imbalance-aware allreduce: reduce over the arrival tree to the rank that arrives last, then a
// binomial broadcast from it. The early ranks combine while the late one is away and their
// partial result waits at the late rank, which reduces it on arrival and starts the broadcast:
// after the last arrival the call costs one reduction and ceil(lg p) broadcast steps, where a
// fixed-root reduce_bcast pays the late rank's whole path to the root and back.
//
// Source: the reduction tree of Marendic et al. (Euro-Par 2012, LNCS 7484; J. Supercomputing
// 2016; detail::arrival_tree), rooted at the last arrival; the broadcast is MPICH's binomial
// MPIR_Bcast_intra_binomial from that rank. Arrival times are the scenario's skew
// (Request::arrivals); with none, the root is rank p-1 and the tree binomial-like.
//
// Schedule: a composition (compose.hpp) of detail::generate_tree_reduce over the arrival tree
// (root L = the latest rank, two receive buffers, unsegmented) and detail::generate_tree_bcast
// over MPICH's binomial tree rooted at L; on each rank the broadcast starts after its part of the
// reduction.
//
// Cost: none declared (the tree follows the arrivals).

#include "allreduce/allreduce_algorithms.hpp"
#include "arrival_tree.hpp"
#include "compose.hpp"

#include <memory>
#include <numeric>

namespace collsim::algorithms {
namespace {

constexpr const char* kName = "arrival_tree";

compose::Composition build(const Request& req) {
  const std::vector<double> arrivals = detail::arrivals_of(req);
  const core::Rank last = detail::latest_rank(arrivals);
  auto tree = std::make_shared<detail::ArrivalTree>(detail::arrival_tree(
      arrivals, req.ranks, last, detail::combine_estimate(req, req.bytes.value)));
  const detail::TreeShape up = [tree](std::uint32_t, core::Rank, core::Rank r,
                                      detail::TreeLinks& out) { out = tree->links[r]; };
  Request part = req;
  part.params.clear();
  part.root = last;
  std::vector<core::Rank> all(req.ranks);
  std::iota(all.begin(), all.end(), core::Rank{0});
  compose::Composition c(req.ranks);
  const auto place = [&](core::Schedule s) {
    compose::Placement pl;
    pl.schedule = std::make_shared<const core::Schedule>(std::move(s));
    pl.ranks = all;
    c.add(std::move(pl));
  };
  part.collective = core::CollectiveKind::reduce;
  place(detail::generate_tree_reduce(part, "arrival_tree", up, 0, 2));
  part.collective = core::CollectiveKind::bcast;
  place(detail::generate_tree_bcast(part, "binomial", detail::binomial_tree(true), 0));
  return c;
}

} // namespace

AlgorithmInfo describe_allreduce_arrival_tree() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::allreduce;
  a.summary = "imbalance-aware: reduce over an arrival-time tree to the last arrival, then "
              "binomial broadcast from it";
  a.source = "Marendic et al., Euro-Par 2012 (LNCS 7484); MPICH MPIR_Bcast_intra_binomial";
  a.aliases = {"imbalance_aware"};
  a.constraints = {"commutative operation (ranks combine in arrival order)"};
  a.check = [](const Request& req) { return detail::size_limit_refusal(build(req).counts()); };
  a.generate = [](const Request& req) {
    const compose::Composition c = build(req);
    return c.build(make_header(req, c.tmp_bytes(), kName));
  };
  a.cost_formula = "none (the tree follows the arrivals); after the last arrival about one "
                   "reduction and ceil(lg p) broadcast steps";
  return a;
}

} // namespace collsim::algorithms
