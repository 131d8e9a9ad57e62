// NCCL ring reduce-scatter (algorithms.md RS3, section 3.7): every channel handles its slice of
// every rank's block; each slice is reduced around the ring in chunks of NCCL's chunk size.
//
// Source: NCCL v2.30 src/device/reduce_scatter.h runRing (ncclPatternRing), chunk sizes from
// src/enqueue.cc (REDUCESCATTER_CHUNKSTEPS = NCCL_STEPS/2: Simple 2 MiB, LL 32 KiB, LL128
// 576,000 B), wire model from src/graph/tuning.cc (section 3.1).
//
// Schedule. Ring order per channel: node 0's ranks, node 1's, ..., each node entered at a
// different local rank per channel (nccl::ring_order). Channel c owns slice c of
// every block (block b is block_range(n, p, b); its slice block_range(|b|, channels, c)); the
// slices are cut into chunks, and for each chunk k the rank at ring position i does
//   send the chunk of block ring[i-1] to next; for t = 1..p-2: recv_reduce the chunk of block
//   ring[i-1-t] from prev and send it on; recv_reduce the chunk of its own block ring[i] (final).
// That is 2(p-1) operations per rank per chunk and channel; channels are interleaved step by step.
// A block shorter than the others may have an empty last chunk: its zero-length messages are kept.
//
// The pattern is shared with the mirrored collective (nccl::block_ring / nccl::ring_chain in
// nccl_rings.cpp). Dependencies: a forwarding send waits for the reduction into its chunk; each
// chunk of a rank is reduced once, after the rank sent nothing of it.
//
// Cost: about (p-1)K a + (p-1)/p n b + (p-1)/p n g for K chunks per channel; the protocol's launch,
// per-message latencies and wire efficiency are not alpha-beta-gamma terms, so no closed form is
// declared.

#include "nccl_support.hpp"
#include "reduce_scatter/reduce_scatter_algorithms.hpp"

namespace collsim::algorithms {
namespace {

constexpr const char* kName = "nccl_ring";

} // namespace

AlgorithmInfo describe_reduce_scatter_nccl_ring() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::reduce_scatter;
  a.summary = "NCCL ring: each channel's slice of every block is reduced around the ring in "
              "protocol-sized chunks";
  a.source = "NCCL v2.30 src/device/reduce_scatter.h runRing; src/enqueue.cc chunk sizes";
  a.aliases = {"nccl:ring"};
  a.params = {nccl::protocol_param(), nccl::channels_param(), nccl::buffer_param()};
  a.check = [](const Request& req) {
    return nccl::block_ring_refusal(req, detail::Arrive::combine);
  };
  a.loop_bytes = [](const Request& req) { return nccl::block_loop(req, nccl::Algo::ring); };
  a.generate = [](const Request& req) {
    return nccl::block_ring(req, kName, detail::Arrive::combine);
  };
  a.cost = [](const Request&) { return std::optional<CostTerms>{}; };
  a.cost_formula = "approximate, not exact: about (p-1)K a + (p-1)/p n b + (p-1)/p n g for K "
                   "chunks per channel, plus the protocol's launch, per-message latencies and "
                   "wire efficiency, which are not alpha-beta-gamma terms";
  return a;
}

} // namespace collsim::algorithms
