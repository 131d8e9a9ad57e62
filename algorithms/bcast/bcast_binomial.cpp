// Binomial-tree broadcast (algorithms.md BC7).
//
// Source: MPICH MPIR_Bcast_intra_binomial (src/mpi/coll/bcast/bcast_intra_binomial.c); Open MPI
// ompi_coll_base_bcast_intra_binomial (coll/tuned bcast algorithm 6, unsegmented here); SMPI
// "binomial_tree".
//
// Cost: lg p (a + n b) for p a power of two, exact on the loggp engine: the root sends the whole
// vector to its lg p subtrees, largest first, and the rank reached last is lg p hops away. For
// other p the textbook ceil(lg p)(a + n b) overestimates (the root's back-to-back sends overlap
// their latencies: p = 3 takes a + 2 n b), so cost() declines.
//
// Schedule, relative rank vr = (r - root) mod p: a rank other than the root receives the vector
// from vr - lowbit(vr) into data; then it sends it to vr + m for m = lowbit(vr)/2 down to 1 (the
// root: from bit_ceil(p)/2) where vr + m < p. Each send waits for the receive; nothing else.

#include "bcast/bcast_algorithms.hpp"
#include "bcast/bcast_reduce_trees.hpp"

#include <bit>

namespace collsim::algorithms {
namespace {

constexpr const char* kName = "binomial";

std::optional<CostTerms> binomial_cost(const Request& req) {
  if (!std::has_single_bit(req.ranks)) {
    return std::nullopt;
  }
  const auto rounds = static_cast<double>(detail::floor_log2(req.ranks));
  return CostTerms{rounds, rounds * static_cast<double>(req.bytes.value), 0.0};
}

} // namespace

AlgorithmInfo describe_bcast_binomial() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::bcast;
  a.summary =
      "binomial tree: the root sends the whole vector to ceil(lg p) subtrees, largest first";
  a.source = "MPICH MPIR_Bcast_intra_binomial; Open MPI ompi_coll_base_bcast_intra_binomial";
  a.aliases = {"ompi:6", "ompi:binomial", "mpich:binomial", "smpi:binomial_tree"};
  a.check = [](const Request& req) {
    return detail::size_limit_refusal(
        detail::tree_bcast_counts(req.ranks, req.root, 1, detail::binomial_tree(true)));
  };
  a.generate = [](const Request& req) {
    return detail::generate_tree_bcast(req, kName, detail::binomial_tree(true), 0);
  };
  a.cost = binomial_cost;
  a.cost_formula = "lg p (a + n b) (exact for p a power of two)";
  return a;
}

} // namespace collsim::algorithms
