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
// Dependencies: a forwarding send waits for the receive of its chunk.

#include "bcast/bcast_algorithms.hpp"
#include "nccl_support.hpp"

#include <algorithm>
#include <vector>

namespace collsim::algorithms {
namespace {

constexpr const char* kName = "nccl_ring";

struct Plan {
  std::uint32_t p = 1;
  core::Rank root = 0;
  std::vector<nccl::Ring> rings;                            // per channel
  std::vector<std::pair<std::uint32_t, core::Range>> items; // (channel, chunk), interleaved
};

Plan make_plan(const Request& req) {
  Plan pl;
  pl.p = req.ranks;
  const std::uint32_t channels = nccl::channels_of(req);
  const detail::NodeLayout layout = detail::node_layout(req);
  nccl::ChunkContext ctx;
  ctx.collective = req.collective;
  ctx.bytes = req.bytes.value;
  ctx.channels = channels;
  ctx.ranks = pl.p;
  ctx.nodes = layout.nodes();
  const std::uint64_t chunk = nccl::chunk_bytes(nccl::Algo::ring, nccl::protocol_of(req), ctx);
  pl.rings = nccl::rings(layout, channels);
  pl.root = req.root;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> slices;
  std::uint64_t most = 0;
  for (std::uint32_t c = 0; c < channels; ++c) {
    slices.push_back(nccl::channel_slice(req.bytes.value, channels, c));
    most = std::max(most, nccl::chunk_count(slices.back().second, chunk));
  }
  for (std::uint64_t k = 0; k < most; ++k) {
    for (std::uint32_t c = 0; c < channels; ++c) {
      const auto [lo, len] = slices[c];
      if (k * chunk < len) {
        pl.items.emplace_back(c,
                              detail::data_range(lo + k * chunk, std::min(chunk, len - k * chunk)));
      }
    }
  }
  return pl;
}

void emit(const Plan& pl, nccl::Sink& sink) {
  const std::uint32_t p = pl.p;
  if (p < 2) {
    return;
  }
  for (core::Rank r = 0; r < p; ++r) {
    sink.begin(r);
    for (const auto& [c, range] : pl.items) {
      const nccl::Ring& ring = pl.rings[c];
      const std::uint32_t i = ring.pos[r];
      const std::uint32_t d =
          (i + p - ring.pos[pl.root]) % p; // distance from the root along the chain
      const core::Rank next = ring.next(r);
      const core::Rank prev = ring.prev(r);
      if (d == 0) {
        sink.send(next, range);
        continue;
      }
      const std::uint32_t got = sink.recv(prev, range);
      if (d + 1 < p) {
        sink.send(next, range, nccl::dep(got));
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

AlgorithmInfo describe_bcast_nccl_ring() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::bcast;
  a.summary = "NCCL ring: a pipelined chain along the ring from the root, one per channel";
  a.source = "NCCL v2.30 src/device/broadcast.h runRing; src/enqueue.cc chunk sizes";
  a.aliases = {"nccl:ring"};
  a.params = {nccl::protocol_param(), nccl::channels_param()};
  a.check = [](const Request& req) { return detail::size_limit_refusal(count(make_plan(req))); };
  a.generate = generate;
  a.cost = [](const Request&) { return std::optional<CostTerms>{}; };
  a.cost_formula = "approximate, not exact: about (p + K - 2)(a + c b) for K chunks of c bytes "
                   "on one channel, plus the protocol's launch, per-message latencies and wire "
                   "efficiency, which are not alpha-beta terms";
  return a;
}

} // namespace collsim::algorithms
