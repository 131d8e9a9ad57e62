// NCCL ring allreduce (algorithms.md AR4, section 3.7): the buffer is split into `channels`
// slices; each slice runs its own ring reduce-scatter + allgather over the ranks in NCCL's ring
// order, in loops of p chunks of NCCL's chunk size for the protocol, the loops one after another.
//
// Source: NCCL v2.30 src/device/all_reduce.h runRing (ncclPatternRingTwice), chunk sizes from
// src/enqueue.cc (stepSize = buffSize/NCCL_STEPS, ALLREDUCE_CHUNKSTEPS = NCCL_STEPS/2 for Simple:
// 2 MiB chunks; LL 32 KiB; LL128 576,000 B), wire model from src/graph/tuning.cc (section 3.1).
//
// Schedule. Ring order per channel: node 0's ranks, node 1's, ..., each node entered at a
// different local rank per channel (nccl::ring_order). Channel c owns slice c of
// the buffer (block_range(n, channels, c)). A loop covers p chunks of the slice: p x chunk bytes,
// chunk k at k x chunk; the last, shorter loop splits what is left into p near-equal chunks
// (block_range; NCCL rounds that chunk up to 16 bytes instead). The rank at ring position i, with
// chunks numbered by ring position and taken mod p:
//   reduce-scatter: send chunk i-1; for j = 1..p-2: recv_reduce chunk i-1-j from prev, send it;
//                   recv_reduce chunk i (now fully reduced);
//   allgather:      send chunk i; for t = 0..p-2: recv chunk i-1-t from prev, send it on unless
//                   it is the last one (chunk i+1).
// That is 4(p-1) operations per rank per loop and channel. Channels are interleaved step by step
// in each rank's program (NCCL runs them on separate thread blocks; the IR issues in order, so a
// channel that waits would otherwise hold the others back). Zero-length chunks are kept.
//
// How it differs from the MPI ring (allreduce "ring", Open MPI
// ompi_coll_base_allreduce_intra_ring): the MPI ring moves n/p-byte blocks in one pass; NCCL cuts
// the vector into channels and loops of bounded chunks (its staging buffers are 4 MiB per
// connection), so a large message is many passes of p-chunk rings, each message pays the protocol's
// per-message latency, LL/LL128 put more bytes on the wire than they carry, and chunk i-1 (not i)
// is the first one a rank sends.
//
// Dependencies: a send waits for the receive that produced its chunk; an allgather receive
// overwrites a chunk the reduce-scatter sent, so it waits for that send.
//
// Cost: about 2(p-1)L a + 2(p-1)/p n b + (p-1)/p n g per channel pass, L = loops; the protocol's
// launch and per-message latencies and its wire efficiency are outside the alpha-beta-gamma terms,
// so no closed form is declared (NCCL's own model: section 3.4).

#include "allreduce/allreduce_algorithms.hpp"
#include "nccl_support.hpp"

#include <algorithm>
#include <vector>

namespace collsim::algorithms {
namespace {

using nccl::kNone;
constexpr const char* kName = "nccl_ring";

struct Plan {
  std::uint32_t p = 1;
  std::uint32_t channels = 1;
  std::uint64_t chunk = 1;
  std::vector<nccl::Ring> rings;  // per channel
  std::vector<std::uint64_t> lo;  // per channel: slice start
  std::vector<std::uint64_t> len; // per channel: slice length
  std::vector<std::uint64_t> loops;
};

Plan make_plan(const Request& req) {
  Plan pl;
  pl.p = req.ranks;
  pl.channels = nccl::channels_of(req);
  const detail::NodeLayout layout = detail::node_layout(req);
  pl.chunk =
      nccl::chunk_bytes(nccl::Algo::ring, nccl::protocol_of(req), nccl::chunk_context(req, layout));
  pl.rings = nccl::rings(req, layout, pl.channels);
  for (std::uint32_t c = 0; c < pl.channels; ++c) {
    const auto [lo, len] = nccl::channel_slice(req.bytes.value, pl.channels, c);
    pl.lo.push_back(lo);
    pl.len.push_back(len);
    pl.loops.push_back(nccl::chunk_count(len, pl.chunk * pl.p));
  }
  return pl;
}

void emit(const Plan& pl, nccl::Sink& sink) {
  const std::uint32_t p = pl.p;
  if (p < 2) {
    return;
  }
  const std::uint64_t max_loops = *std::max_element(pl.loops.begin(), pl.loops.end());
  const std::uint32_t steps = 2 * p - 1; // reduce-scatter steps 0..p-1, allgather p..2p-2
  // Per channel: the reduce-scatter send of step j (chunk i-1-j), and the last operation.
  std::vector<std::uint32_t> rs_send(static_cast<std::size_t>(pl.channels) * (p - 1));
  std::vector<std::uint32_t> last(pl.channels, kNone);
  // Every rank, or the representatives of a collapsed request (core/collapse.hpp).
  for (core::Rank r = 0; r < sink.programs(p); ++r) {
    sink.begin(r);
    for (std::uint64_t l = 0; l < max_loops; ++l) {
      for (std::uint32_t q = 0; q < steps; ++q) {
        for (std::uint32_t c = 0; c < pl.channels; ++c) {
          if (l >= pl.loops[c]) {
            continue;
          }
          const std::uint64_t start = pl.lo[c] + l * p * pl.chunk;
          const std::uint64_t left = pl.len[c] - l * p * pl.chunk;
          const auto chunk = [&](std::uint32_t k) {
            k %= p;
            if (left >= p * pl.chunk) {
              return detail::data_range(start + k * pl.chunk, pl.chunk);
            }
            const auto [off, n] = core::block_range(left, p, k);
            return detail::data_range(start + off, n);
          };
          const nccl::Ring& ring = pl.rings[c];
          sink.stream(c); // each channel its own thread block
          const std::uint32_t i = ring.pos[r];
          const core::Rank next = ring.next(r);
          const core::Rank prev = ring.prev(r);
          std::uint32_t* sends = rs_send.data() + static_cast<std::size_t>(c) * (p - 1);
          std::uint32_t& prior = last[c];
          if (q == 0) {
            sends[0] = sink.send(next, chunk(i + p - 1));
          } else if (q < p - 1) {
            prior = sink.recv_reduce(prev, chunk(i + 2 * p - 1 - q));
            sends[q] = sink.send(next, chunk(i + 2 * p - 1 - q), nccl::dep(prior));
          } else if (q == p - 1) {
            prior = sink.recv_reduce(prev, chunk(i));
            prior = sink.send(next, chunk(i), nccl::dep(prior));
          } else {
            const std::uint32_t t = q - p; // allgather receive t: chunk i-1-t
            const std::uint32_t k = i + 2 * p - 1 - t;
            const std::uint32_t got = sink.recv(prev, chunk(k), nccl::dep(sends[t]));
            if (t + 2 < p) {
              sink.send(next, chunk(k), nccl::dep(got));
            }
          }
        }
      }
    }
    if (sink.over_limit()) {
      return;
    }
  }
}

core::Schedule generate(const Request& req) {
  return nccl::build(req, kName, nccl::Algo::ring, make_plan(req), emit);
}

/// Every rank runs the same steps at its ring position when the channel rings repeat every node
/// (nodes of m consecutive ranks: each channel enters every node at the same local rank,
/// nccl::ring_order) and every chunk of a loop has the same length (a last, shorter loop cut into
/// p equal chunks): the program of rank x is that of x mod m, moved by x - x mod m.
Symmetry symmetry(const Request& req) {
  if (req.ranks < 2 || !req.counts.empty()) {
    return {};
  }
  const detail::NodeLayout layout = detail::node_layout(req);
  const std::uint32_t m = layout.max_per_node();
  for (std::size_t j = 0; j < layout.members.size(); ++j) {
    const auto& members = layout.members[j];
    for (std::size_t i = 0; i < members.size(); ++i) {
      if (members.size() != m || members[i] != j * m + i) {
        return {};
      }
    }
  }
  const Plan pl = make_plan(req);
  for (std::uint32_t c = 0; c < pl.channels; ++c) {
    const std::uint64_t full = pl.loops[c] == 0 ? 0 : (pl.loops[c] - 1) * pl.p * pl.chunk;
    const std::uint64_t left = pl.len[c] - full;
    if (left < pl.p * pl.chunk && left % pl.p != 0) {
      return {};
    }
  }
  return {core::SymmetryKind::rotation, m};
}

} // namespace

AlgorithmInfo describe_allreduce_nccl_ring() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::allreduce;
  a.summary = "NCCL ring: per channel slice, ring reduce-scatter + allgather in loops of p "
              "protocol-sized chunks";
  a.source = "NCCL v2.30 src/device/all_reduce.h runRing; src/enqueue.cc chunk sizes; "
             "src/graph/tuning.cc latencies";
  a.aliases = {"nccl:ring"};
  a.params = {nccl::protocol_param(), nccl::channels_param(), nccl::buffer_param()};
  a.constraints = {};
  a.check = [](const Request& req) {
    if (std::string why = nccl::buffer_refusal(req); !why.empty()) {
      return why;
    }
    return nccl::size_refusal(make_plan(req), emit, req.collapse_to);
  };
  a.generate = generate;
  a.symmetry = symmetry;
  // One loop of every channel, p chunks of each channel's slice (make_plan): a message that much
  // shorter leaves each slice p chunks shorter, its last loop as it was.
  a.loop_bytes = [](const Request& req) { return nccl::block_loop(req, nccl::Algo::ring); };
  a.cost = [](const Request&) { return std::optional<CostTerms>{}; };
  a.cost_formula = "approximate, not exact: about 2(p-1)L a + 2(p-1)/p n b + (p-1)/p n g with L "
                   "loops of p chunks per channel, plus the protocol's launch, per-message "
                   "latencies and wire efficiency, which are not alpha-beta-gamma terms";
  return a;
}

} // namespace collsim::algorithms
