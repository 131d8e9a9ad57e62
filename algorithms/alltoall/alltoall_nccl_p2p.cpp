// NCCL's all-to-all: grouped ncclSend/ncclRecv to and from every peer (algorithms.md section 2.4),
// as nccl-tests' alltoall_perf and the frameworks call it (ncclGroupStart; for each peer r:
// ncclSend(block r), ncclRecv(into block r); ncclGroupEnd).
//
// Source: NCCL src/enqueue.cc (ncclFuncAlltoAll expanded into a send and a receive per peer;
// scheduleP2pTasksToPlan, addP2pToPlan: channels and protocol per operation, chunk size),
// src/init.cc (computeBuffSizes: P2P chunk sizes, the p2pSchedule of rounds), src/graph/paths.cc
// (ncclTopoComputeP2pChannels). The plan is shared with gather and scatter (nccl_p2p.hpp).
//
// NCCL's plan. Round i (0 <= i < p) pairs a send with a receive as init.cc's ncclP2pSchedule
// orders them (p2p_schedule below: r+1, r+2, ... on one node; across nodes, groups of 8 ranks of
// a node visited in a quadratic sequence of group deltas). Round 0 is the rank's own block, a
// local copy. Each send or receive of b bytes is split into `channels` parts (the
// number addP2pToPlan picks for b; stacks::nccl_p2p_choice), each part runs on its own channel
// (thread block) and moves in chunks through the peer's FIFO of NCCL_STEPS slots: Simple chunks of
// the P2P chunk size (NCCL_P2P_NVL_CHUNKSIZE 512 KiB on an NVLink-only node, NCCL_P2P_PCI_CHUNKSIZE
// 128 KiB on PCIe, NCCL_P2P_NET_CHUNKSIZE 128 KiB with several nodes, quartered for a network peer
// when b < one chunk and halved when b < 8 chunks), LL chunks of half an LL step (32 KiB of data).
// All rounds are in flight at once: NCCL packs them into the channels' work batches.
//
// Schedule, rank r: copy its own block data[r b, +b) -> data[n + r b, +b); then for each round
// (send peer t, receive peer f), for each chunk index, for each part k (issue stream k): receive
// the chunk from f into data[n + f b + ..] and send the chunk of data[t b + ..] to t. No
// dependencies:
// every operation touches its own bytes. The NCCL stack lowers it with the ring's protocol
// constants (launch, per-step latency, FIFO slots, line efficiency): NCCL's tuning model has none
// for point-to-point transfers, and they run through the same connections and protocol buffers.
//
// alltoallv (per-rank counts, as frameworks call it for MoE token dispatch: grouped ncclSend /
// ncclRecv of each pair's count): the same rounds with each pair's count at MPI's contiguous
// displacements; an empty pair still synchronises (one message). The channel split is NCCL's for
// the request's average block (NCCL picks it per operation; the average stands for all).
//
// Cost: about a + (p-1)/p n b without contention; no closed form is declared (protocol latencies
// and line efficiency are not alpha-beta terms).

#include "alltoall/alltoall_algorithms.hpp"
#include "nccl_p2p.hpp"

#include "collsim/core/layout.hpp"

namespace collsim::algorithms {

AlgorithmInfo describe_alltoall_nccl_p2p() {
  nccl::P2pCollective c;
  c.collective = core::CollectiveKind::alltoall;
  c.summary = "NCCL's all-to-all: grouped send/recv with every peer, each split over channels and "
              "moved in P2P chunks";
  c.source = "NCCL src/enqueue.cc scheduleP2pTasksToPlan, addP2pToPlan; src/init.cc p2pSchedule";
  c.cost_formula = "approximate, not exact: about a + (p-1)/p n b without contention, plus the "
                   "protocol's launch, per-chunk latencies and line efficiency";
  c.constraints = {"bytes divisible by ranks (uniform)"};
  c.refusal = [](const Request& req) -> std::string {
    return req.counts.empty() && req.bytes.value % req.ranks != 0
               ? "alltoall needs bytes divisible by ranks"
               : "";
  };
  c.counts = true;
  c.emit = [](const Request& req, const nccl::P2pPlan& pl, nccl::Sink& sink) {
    const core::BlockLayout lay(req.collective, req.ranks, req.bytes.value, req.counts);
    nccl::emit_p2p(
        pl, sink,
        [&](core::Rank r, core::Rank to, core::Rank from) {
          return std::pair{
              std::optional<nccl::P2pSide>{{to, lay.send_offset(r, to), lay.count(r, to)}},
              std::optional<nccl::P2pSide>{{from, lay.recv_offset(from, r), lay.count(from, r)}}};
        },
        [&](core::Rank r, nccl::Sink& s) {
          s.copy(detail::data_range(lay.send_offset(r, r), lay.count(r, r)),
                 detail::data_range(lay.recv_offset(r, r), lay.count(r, r)));
        });
  };
  return nccl::describe_p2p(c);
}

} // namespace collsim::algorithms
