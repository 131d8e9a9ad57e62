// NCCL ring reduce (algorithms.md 1.2, section 2.4: the only NCCL algorithm for Reduce): a chain
// along the ring that ends at the root, one chain per channel, pipelined by chunks.
//
// Source: NCCL v2.30 src/device/reduce.h runRing (ncclPatternPipelineTo: the root's ring successor
// sends, the ranks after it recvReduceSend, the root recvReduceCopy), chunk sizes from
// src/enqueue.cc (REDUCE_CHUNKSTEPS = 1: Simple 512 KiB, LL 32 KiB, LL128 576,000 B), wire model
// from src/graph/tuning.cc (section 3.1).
//
// Schedule. Ring order per channel: node 0's ranks, node 1's, ..., each node entered at a
// different local rank per channel (nccl::ring_order); the chain starts at the
// root's ring successor and follows the ring to the root. Channel c owns slice c of the buffer
// (block_range(n, channels, c)), cut into chunks; for each chunk the first rank sends its data,
// every middle rank recv_reduces it into its own buffer and sends the sum on, the root
// recv_reduces it. (NCCL reduces into the next rank's staging buffer and leaves non-root user
// buffers alone; here the partial sums land in the middle ranks' data, which MPI_Reduce allows.)
// Chunks of all channels are interleaved. Cost about (p-1+K-1)(a + c b + c g) for K chunks of c
// bytes on one channel (derived); the protocol's launch, per-message latencies and wire efficiency
// are not alpha-beta-gamma terms, so no closed form is declared.
//
// The pattern is shared with the mirrored collective (nccl::block_ring / nccl::ring_chain in
// nccl_rings.cpp). Dependencies: a forwarding send waits for the reduction into its chunk.

#include "nccl_support.hpp"
#include "reduce/reduce_algorithms.hpp"

namespace collsim::algorithms {
namespace {

constexpr const char* kName = "nccl_ring";

} // namespace

AlgorithmInfo describe_reduce_nccl_ring() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::reduce;
  a.summary = "NCCL ring: a pipelined reduction chain along the ring ending at the root, one per "
              "channel";
  a.source = "NCCL v2.30 src/device/reduce.h runRing; src/enqueue.cc chunk sizes";
  a.aliases = {"nccl:ring"};
  a.params = {nccl::protocol_param(), nccl::channels_param(), nccl::buffer_param()};
  a.check = [](const Request& req) {
    return nccl::ring_chain_refusal(req, detail::Arrive::combine);
  };
  a.loop_bytes = [](const Request& req) { return nccl::chunk_loop(req, nccl::Algo::ring); };
  a.generate = [](const Request& req) {
    return nccl::ring_chain(req, kName, detail::Arrive::combine);
  };
  a.cost = [](const Request&) { return std::optional<CostTerms>{}; };
  a.cost_formula = "approximate, not exact: about (p + K - 2)(a + c b + c g) for K chunks of c "
                   "bytes on one channel, plus the protocol's launch, per-message latencies and "
                   "wire efficiency, which are not alpha-beta-gamma terms";
  return a;
}

} // namespace collsim::algorithms
