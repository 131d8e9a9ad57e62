// Ring reduce-scatter (algorithms.md RS3): the first phase of the ring allreduce, shifted by one
// block so that rank r ends with the reduced block r.
//
// Source: P. Patarasuk and X. Yuan, "Bandwidth optimal all-reduce algorithms for clusters of
// workstations", JPDC 69(2), 2009; Open MPI ompi_coll_base_reduce_scatter_intra_ring (coll/tuned
// reduce_scatter algorithm 3); SMPI "ompi_ring".
//
// Cost (p divides n): (p-1)a + (p-1)/p n b + (p-1)/p n g, bandwidth-optimal. When p does not
// divide n the blocks differ by one byte and a step is paced by the largest block, so cost()
// declines.
//
// Schedule, rank r, blocks taken mod p: step s = 0..p-2: send block r-s-1 to r+1; recv_reduce
// block r-s-2 from r-1. The partial sum of block b starts at rank b+1 and collects one contribution
// a hop until it reaches rank b in step p-2. Received blocks are combined straight into `data`: no
// block is received while a send of the same block is pending, so no scratch buffer is needed.
// Zero-length messages (blocks shorter than p bytes) are kept, so the alpha term does not depend
// on n.
//
// The pattern is shared with the mirrored collective (detail::block_ring_pass). `order=renamed`
// runs it over the placement's ranks node by node (detail::renamed_ring_order, the rank renaming
// of Rico-Gallego and Diaz-Martin, NESUS 2014): r+1 and r-1 become the ring neighbours of r's
// position, each rank keeps its own block.
// Dependencies (2(p-1) operations, p-2 dependencies per rank): a send forwards the partial sum
// the previous step produced, so it waits for that recv_reduce. A recv_reduce combines into a
// block no earlier operation of this rank touched (its own contribution, not yet sent).

#include "generator_support.hpp"
#include "reduce_scatter/reduce_scatter_algorithms.hpp"

namespace collsim::algorithms {
namespace {

constexpr const char* kName = "ring";

} // namespace

AlgorithmInfo describe_reduce_scatter_ring() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::reduce_scatter;
  a.summary = "partial sums travel p-1 hops around the ring, each rank adding its contribution";
  a.source = "Patarasuk & Yuan, JPDC 2009; Open MPI ompi_coll_base_reduce_scatter_intra_ring";
  a.aliases = {"ompi:3", "ompi:ring", "smpi:ompi_ring"};
  a.constraints = {"commutative operation only (ranks combine in ring order)"};
  a.params = {detail::ring_order_param()};
  a.counts = true; // MPI_Reduce_scatter's counts: Open MPI's ring takes rcounts
  a.check = [](const Request& req) {
    return detail::size_limit_refusal(
        detail::collapsed_counts(detail::block_ring_counts(req.ranks), req));
  };
  a.symmetry = detail::block_ring_symmetry;
  a.generate = [](const Request& req) {
    return detail::block_ring_pass(req, kName, detail::Arrive::combine);
  };
  a.cost = [](const Request& req) { return detail::block_ring_cost(req, detail::Arrive::combine); };
  a.cost_formula = "(p-1)a + (p-1)/p n b + (p-1)/p n g (exact when p divides n)";
  return a;
}

} // namespace collsim::algorithms
