#pragma once
// Internal: what the NCCL generators (ring, tree, PAT, NVLS-tree) share (algorithms.md section 3,
// NCCL v2.30.7): the `protocol` and `channels` parameters, the protocol's wire model from
// tuning.cc's baseLatencies/hwLatencies (section 3.1), the chunk sizes of enqueue.cc (section 3.7),
// the channel split, the ring order, and the double binary tree of src/graph/trees.cc (AR13).
//
// Units: NCCL's tables are in microseconds; core::Protocol holds seconds.

#include "collsim/algorithms/nccl_constants.hpp"
#include "generator_support.hpp"

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace collsim::algorithms::nccl {

inline constexpr std::uint32_t kDefaultChannels = 2; ///< our default `channels`
inline constexpr std::uint32_t kMaxChannels = 64;    ///< MAXCHANNELS

/// `protocol`: simple (default), ll, ll128.
ParamSpec protocol_param();
/// `channels`: how many slices the buffer is split into, each run by its own ring or tree.
ParamSpec channels_param();
/// `buffsize`: the connection buffer of the run's protocol in bytes (NCCL_BUFFSIZE,
/// NCCL_LL_BUFFSIZE, NCCL_LL128_BUFFSIZE); a step is an eighth of it. 0: NCCL's default.
ParamSpec buffer_param();
/// "" or why the request's `buffsize` is refused (nonzero and below kSmallestBuffer).
std::string buffer_refusal(const Request& req);
Proto protocol_of(const Request& req);
std::uint32_t channels_of(const Request& req);
/// Payload bytes per wire byte: LL 8 of 16, LL128 120 of 128, Simple 1.
double efficiency(Proto p);
/// True when the request's topology joins the devices of a node by NVLink (an NVLink link or an
/// NVSwitch next to rank 0's device); false without a topology or on a full mesh (NCCL's PCI
/// class).
bool intra_node_nvlink(const Request& req);
/// core::Protocol for (algorithm, protocol) on the request's topology: launch = baseLatency,
/// message_latency = hwLatency of NVLINK or PCI, inter_node_latency = hwLatency of NET, each
/// shared out over the messages that NCCL's latency formula charges it once for (NVLS, NVLSTree,
/// CollNet; see the definition). The loggp engine charges a message the larger of this and its
/// route's latency.
core::Protocol make_protocol(Algo a, Proto p, const Request& req);

/// buffSizes[proto]: Simple 4 MiB, LL 512 KiB (8 lines x 512 threads x 8 steps x 16 B), LL128
/// 4,915,200 B (120 elements x 640 threads x 8 steps x 8 B).
std::uint64_t buffer_bytes(Proto p);
/// What the chunk size depends on besides the algorithm and protocol.
struct ChunkContext {
  core::CollectiveKind collective = core::CollectiveKind::allreduce;
  std::uint64_t bytes = 0;    ///< nBytes: the message size in nccl-tests' convention
  std::uint32_t channels = 1; ///< nChannels
  std::uint32_t ranks = 1;    ///< nRanks
  std::uint32_t nodes = 1;    ///< nNodes
  std::uint32_t heads = 1;    ///< NVLS heads per node (NVLS-tree only)
  /// NVLS-tree's chunk before the size rules shrink it, min(nvlsChunkSize, nvlsTreeMaxChunkSize)
  /// (the `max_chunk` parameter); 0: NCCL 2.21.5's defaults, 128 KiB, 64 KiB from 4 nodes.
  std::uint64_t nvls_tree_chunk = 0;
  /// The protocol's connection buffer, buffSizes[proto] (the `buffsize` parameter); 0: NCCL's
  /// default (buffer_bytes).
  std::uint64_t buffer = 0;
};
/// `max_chunk` (nvls_tree): the chunk NCCL starts from before its size rules; 0: the default.
ParamSpec nvls_tree_chunk_param();
/// enqueue.cc's chunkSize in payload bytes (section 3.7): stepSize (buffSizes[proto] / NCCL_STEPS,
/// ctx.buffer or buffer_bytes) x chunkSteps (chunkSteps = 4 for
/// ring allreduce/allgather/reduce_scatter with Simple, else 1), halved for LL, x15/16 for LL128,
/// then the size-dependent shrinking of Tree+LL128, NVLS-tree and PAT.
std::uint64_t chunk_bytes(Algo a, Proto p, const ChunkContext& ctx);

/// The `index`-th channel's slice of [0, total) (near-equal, block_range).
inline std::pair<std::uint64_t, std::uint64_t>
channel_slice(std::uint64_t total, std::uint32_t channels, std::uint32_t index) {
  return core::block_range(total, channels, index);
}
/// Number of chunks of at most `chunk` bytes in `length` bytes (0 for an empty length).
inline std::uint64_t chunk_count(std::uint64_t length, std::uint64_t chunk) {
  return (length + chunk - 1) / chunk;
}

/// Block-wise collectives (allgather, reduce_scatter): channel `channel` handles its slice of every
/// block (block `b` is core::block_range(n, p, b)); chunk `k` of that slice, which is empty past
/// the end of a short block.
core::Range block_chunk(std::uint64_t n, std::uint32_t p, std::uint32_t b, std::uint32_t channels,
                        std::uint32_t channel, std::uint64_t chunk, std::uint64_t k);
/// How many chunks channel `channel` runs over the blocks (the longest block's slice decides).
std::uint64_t block_chunks(std::uint64_t n, std::uint32_t p, std::uint32_t channels,
                           std::uint32_t channel, std::uint64_t chunk);

/// NCCL's ring of channel `channel`: the ranks of node 0, then node 1, ..., so that the ring
/// crosses each node boundary once; inside a node of m ranks the order starts at local rank
/// channel mod m (rank order, wrapping), so that channel c leaves every node from local rank
/// c - 1 and enters it at local rank c. NCCL's ring order comes from its topology search
/// (src/graph/search.cc, rings.cc; algorithms.md 1.10 items 5 and 6), which spreads channels over
/// the node's NICs; rotating the entry rank is our stand-in: on rail-optimised nodes (a NIC per
/// GPU) c channels cross the network through c different NICs instead of all through one.
/// On NVLink meshes the ring search of nccl_mesh_rings.cpp replaces the order inside a node.
std::vector<core::Rank> ring_order(const detail::NodeLayout& layout, std::uint32_t channel = 0);

/// One channel's ring: the order and each rank's position in it.
struct Ring {
  std::vector<core::Rank> order;
  std::vector<std::uint32_t> pos; ///< pos[rank]: its index in `order`
  [[nodiscard]] core::Rank at(std::uint64_t i) const { return order[i % order.size()]; }
  [[nodiscard]] core::Rank next(core::Rank r) const { return at(pos[r] + 1); }
  [[nodiscard]] core::Rank prev(core::Rank r) const { return at(pos[r] + order.size() - 1); }
};
/// The rings of channels 0 .. channels-1 (ring_order).
std::vector<Ring> rings(const detail::NodeLayout& layout, std::uint32_t channels);
/// The same on the request's topology: inside a node whose GPUs are joined by direct NVLinks
/// (a mesh such as DGX-1's hybrid cube-mesh, no switch), every channel follows a cycle of direct
/// links, as NCCL's ring search keeps to NVLink (src/graph/search.cc), and the channels are
/// spread over the links in proportion to their count; nodes without such a cycle keep
/// ring_order's rotation (nccl_mesh_rings.cpp).
std::vector<Ring> rings(const Request& req, const detail::NodeLayout& layout,
                        std::uint32_t channels);

inline constexpr std::uint32_t kNone = 0xffffffffU;
/// One node of a binary tree over node indices: parent and up to two children (kNone: absent).
struct TreeLinks {
  std::uint32_t parent = kNone;
  std::uint32_t child0 = kNone;
  std::uint32_t child1 = kNone;
  bool operator==(const TreeLinks&) const = default;
};
/// ncclGetBtree (algorithms.md AR13): node i's links in the binary tree rooted at 0 over `n` nodes.
TreeLinks btree(std::uint32_t n, std::uint32_t i);
/// ncclGetDtree: tree 0 is btree; tree 1 is its mirror i -> n-1-i when n is even, its shift
/// i -> i+1 mod n when n is odd.
TreeLinks dtree(std::uint32_t n, std::uint32_t i, std::uint32_t tree);

/// The most hops from any node to the root, over both trees of dtree(n, ., 0/1).
std::uint32_t dtree_height(std::uint32_t n);
/// Where a participant issues one part of one chunk of a pipelined tree (reduce up, broadcast
/// down). NCCL runs the up and the down part on separate warps, each bounded by NCCL_STEPS chunks
/// of FIFO per connection and channel; the IR issues one program in order, so a participant's
/// parts are interleaved by position: part of chunk x at level l sits at x + tree_lag(channels) x
/// l, where a receive is one level above its send. Levels grow along the chunk's path (up the tree,
/// then down), so a participant waits for data that its peer sent a lag of chunks earlier (the
/// FIFO), never for a round trip; and both ends of every connection list its messages in the same
/// order (FIFO matching), since each receive sits exactly one lag after its send.
/// Ties go by chunk, then by part.
struct TreeStep {
  std::uint64_t position;
  std::uint32_t item;
  std::uint32_t part;
  bool operator<(const TreeStep& o) const {
    return position != o.position ? position < o.position
           : item != o.item       ? item < o.item
                                  : part < o.part;
  }
};
/// Positions per level: 2 x NCCL_STEPS x channels chunks (NCCL's FIFO of NCCL_STEPS chunks per
/// connection, each way, for every channel in the interleaved sequence of chunks).
inline std::uint64_t tree_lag(std::uint32_t channels) {
  return 2 * kSteps * std::max<std::uint32_t>(channels, 1);
}
/// A participant's steps, sorted: for each of `items` chunks, the parts `levels(x)` lists (levels
/// ascending, part i at levels(x)[i]).
template <class Levels>
std::vector<TreeStep> tree_steps(std::size_t items, std::uint32_t channels, Levels levels) {
  const std::uint64_t lag = tree_lag(channels);
  std::vector<TreeStep> out;
  out.reserve(items * 2);
  for (std::size_t x = 0; x < items; ++x) {
    std::uint32_t part = 0;
    for (const std::uint32_t level : levels(x)) {
      out.push_back({x + lag * level, static_cast<std::uint32_t>(x), part++});
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

/// Either counts a generator's operations (for check() and Schedule::reserve) or appends them; a
/// generator written once against it cannot reserve a different number than it emits.
class Sink {
public:
  Sink() = default; ///< counts only
  /// Counts only, the first `programs` ranks' (a collapsed request's, Request::collapse_to; 0:
  /// every rank's).
  explicit Sink(std::uint32_t programs) : programs_(programs) {}
  explicit Sink(core::Schedule& s) : schedule_(&s) {}
  /// The programs to emit of a schedule for p ranks: the schedule's own (a collapsed one holds
  /// its representatives only, core/collapse.hpp), else p or the counted share.
  [[nodiscard]] std::uint32_t programs(std::uint32_t p) const {
    if (schedule_ != nullptr) {
      return schedule_->ranks();
    }
    return programs_ != 0 ? programs_ : p;
  }
  void begin(core::Rank r) {
    if (schedule_ != nullptr) {
      schedule_->begin_rank(r);
    }
    next_ = 0;
  }
  /// The issue stream of the operations that follow (core::Schedule::set_stream), taken modulo
  /// the IR's kMaxStreams: NCCL's channels run on separate thread blocks, a tree's reduce-up and
  /// broadcast-down on separate warps.
  void stream(std::uint32_t k) {
    if (schedule_ != nullptr) {
      schedule_->set_stream(k % core::Schedule::kMaxStreams);
    }
  }
  std::uint32_t add(core::OpKind kind, core::Rank peer, core::Range target,
                    std::span<const std::uint32_t> deps = {}) {
    if (schedule_ != nullptr) {
      detail::add_op(*schedule_, kind, peer, target, deps);
    }
    ++counts_.ops;
    counts_.deps += deps.size();
    return next_++;
  }
  std::uint32_t send(core::Rank peer, core::Range r, std::span<const std::uint32_t> deps = {}) {
    return add(core::OpKind::send, peer, r, deps);
  }
  std::uint32_t recv(core::Rank peer, core::Range r, std::span<const std::uint32_t> deps = {}) {
    return add(core::OpKind::recv, peer, r, deps);
  }
  std::uint32_t recv_reduce(core::Rank peer, core::Range r,
                            std::span<const std::uint32_t> deps = {}) {
    return add(core::OpKind::recv_reduce, peer, r, deps);
  }
  /// A local copy `from` -> `into` (a rank's own block of a point-to-point exchange).
  std::uint32_t copy(core::Range from, core::Range into) {
    if (schedule_ != nullptr) {
      schedule_->add(core::OpKind::copy, 0, into, from, {});
    }
    ++counts_.ops;
    return next_++;
  }
  /// recv or recv_reduce, as the side of a mirrored pair wants.
  std::uint32_t receive(detail::Arrive how, core::Rank peer, core::Range r,
                        std::span<const std::uint32_t> deps = {}) {
    return add(detail::receive_kind(how), peer, r, deps);
  }
  [[nodiscard]] const detail::OpCounts& counts() const { return counts_; }
  /// True once more operations were counted than a schedule holds (counting may stop early).
  [[nodiscard]] bool over_limit() const { return counts_.ops > core::Schedule::kMaxOps; }

private:
  core::Schedule* schedule_ = nullptr;
  std::uint32_t programs_ = 0;
  detail::OpCounts counts_;
  std::uint32_t next_ = 0;
};

/// Emits a schedule through a counting Sink first (for Schedule::reserve), then for real, under a
/// header carrying NCCL's protocol for (algo, the request's protocol). `emit(plan, sink)` is the
/// generator's one description of its operations.
/// `header(h)` may add to the header (agents, for example).
template <class Plan, class Emit, class Header = void (*)(core::ScheduleHeader&)>
core::Schedule build(
    const Request& req, const char* name, Algo algo, const Plan& pl, Emit emit,
    Header header = [](core::ScheduleHeader&) {}) {
  core::ScheduleHeader h = make_header(req, 0, name);
  h.protocol = make_protocol(algo, protocol_of(req), req);
  header(h);
  core::Schedule s(std::move(h));
  Sink counter(s.ranks());
  emit(pl, counter);
  s.reserve(counter.counts().ops, counter.counts().deps);
  Sink sink(s);
  emit(pl, sink);
  s.finish();
  return s;
}
/// "" or why the schedule `emit(plan, ...)` describes would exceed the IR's size limit; `programs`:
/// a collapsed request's (Request::collapse_to), whose representatives alone are built.
template <class Plan, class Emit>
std::string size_refusal(const Plan& pl, Emit emit, std::uint32_t programs = 0) {
  Sink counter(programs);
  emit(pl, counter);
  return detail::size_limit_refusal(counter.counts());
}

/// One chunk of one channel's slice of the buffer.
struct ChannelChunk {
  std::uint32_t channel;
  std::uint64_t offset;
  std::uint64_t length;
  [[nodiscard]] core::Range range() const { return detail::data_range(offset, length); }
};
/// Channel c's slice of [0, bytes) (channel_slice) cut into chunks of `chunk` bytes, the chunks of
/// all channels interleaved: chunk 0 of every channel, then chunk 1, ... (NCCL's channels run
/// concurrently; the IR issues in order).
std::vector<ChannelChunk> interleaved_chunks(std::uint64_t bytes, std::uint32_t channels,
                                             std::uint64_t chunk);

/// chunk_bytes' context for a request on `layout`: its collective, size, channels, ranks, nodes.
ChunkContext chunk_context(const Request& req, const detail::NodeLayout& layout);

/// The chunking of a block-wise collective (allgather, reduce-scatter): channel c handles its slice
/// of every block in chunks[c] chunks of `chunk` bytes (block_chunk gives each range).
struct BlockChunking {
  std::uint32_t p = 1;
  std::uint64_t n = 0;
  std::uint32_t channels = 1;
  std::uint64_t chunk = 1;
  std::vector<std::uint64_t> chunks;
  [[nodiscard]] std::uint64_t most() const;
  [[nodiscard]] core::Range range(std::uint32_t block, std::uint32_t channel,
                                  std::uint64_t k) const {
    return block_chunk(n, p, block, channels, channel, chunk, k);
  }
};
BlockChunking block_chunking(const Request& req, Algo a, const detail::NodeLayout& layout);

/// Why NCCL would not run PAT for the request, or "": PAT is Simple-only and enabled with one rank
/// per node (algorithms.md AG15, section 2.4).
std::string pat_refusal(const Request& req);

/// NCCL's ring over blocks (ncclPatternRing, algorithms.md AG4/RS3), shared by allgather (store:
/// step t passes on the chunk of block ring[i-t], starting with the rank's own) and reduce-scatter
/// (combine: block ring[i-1-t], so that the last step's reduction completes the rank's own block):
/// channel c handles its slice of every block in chunks of NCCL's chunk size, and for each chunk
/// the rank at ring position i sends its first block to next; for t = 1..p-1 receives (or
/// recv_reduces) the chunk from prev and sends it on unless t = p-1. Chunks and channels are
/// interleaved step by step. The schedule carries NCCL's Ring protocol.
core::Schedule block_ring(const Request& req, const char* name, detail::Arrive how);
/// "" or why block_ring(req, ...) would exceed the IR's size limit.
std::string block_ring_refusal(const Request& req, detail::Arrive how);
/// AlgorithmInfo::loop_bytes of the block-wise algorithms (block_chunking: the ring over blocks,
/// PAT; and the ring allreduce, whose loops are p chunks of each channel's slice): a chunk of
/// every channel's slice of every block (a message that much shorter has blocks a chunk per
/// channel shorter, the same last chunks).
std::uint64_t block_loop(const Request& req, Algo a);

/// NCCL's pipelined chain along the ring (ncclPatternPipelineFrom/To), shared by broadcast (store:
/// the chain starts at the root and ends at the root's ring predecessor; each rank receives a chunk
/// and sends it on) and reduce (combine: the chain starts at the root's ring successor and ends at
/// the root; each rank recv_reduces the chunk into its own and sends the sum on). Channel c owns
/// slice c of the buffer, cut into chunks; chunks of all channels are interleaved. (NCCL's reduce
/// combines into the next rank's staging buffer and leaves non-root user buffers alone; here the
/// partial sums land in the middle ranks' data, which MPI_Reduce allows.)
core::Schedule ring_chain(const Request& req, const char* name, detail::Arrive how);
std::string ring_chain_refusal(const Request& req, detail::Arrive how);
/// AlgorithmInfo::loop_bytes of the algorithms that cut each channel's slice of the buffer into
/// chunks (interleaved_chunks: the chain along the ring, the tree): a chunk of every channel.
std::uint64_t chunk_loop(const Request& req, Algo a);

/// A dependency list of at most one entry: `dep(kNone)` is empty.
inline std::span<const std::uint32_t> dep(const std::uint32_t& d) {
  return {&d, d == kNone ? 0U : 1U};
}

} // namespace collsim::algorithms::nccl
