// NCCL's two ring patterns, each shared by a collective and its mirror (nccl_support.hpp):
// the ring over blocks (allgather / reduce-scatter) and the pipelined chain along the ring
// (broadcast / reduce). The algorithm files (allgather_nccl_ring.cpp, reduce_scatter_nccl_ring.cpp,
// bcast_nccl_ring.cpp, reduce_nccl_ring.cpp) describe each side and cite NCCL's sources.

#include "nccl_support.hpp"

#include <algorithm>
#include <vector>

namespace collsim::algorithms::nccl {
namespace {

// ---- the ring over blocks ----

struct BlockRing {
  BlockChunking chunking;
  detail::Arrive how = detail::Arrive::store;
  std::vector<Ring> rings; // per channel
};

BlockRing block_ring_plan(const Request& req, detail::Arrive how) {
  const detail::NodeLayout layout = detail::node_layout(req);
  return BlockRing{block_chunking(req, Algo::ring, layout), how,
                   rings(req, layout, channels_of(req))};
}

void emit_block_ring(const BlockRing& pl, Sink& sink) {
  const BlockChunking& ch = pl.chunking;
  const std::uint32_t p = ch.p;
  if (p < 2) {
    return;
  }
  // Step t handles block ring[i-t] (store) or ring[i-1-t] (combine: the last step's block is
  // ring[i], the rank's own, fully reduced).
  const std::uint32_t shift = pl.how == detail::Arrive::combine ? 1 : 0;
  const std::uint64_t most = ch.most();
  for (core::Rank r = 0; r < p; ++r) {
    sink.begin(r);
    for (std::uint64_t k = 0; k < most; ++k) {
      for (std::uint32_t t = 0; t < p; ++t) {
        for (std::uint32_t c = 0; c < ch.channels; ++c) {
          if (k >= ch.chunks[c]) {
            continue;
          }
          const Ring& ring = pl.rings[c];
          sink.stream(c); // each channel its own thread block
          const std::uint32_t i = ring.pos[r];
          const core::Rank owner = ring.at(i + 2 * p - t - shift);
          const core::Range range = ch.range(owner, c, k);
          if (t == 0) {
            sink.send(ring.next(r), range);
            continue;
          }
          const std::uint32_t got = sink.receive(pl.how, ring.prev(r), range);
          if (t + 1 < p) {
            sink.send(ring.next(r), range, dep(got));
          }
        }
      }
    }
    if (sink.over_limit()) {
      return;
    }
  }
}

// ---- the chain along the ring ----

struct Chain {
  std::uint32_t p = 1;
  core::Rank root = 0;
  detail::Arrive how = detail::Arrive::store;
  std::vector<Ring> rings; // per channel
  std::vector<ChannelChunk> items;
};

Chain chain_plan(const Request& req, detail::Arrive how) {
  const detail::NodeLayout layout = detail::node_layout(req);
  const std::uint32_t channels = channels_of(req);
  const std::uint64_t chunk = chunk_bytes(Algo::ring, protocol_of(req), chunk_context(req, layout));
  return Chain{req.ranks, req.root, how, rings(req, layout, channels),
               interleaved_chunks(req.bytes.value, channels, chunk)};
}

void emit_chain(const Chain& pl, Sink& sink) {
  const std::uint32_t p = pl.p;
  if (p < 2) {
    return;
  }
  // The chain starts at the root (store) or at its ring successor (combine, ending at the root).
  const std::uint32_t shift = pl.how == detail::Arrive::combine ? 1 : 0;
  for (core::Rank r = 0; r < p; ++r) {
    sink.begin(r);
    for (const ChannelChunk& item : pl.items) {
      const Ring& ring = pl.rings[item.channel];
      sink.stream(item.channel); // each channel its own thread block
      const core::Range range = item.range();
      const std::uint32_t e = (ring.pos[r] + 2 * p - ring.pos[pl.root] - shift) % p; // chain index
      if (e == 0) {
        sink.send(ring.next(r), range);
        continue;
      }
      const std::uint32_t got = sink.receive(pl.how, ring.prev(r), range);
      if (e + 1 < p) {
        sink.send(ring.next(r), range, dep(got));
      }
    }
    if (sink.over_limit()) {
      return;
    }
  }
}

} // namespace

core::Schedule block_ring(const Request& req, const char* name, detail::Arrive how) {
  return build(req, name, Algo::ring, block_ring_plan(req, how), emit_block_ring);
}
std::string block_ring_refusal(const Request& req, detail::Arrive how) {
  if (std::string why = buffer_refusal(req); !why.empty()) {
    return why;
  }
  return size_refusal(block_ring_plan(req, how), emit_block_ring);
}
core::Schedule ring_chain(const Request& req, const char* name, detail::Arrive how) {
  return build(req, name, Algo::ring, chain_plan(req, how), emit_chain);
}
std::string ring_chain_refusal(const Request& req, detail::Arrive how) {
  if (std::string why = buffer_refusal(req); !why.empty()) {
    return why;
  }
  return size_refusal(chain_plan(req, how), emit_chain);
}

namespace {
std::uint64_t chunk_of(const Request& req, Algo a) {
  return chunk_bytes(a, protocol_of(req), chunk_context(req, detail::node_layout(req)));
}
} // namespace

std::uint64_t block_loop(const Request& req, Algo a) {
  return req.ranks < 2 ? 0 : std::uint64_t{req.ranks} * channels_of(req) * chunk_of(req, a);
}
std::uint64_t chunk_loop(const Request& req, Algo a) {
  return req.ranks < 2 ? 0 : std::uint64_t{channels_of(req)} * chunk_of(req, a);
}

} // namespace collsim::algorithms::nccl
