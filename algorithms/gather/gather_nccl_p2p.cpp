// NCCL's gather: ncclGather is expanded into one ncclSend of every rank's block to the root and,
// on the root, one ncclRecv per rank (src/enqueue.cc, ncclFuncGather), run as grouped
// point-to-point transfers (nccl_p2p.hpp: p2pSchedule rounds, channels per transfer, P2P chunks).
//
// Schedule: rank r != root sends data[block r] to the root in the round whose send peer is the
// root; the root receives block q from q into data[block q] in the round whose receive peer is q
// (its own block is in place). Each transfer is split into `channels` parts and chunks as
// addP2pToPlan does; no dependencies (every operation touches its own bytes).
//
// Cost: about a + (p-1)/p n b at the root without contention; no closed form is declared.

#include "gather/gather_algorithms.hpp"
#include "nccl_p2p.hpp"

namespace collsim::algorithms {

AlgorithmInfo describe_gather_nccl_p2p() {
  nccl::P2pCollective c;
  c.collective = core::CollectiveKind::gather;
  c.summary = "NCCL's gather: every rank sends its block to the root as a point-to-point transfer, "
              "split over channels and moved in P2P chunks";
  c.source = "NCCL src/enqueue.cc (ncclFuncGather as send/recv), addP2pToPlan; src/init.cc "
             "p2pSchedule";
  c.cost_formula =
      "approximate, not exact: about a + (p-1)/p n b at the root without "
      "contention, plus the protocol's launch, per-chunk latencies and line efficiency";
  c.emit = nccl::rooted_p2p(true);
  c.counts = true; // gatherv / scatterv: each block at its count (core::BlockLayout)
  return nccl::describe_p2p(c);
}

} // namespace collsim::algorithms
