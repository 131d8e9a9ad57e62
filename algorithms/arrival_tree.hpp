#pragma once
// Internal: the reduction tree of the imbalance-aware algorithms (reduce and allreduce
// `arrival_tree`), built from the ranks' arrival times (Request::arrivals) the way Marendic,
// Lemeire, Haber, Vucinic and Schelkens's clairvoyant reduction does ("An Investigation into the
// Performance of Reduction Algorithms under Load Imbalance", Euro-Par 2012, LNCS 7484; J.
// Supercomputing 72(5), 2016): repeatedly the two ranks whose partial results are ready first
// combine, the earlier one sending to the later, so early arrivals do their work while the late
// ones are still away and a late rank's vector is combined once, with one message, when it comes.

#include "bcast/bcast_reduce_trees.hpp"

#include <vector>

namespace collsim::algorithms::detail {

/// The tree as a TreeShape for generate_tree_reduce: every rank's parent and its children in the
/// order it combines them. `root` never sends (it ends with the result). Without arrivals (all at
/// once) it is a binomial-like tree of depth ceil(lg p). `step` is the time one combine takes (a
/// message and a reduction), which orders merges whose ready times are close.
struct ArrivalTree {
  std::vector<TreeLinks> links; ///< per rank
};
ArrivalTree arrival_tree(const std::vector<double>& arrivals, std::uint32_t p, core::Rank root,
                         double step);

/// The time one combine of `bytes` takes on the request's topology: the route latency and
/// bottleneck between rank 0 and rank p-1 (the farthest pair of a node-major placement), two
/// software overheads and a reduction; 1 us + bytes / 10 GB/s without a topology.
double combine_estimate(const Request& req, std::uint64_t bytes);

/// The request's arrivals, or p zeros when it has none.
std::vector<double> arrivals_of(const Request& req);

/// The rank that arrives last (the highest such rank on ties).
core::Rank latest_rank(const std::vector<double>& arrivals);

} // namespace collsim::algorithms::detail
