// Ring allgather (algorithms.md AG4): every block travels p-1 hops around the ring r -> r+1.
//
// Source: R. Thakur, R. Rabenseifner and W. Gropp, "Optimization of collective communication
// operations in MPICH", IJHPCA 19(1), 2005; MPICH MPIR_Allgather_intra_ring; Open MPI
// ompi_coll_base_allgather_intra_ring (coll/tuned allgather algorithm 4); SMPI "NTSLR" and
// "NTSLR_NB" (the same neighbour ring, blocking and non-blocking).
//
// Cost (p divides n): (p-1)a + (p-1)/p n b. When p does not divide n the blocks differ by one byte
// (block_range) and a step is paced by the largest block in flight, so cost() declines.
//
// Schedule, rank r, blocks taken mod p: step s = 0..p-2: send block r-s to r+1; recv block r-s-1
// from r-1, straight into its final place in `data` (no scratch buffer). Blocks shorter than p
// bytes may be empty; their zero-length messages are kept on both sides, as MPICH sends them, so
// the schedule's shape (and its alpha term) does not depend on n.
//
// The pattern is shared with the mirrored collective (detail::block_ring_pass). `order=renamed`
// runs it over the placement's ranks node by node (detail::renamed_ring_order, the rank renaming
// of Rico-Gallego and Diaz-Martin, NESUS 2014): r+1 and r-1 become the ring neighbours of r's
// position, each rank keeps its own block.
// Dependencies (2(p-1) operations, p-2 dependencies per rank): a send forwards the block the
// previous step received, so it waits for that receive. A receive writes a block this rank has
// never touched before, so it waits for nothing.

#include "allgather/allgather_algorithms.hpp"
#include "generator_support.hpp"

#include <vector>

namespace collsim::algorithms {
namespace {

constexpr const char* kName = "ring";

} // namespace

AlgorithmInfo describe_allgather_ring() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::allgather;
  a.summary = "each rank forwards the block it received last to its right neighbour, p-1 steps";
  a.source = "Thakur, Rabenseifner & Gropp, IJHPCA 2005; MPICH MPIR_Allgather_intra_ring; Open MPI "
             "ompi_coll_base_allgather_intra_ring";
  a.aliases = {"ompi:4", "ompi:ring", "mpich:ring", "smpi:NTSLR", "smpi:NTSLR_NB"};
  a.params = {detail::ring_order_param()};
  a.counts = true; // allgatherv: Open MPI ompi_coll_base_allgatherv_intra_ring, MPICH
                   // MPIR_Allgatherv_intra_ring
  a.check = [](const Request& req) {
    return detail::size_limit_refusal(
        detail::collapsed_counts(detail::block_ring_counts(req.ranks), req));
  };
  a.symmetry = detail::block_ring_symmetry;
  a.generate = [](const Request& req) {
    return detail::block_ring_pass(req, kName, detail::Arrive::store);
  };
  a.cost = [](const Request& req) { return detail::block_ring_cost(req, detail::Arrive::store); };
  a.cost_formula = "(p-1)a + (p-1)/p n b (exact when p divides n)";
  return a;
}

} // namespace collsim::algorithms
