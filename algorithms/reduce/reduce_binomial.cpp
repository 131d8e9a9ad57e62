// Binomial-tree reduce (algorithms.md RD5).
//
// Source: MPICH MPIR_Reduce_intra_binomial (src/mpi/coll/reduce/reduce_intra_binomial.c); Open
// MPI ompi_coll_base_reduce_intra_binomial (coll/tuned reduce algorithm 5, unsegmented here); SMPI
// "binomial".
//
// Cost: lg p (a + n b + n g) for p a power of two, exact on the loggp engine: the root receives and
// reduces one vector from each of its lg p children in turn, each arriving as the previous
// reduction ends. For other p the textbook ceil(lg p)(a + n b + n g) is not exact (small subtrees
// finish early and their transfers overlap), so cost() declines.
//
// Schedule, relative rank vr = (r - root) mod p: for mask = 1, 2, 4, ...: if vr has bit mask set,
// send the accumulated vector to vr - mask and stop; otherwise, if vr + mask < p, receive from it
// into tmp and reduce into data. One scratch vector, as in MPICH: a child's receive waits for the
// reduction of the previous child's vector; the send waits for the last reduction.

#include "bcast/bcast_reduce_trees.hpp"
#include "reduce/reduce_algorithms.hpp"

#include <bit>

namespace collsim::algorithms {
namespace {

constexpr const char* kName = "binomial";

std::optional<CostTerms> binomial_cost(const Request& req) {
  if (!std::has_single_bit(req.ranks)) {
    return std::nullopt;
  }
  const auto rounds = static_cast<double>(detail::floor_log2(req.ranks));
  const auto n = static_cast<double>(req.bytes.value);
  return CostTerms{rounds, rounds * n, rounds * n};
}

} // namespace

AlgorithmInfo describe_reduce_binomial() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::reduce;
  a.summary = "binomial tree: each rank reduces its children's vectors, then sends to its parent";
  a.source = "MPICH MPIR_Reduce_intra_binomial; Open MPI ompi_coll_base_reduce_intra_binomial";
  a.aliases = {"ompi:5", "ompi:binomial", "mpich:binomial", "smpi:binomial", "smpi:ompi_binomial"};
  a.constraints = {
      "commutative operation unless the root is rank 0 (relative ranks reorder the operands)"};
  a.check = [](const Request& req) {
    return detail::size_limit_refusal(
        detail::tree_reduce_counts(req.ranks, req.root, 1, 1, detail::binomial_tree(false)));
  };
  a.generate = [](const Request& req) {
    return detail::generate_tree_reduce(req, kName, detail::binomial_tree(false), 0, 1);
  };
  a.cost = binomial_cost;
  a.cost_formula = "lg p (a + n b + n g) (exact for p a power of two)";
  return a;
}

} // namespace collsim::algorithms
