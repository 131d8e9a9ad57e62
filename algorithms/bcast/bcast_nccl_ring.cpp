// NCCL ring broadcast (algorithms.md 1.3, section 2.4: the only NCCL algorithm for Broadcast): a
// chain along the ring from the root, one chain per channel, pipelined by chunks.
//
// Source: NCCL v2.30 src/device/broadcast.h runRing (ncclPatternPipelineFrom: the root sends, the
// ranks after it recvCopySend, the rank before the root only receives), chunk sizes from
// src/enqueue.cc (BROADCAST_CHUNKSTEPS = 1: Simple 512 KiB, LL 32 KiB, LL128 576,000 B), wire model
// from src/graph/tuning.cc (section 3.1).
//
// Schedule. Ring order per channel: node 0's ranks, node 1's, ..., each node entered at a
// different local rank per channel (nccl::ring_order); the chain starts at the
// root and follows the ring, so it ends at the root's ring predecessor. Channel c owns slice c of
// the buffer (block_range(n, channels, c)), cut into chunks; for each chunk the root sends it to
// its ring successor, every middle rank receives it and sends it on, the last rank receives it.
// Chunks of all channels are interleaved. Cost about (p-1+K-1)(a + chunk b) for K chunks on one
// channel (derived); the protocol's launch, per-message latencies and wire efficiency are not
// alpha-beta terms, so no closed form is declared.
//
// The pattern is shared with the mirrored collective (nccl::block_ring / nccl::ring_chain in
// nccl_rings.cpp). Dependencies: a forwarding send waits for the receive of its chunk.

#include "bcast/bcast_algorithms.hpp"
#include "nccl_support.hpp"

namespace collsim::algorithms {
namespace {

constexpr const char* kName = "nccl_ring";

} // namespace

AlgorithmInfo describe_bcast_nccl_ring() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::bcast;
  a.summary = "NCCL ring: a pipelined chain along the ring from the root, one per channel";
  a.source = "NCCL v2.30 src/device/broadcast.h runRing; src/enqueue.cc chunk sizes";
  a.aliases = {"nccl:ring"};
  a.params = {nccl::protocol_param(), nccl::channels_param(), nccl::buffer_param()};
  a.check = [](const Request& req) { return nccl::ring_chain_refusal(req, detail::Arrive::store); };
  a.loop_bytes = [](const Request& req) { return nccl::chunk_loop(req, nccl::Algo::ring); };
  a.generate = [](const Request& req) {
    return nccl::ring_chain(req, kName, detail::Arrive::store);
  };
  a.cost = [](const Request&) { return std::optional<CostTerms>{}; };
  a.cost_formula = "approximate, not exact: about (p + K - 2)(a + c b) for K chunks of c bytes "
                   "on one channel, plus the protocol's launch, per-message latencies and wire "
                   "efficiency, which are not alpha-beta terms";
  return a;
}

} // namespace collsim::algorithms
