// NCCL ring allgather (algorithms.md AG4, section 3.7): every channel handles its slice of every
// rank's block; each slice is passed around the ring in chunks of NCCL's chunk size.
//
// Source: NCCL v2.30 src/device/all_gather.h runRing (ncclPatternRing), chunk sizes from
// src/enqueue.cc (ALLGATHER_CHUNKSTEPS = NCCL_STEPS/2: Simple 2 MiB, LL 32 KiB, LL128 576,000 B),
// wire model from src/graph/tuning.cc (section 3.1).
//
// Schedule. Ring order per channel: node 0's ranks, node 1's, ..., each node entered at a
// different local rank per channel (nccl::ring_order). Channel c owns slice c of
// every block (block b is block_range(n, p, b); its slice block_range(|b|, channels, c)); the
// slices are cut into chunks, and for each chunk k the rank at ring position i does
//   send its own block's chunk to next; for t = 1..p-1: recv the chunk of block ring[i-t] from
//   prev, and send it on unless t = p-1.
// That is 2(p-1) operations per rank per chunk and channel; channels are interleaved step by step.
// A block shorter than the others may have an empty last chunk: its zero-length messages are kept.
//
// The pattern is shared with the mirrored collective (nccl::block_ring / nccl::ring_chain in
// nccl_rings.cpp). Dependencies: a forwarding send waits for the receive of its chunk; receives
// write chunks nothing else touches.
//
// Cost: about (p-1)K a + (p-1)/p n b for K chunks per channel; the protocol's launch, per-message
// latencies and wire efficiency are not alpha-beta terms, so no closed form is declared.

#include "allgather/allgather_algorithms.hpp"
#include "nccl_support.hpp"

namespace collsim::algorithms {
namespace {

constexpr const char* kName = "nccl_ring";

} // namespace

AlgorithmInfo describe_allgather_nccl_ring() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::allgather;
  a.summary = "NCCL ring: each channel's slice of every block goes around the ring in "
              "protocol-sized chunks";
  a.source = "NCCL v2.30 src/device/all_gather.h runRing; src/enqueue.cc chunk sizes";
  a.aliases = {"nccl:ring"};
  a.params = {nccl::protocol_param(), nccl::channels_param(), nccl::buffer_param()};
  a.check = [](const Request& req) { return nccl::block_ring_refusal(req, detail::Arrive::store); };
  a.loop_bytes = [](const Request& req) { return nccl::block_loop(req, nccl::Algo::ring); };
  a.generate = [](const Request& req) {
    return nccl::block_ring(req, kName, detail::Arrive::store);
  };
  a.cost = [](const Request&) { return std::optional<CostTerms>{}; };
  a.cost_formula = "approximate, not exact: about (p-1)K a + (p-1)/p n b for K chunks per "
                   "channel, plus the protocol's launch, per-message latencies and wire "
                   "efficiency, which are not alpha-beta terms";
  return a;
}

} // namespace collsim::algorithms
