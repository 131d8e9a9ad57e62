// NCCL's scatter: ncclScatter is expanded into one ncclRecv of every rank's block from the root
// and, on the root, one ncclSend per rank (src/enqueue.cc, ncclFuncScatter), run as grouped
// point-to-point transfers (nccl_p2p.hpp: p2pSchedule rounds, channels per transfer, P2P chunks).
//
// Schedule: the root sends data[block q] to q in the round whose send peer is q; rank r != root
// receives data[block r] from the root in the round whose receive peer is the root (the root's
// own block stays in place). Each transfer is split into `channels` parts and chunks as
// addP2pToPlan does; no dependencies (every operation touches its own bytes).
//
// Cost: about a + (p-1)/p n b at the root without contention; no closed form is declared.

#include "nccl_p2p.hpp"
#include "scatter/scatter_algorithms.hpp"

namespace collsim::algorithms {

AlgorithmInfo describe_scatter_nccl_p2p() {
  nccl::P2pCollective c;
  c.collective = core::CollectiveKind::scatter;
  c.summary = "NCCL's scatter: the root sends every rank its block as a point-to-point transfer, "
              "split over channels and moved in P2P chunks";
  c.source = "NCCL src/enqueue.cc (ncclFuncScatter as send/recv), addP2pToPlan; src/init.cc "
             "p2pSchedule";
  c.cost_formula =
      "approximate, not exact: about a + (p-1)/p n b at the root without "
      "contention, plus the protocol's launch, per-chunk latencies and line efficiency";
  c.emit = nccl::rooted_p2p(false);
  c.counts = true; // gatherv / scatterv: each block at its count (core::BlockLayout)
  return nccl::describe_p2p(c);
}

} // namespace collsim::algorithms
