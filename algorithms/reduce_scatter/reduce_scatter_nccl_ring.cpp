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
// Dependencies: a forwarding send waits for the reduction into its chunk; each chunk of a rank is
// reduced once, after the rank sent nothing of it.
//
// Cost: about (p-1)K a + (p-1)/p n b + (p-1)/p n g for K chunks per channel; the protocol's launch,
// per-message latencies and wire efficiency are not alpha-beta-gamma terms, so no closed form is
// declared.

#include "nccl_support.hpp"
#include "reduce_scatter/reduce_scatter_algorithms.hpp"

#include <algorithm>
#include <vector>

namespace collsim::algorithms {
namespace {

constexpr const char* kName = "nccl_ring";

struct Plan {
  std::uint32_t p = 1;
  std::uint64_t n = 0;
  std::uint32_t channels = 1;
  std::uint64_t chunk = 1;
  std::vector<nccl::Ring> rings;     // per channel
  std::vector<std::uint64_t> chunks; // per channel
};

Plan make_plan(const Request& req) {
  Plan pl;
  pl.p = req.ranks;
  pl.n = req.bytes.value;
  pl.channels = nccl::channels_of(req);
  const detail::NodeLayout layout = detail::node_layout(req);
  nccl::ChunkContext ctx;
  ctx.collective = core::CollectiveKind::reduce_scatter;
  ctx.bytes = pl.n;
  ctx.channels = pl.channels;
  ctx.ranks = pl.p;
  ctx.nodes = layout.nodes();
  pl.chunk = nccl::chunk_bytes(nccl::Algo::ring, nccl::protocol_of(req), ctx);
  pl.rings = nccl::rings(layout, pl.channels);
  for (std::uint32_t c = 0; c < pl.channels; ++c) {
    pl.chunks.push_back(nccl::block_chunks(pl.n, pl.p, pl.channels, c, pl.chunk));
  }
  return pl;
}

void emit(const Plan& pl, nccl::Sink& sink) {
  const std::uint32_t p = pl.p;
  if (p < 2) {
    return;
  }
  const std::uint64_t most = *std::max_element(pl.chunks.begin(), pl.chunks.end());
  for (core::Rank r = 0; r < p; ++r) {
    sink.begin(r);
    for (std::uint64_t k = 0; k < most; ++k) {
      for (std::uint32_t t = 0; t < p; ++t) {
        for (std::uint32_t c = 0; c < pl.channels; ++c) {
          if (k >= pl.chunks[c]) {
            continue;
          }
          // Step t handles block ring[i-1-t]; the last step's is ring[i], the rank's own.
          const nccl::Ring& ring = pl.rings[c];
          const std::uint32_t i = ring.pos[r];
          const core::Rank next = ring.next(r);
          const core::Rank prev = ring.prev(r);
          const core::Rank owner = ring.at(i + 2 * p - 1 - t);
          const core::Range range = nccl::block_chunk(pl.n, p, owner, pl.channels, c, pl.chunk, k);
          if (t == 0) {
            sink.send(next, range);
            continue;
          }
          const std::uint32_t got = sink.recv_reduce(prev, range);
          if (t + 1 < p) {
            sink.send(next, range, nccl::dep(got));
          }
        }
      }
    }
    if (sink.over_limit()) {
      return;
    }
  }
}

detail::OpCounts count(const Plan& pl) {
  nccl::Sink sink;
  emit(pl, sink);
  return sink.counts();
}

core::Schedule generate(const Request& req) {
  const Plan pl = make_plan(req);
  core::ScheduleHeader h = make_header(req, 0, kName);
  h.protocol = nccl::make_protocol(nccl::Algo::ring, nccl::protocol_of(req), req);
  core::Schedule s(std::move(h));
  const detail::OpCounts counts = count(pl);
  s.reserve(counts.ops, counts.deps);
  nccl::Sink sink(s);
  emit(pl, sink);
  s.finish();
  return s;
}

} // namespace

AlgorithmInfo describe_reduce_scatter_nccl_ring() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::reduce_scatter;
  a.summary = "NCCL ring: each channel's slice of every block is reduced around the ring in "
              "protocol-sized chunks";
  a.source = "NCCL v2.30 src/device/reduce_scatter.h runRing; src/enqueue.cc chunk sizes";
  a.aliases = {"nccl:ring"};
  a.params = {nccl::protocol_param(), nccl::channels_param()};
  a.check = [](const Request& req) { return detail::size_limit_refusal(count(make_plan(req))); };
  a.generate = generate;
  a.cost = [](const Request&) { return std::optional<CostTerms>{}; };
  a.cost_formula = "approximate, not exact: about (p-1)K a + (p-1)/p n b + (p-1)/p n g for K "
                   "chunks per channel, plus the protocol's launch, per-message latencies and "
                   "wire efficiency, which are not alpha-beta-gamma terms";
  return a;
}

} // namespace collsim::algorithms
