#pragma once
// Internal: what the NCCL generators (ring, tree, PAT, NVLS-tree) share (algorithms.md section 3,
// NCCL v2.30.7): the `protocol` and `channels` parameters, the protocol's wire model from
// tuning.cc's baseLatencies/hwLatencies (section 3.1), the chunk sizes of enqueue.cc (section 3.7),
// the channel split, the ring order, and the double binary tree of src/graph/trees.cc (AR13).
//
// Units: NCCL's tables are in microseconds; core::Protocol holds seconds.

#include "generator_support.hpp"

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace collsim::algorithms::nccl {

/// NCCL's protocols, in the order of the `protocol` parameter's choices (not NCCL's indices, which
/// are LL = 0, LL128 = 1, Simple = 2).
enum class Proto : std::uint8_t { simple = 0, ll = 1, ll128 = 2 };
/// NCCL's algorithm indices (src/include/plugin/nccl_tuner.h).
enum class Algo : std::uint8_t {
  tree = 0,
  ring = 1,
  collnet_direct = 2,
  collnet_chain = 3,
  nvls = 4,
  nvls_tree = 5,
  pat = 6
};
/// NCCL's hardware classes for hwLatencies.
enum class Hw : std::uint8_t { nvlink = 0, pci = 1, net = 2 };

inline constexpr std::uint64_t kSteps = 8;                  ///< NCCL_STEPS
inline constexpr std::uint32_t kDefaultChannels = 2;        ///< our default `channels`
inline constexpr std::uint32_t kMaxChannels = 64;           ///< MAXCHANNELS
inline constexpr std::uint64_t kNvlsChunkBytes = 128 << 10; ///< NCCL_NVLS_CHUNKSIZE default

/// `protocol`: simple (default), ll, ll128.
ParamSpec protocol_param();
/// `channels`: how many slices the buffer is split into, each run by its own ring or tree.
ParamSpec channels_param();
Proto protocol_of(const Request& req);
std::uint32_t channels_of(const Request& req);
/// "Simple", "LL" or "LL128" (core::Protocol::name).
std::string_view protocol_name(Proto p);

/// baseLatencies[algo][proto] in microseconds (section 3.1).
double base_latency_us(Algo a, Proto p);
/// hwLatencies[hw][algo][proto] in microseconds (section 3.1).
double hw_latency_us(Hw hw, Algo a, Proto p);
/// Payload bytes per wire byte: LL 8 of 16, LL128 120 of 128, Simple 1.
double efficiency(Proto p);
/// True when the request's topology joins the devices of a node by NVLink (an NVLink link or an
/// NVSwitch next to rank 0's device); false without a topology or on a full mesh (NCCL's PCI
/// class).
bool intra_node_nvlink(const Request& req);
/// core::Protocol for (algorithm, protocol) on the request's topology: launch = baseLatency,
/// message_latency = hwLatency of NVLINK or PCI, inter_node_latency = hwLatency of NET.
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
};
/// enqueue.cc's chunkSize in payload bytes (section 3.7): stepSize x chunkSteps (chunkSteps = 4 for
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

/// NCCL's ring: the ranks of node 0, then node 1, ... (each node's ranks in rank order), so that
/// the ring crosses each node boundary once.
std::vector<core::Rank> ring_order(const detail::NodeLayout& layout);

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
/// How many chunks later than its reduce-up a rank issues a chunk's broadcast-down, for a tree
/// `hops` deep: NCCL runs both on separate warps, bounded only by NCCL_STEPS chunks of FIFO per
/// connection, so the in-order IR lets the up phase run NCCL_STEPS x 2 x hops chunks ahead (a
/// chunk's round trip up and down the tree).
inline std::size_t tree_lag(std::uint32_t hops) {
  return static_cast<std::size_t>(kSteps) * 2 * (hops == 0 ? 1 : hops);
}

/// Either counts a generator's operations (for check() and Schedule::reserve) or appends them; a
/// generator written once against it cannot reserve a different number than it emits.
class Sink {
public:
  Sink() = default; ///< counts only
  explicit Sink(core::Schedule& s) : schedule_(&s) {}
  void begin(core::Rank r) {
    if (schedule_ != nullptr) {
      schedule_->begin_rank(r);
    }
    next_ = 0;
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
  [[nodiscard]] const detail::OpCounts& counts() const { return counts_; }
  /// True once more operations were counted than a schedule holds (counting may stop early).
  [[nodiscard]] bool over_limit() const { return counts_.ops > core::Schedule::kMaxOps; }

private:
  core::Schedule* schedule_ = nullptr;
  detail::OpCounts counts_;
  std::uint32_t next_ = 0;
};

/// A dependency list of at most one entry: `dep(kNone)` is empty.
inline std::span<const std::uint32_t> dep(const std::uint32_t& d) {
  return {&d, d == kNone ? 0U : 1U};
}

} // namespace collsim::algorithms::nccl
