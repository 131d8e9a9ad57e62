#include "nccl_support.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <bit>
#include <initializer_list>
#include <utility>

namespace collsim::algorithms::nccl {
namespace {

constexpr std::size_t kAlgos = 7;
constexpr std::size_t kProtos = 3;
using Table = std::array<std::array<double, kProtos>, kAlgos>;

/// Our Proto order (simple, ll, ll128) to NCCL's table columns (LL, LL128, Simple).
constexpr std::size_t column(Proto p) {
  switch (p) {
  case Proto::ll: return 0;
  case Proto::ll128: return 1;
  case Proto::simple: return 2;
  }
  return 2;
}

// algorithms.md 3.1, ncclTunerConstantsDefaults (rows: Tree, Ring, CollNetDirect, CollNetChain,
// NVLS, NVLSTree, PAT; columns: LL, LL128, Simple).
constexpr Table kBaseLatency{{{6.8, 14.0, 8.4},
                              {6.6, 14.0, 8.4},
                              {0, 0, 0},
                              {0, 0, 0},
                              {0, 0, 0},
                              {0, 0, 0},
                              {8.0, 8.0, 8.0}}};
constexpr std::array<Table, 3> kHwLatency{{
    // NVLINK
    {{{0.6, 1.25, 4.0},
      {0.6, 1.9, 3.4},
      {0, 0, 3.7},
      {0, 0, 2.8},
      {0, 0, 25},
      {0, 0, 25},
      {0, 0, 4.0}}},
    // PCI
    {{{1.0, 1.9, 4.0},
      {1.0, 2.5, 5.7},
      {0, 0, 3.7},
      {0, 0, 2.8},
      {0, 0, 0},
      {0, 0, 0},
      {0, 0, 4.0}}},
    // NET
    {{{5.0, 8.5, 14},
      {2.7, 4.0, 14.0},
      {0, 0, 31},
      {0, 0, 30},
      {0, 0, 18},
      {0, 0, 20.9},
      {0, 0, 14}}},
}};

constexpr std::uint64_t kLlBuffer = 8ULL * 512 * kSteps * 16; // lines x threads x steps x 16 B
constexpr std::uint64_t kLl128Buffer = 120ULL * 640 * kSteps * 8;

std::uint32_t log2i(std::uint32_t n) {
  return n == 0 ? 0 : detail::floor_log2(n);
}

/// enqueue.cc's size rules for NVLS and NVLS-tree chunks: below factor x concurrentOps x chunk
/// bytes the chunk drops to `to`, each rule applied to the chunk the previous one left
/// (concurrentOps = nChannels x nHeads).
std::uint64_t
shrink_nvls_chunk(std::uint64_t chunk, std::uint64_t bytes, std::uint64_t ops,
                  std::initializer_list<std::pair<std::uint64_t, std::uint64_t>> rules) {
  for (const auto& [factor, to] : rules) {
    if (bytes < factor * ops * chunk && chunk > to) {
      chunk = to;
    }
  }
  return chunk;
}

} // namespace

ParamSpec protocol_param() {
  return ParamSpec{"protocol",
                   0,
                   0,
                   2,
                   "NCCL protocol: simple (bulk copies), ll (8-byte data + flag lines, 50% "
                   "efficiency), ll128 (120 of 128 bytes)",
                   {"simple", "ll", "ll128"}};
}

ParamSpec channels_param() {
  return ParamSpec{"channels", kDefaultChannels, 1, kMaxChannels,
                   "NCCL channels: the buffer is split into this many slices, each run by its own "
                   "ring or tree"};
}

ParamSpec buffer_param() {
  return ParamSpec{"buffsize", 0, 0, kLargestBuffer,
                   "NCCL's buffer per connection for the run's protocol in bytes (NCCL_BUFFSIZE, "
                   "NCCL_LL_BUFFSIZE, NCCL_LL128_BUFFSIZE); a step, and so a chunk, is an eighth "
                   "of it; 0: NCCL's default (Simple 4 MiB, LL 256 KiB, LL128 4800 KiB)"};
}

std::string buffer_refusal(const Request& req) {
  const auto it = req.params.find("buffsize");
  if (it != req.params.end() && it->second > 0 && it->second < kSmallestBuffer) {
    return fmt::format("buffsize={} is below {} bytes (0 takes NCCL's default buffer)", it->second,
                       kSmallestBuffer);
  }
  return {};
}

ParamSpec nvls_tree_chunk_param() {
  return ParamSpec{"max_chunk", 0, 0, std::int64_t{16} << 20,
                   "NVLS-tree's chunk in bytes before NCCL shrinks it for smaller messages: "
                   "min(NCCL_NVLS_CHUNKSIZE, NCCL_NVLSTREE_MAX_CHUNKSIZE); 0: 128 KiB, 64 KiB from "
                   "4 nodes (NCCL 2.21.5 and later without the Blackwell tuning)"};
}

Proto protocol_of(const Request& req) {
  const auto it = req.params.find("protocol");
  return it == req.params.end() ? Proto::simple : static_cast<Proto>(it->second);
}

std::uint32_t channels_of(const Request& req) {
  const auto it = req.params.find("channels");
  return it == req.params.end() ? kDefaultChannels : static_cast<std::uint32_t>(it->second);
}

std::string_view protocol_name(Proto p) {
  switch (p) {
  case Proto::simple: return "Simple";
  case Proto::ll: return "LL";
  case Proto::ll128: return "LL128";
  }
  return "Simple";
}

std::string_view algo_name(Algo a) {
  switch (a) {
  case Algo::tree: return "Tree";
  case Algo::ring: return "Ring";
  case Algo::collnet_direct: return "CollNetDirect";
  case Algo::collnet_chain: return "CollNetChain";
  case Algo::nvls: return "NVLS";
  case Algo::nvls_tree: return "NVLSTree";
  case Algo::pat: return "PAT";
  }
  return "Ring";
}

double base_latency_us(Algo a, Proto p) {
  return kBaseLatency[static_cast<std::size_t>(a)][column(p)];
}

double hw_latency_us(Hw hw, Algo a, Proto p) {
  return kHwLatency[static_cast<std::size_t>(hw)][static_cast<std::size_t>(a)][column(p)];
}

double efficiency(Proto p) {
  switch (p) {
  case Proto::simple: return 1.0;
  case Proto::ll: return 0.5;
  case Proto::ll128: return 120.0 / 128.0;
  }
  return 1.0;
}

bool intra_node_nvlink(const Request& req) {
  const core::Topology* t = req.topology;
  if (t == nullptr || t->is_full_mesh() || t->rank_count() == 0) {
    return false;
  }
  const core::DeviceId dev = t->device_of(0);
  for (const core::Link& l : t->links()) {
    if (l.from != dev) {
      continue;
    }
    if (l.kind == core::LinkKind::nvlink || t->devices()[l.to].kind == core::DeviceKind::nvswitch) {
      return true;
    }
  }
  return false;
}

core::Protocol make_protocol(Algo a, Proto p, const Request& req) {
  constexpr double kUs = 1e-6;
  const Hw intra = intra_node_nvlink(req) ? Hw::nvlink : Hw::pci;
  core::Protocol out;
  out.name = std::string(protocol_name(p));
  out.efficiency = efficiency(p);
  out.launch = core::Seconds{base_latency_us(a, p) * kUs};
  // NCCL's latency formula (algorithms.md 3.4) charges NVLS one intraLat for the whole operation
  // (to the switch and back: two messages here), NVLSTree one intraLat for its four intra-node
  // messages (GPU to switch to head, head to switch to GPU), and CollNet and NVLS one interLat
  // for the round trip through the network's reducing switch (two messages). Each message gets
  // its share, so that a schedule's sum of latencies is NCCL's.
  const double intra_share = a == Algo::nvls ? 0.5 : a == Algo::nvls_tree ? 0.25 : 1.0;
  out.message_latency = core::Seconds{hw_latency_us(intra, a, p) * intra_share * kUs};
  out.inter_node_latency =
      core::Seconds{hw_latency_us(Hw::net, a, p) * inter_node_latency_share(a) * kUs};
  return out;
}

double inter_node_latency_share(Algo a) {
  switch (a) {
  case Algo::nvls:
  case Algo::collnet_direct:
  case Algo::collnet_chain: return 0.5;
  default: return 1.0;
  }
}

std::uint64_t buffer_bytes(Proto p) {
  switch (p) {
  case Proto::simple: return kDefaultSimpleBuffer;
  case Proto::ll: return kLlBuffer;
  case Proto::ll128: return kLl128Buffer;
  }
  return kDefaultSimpleBuffer;
}

std::uint64_t nvls_chunk_bytes(std::uint64_t bytes, std::uint64_t concurrent_ops,
                               std::uint64_t start) {
  // The same rule from 2.19 to 2.30 (computeCollChunkInfo, then calcCollChunking).
  return shrink_nvls_chunk(start, bytes, concurrent_ops, {{64, 65536}, {8, 32768}, {2, 16384}});
}

std::uint64_t chunk_bytes(Algo a, Proto p, const ChunkContext& ctx) {
  using core::CollectiveKind;
  const std::uint64_t step = (ctx.buffer != 0 ? ctx.buffer : buffer_bytes(p)) / kSteps;
  std::uint64_t steps = 1;
  if (a == Algo::ring && p == Proto::simple) {
    // ALLREDUCE/ALLGATHER/REDUCESCATTER_CHUNKSTEPS = NCCL_STEPS/2; BROADCAST/REDUCE_CHUNKSTEPS = 1.
    const bool bulk = ctx.collective == CollectiveKind::allreduce ||
                      ctx.collective == CollectiveKind::allgather ||
                      ctx.collective == CollectiveKind::reduce_scatter;
    steps = bulk ? kSteps / 2 : 1;
  }
  std::uint64_t chunk = step * steps;
  if (p == Proto::ll) {
    chunk /= 2;
  } else if (p == Proto::ll128) {
    chunk = chunk / 16 * 15; // NCCL_LL128_LINEELEMS = 16, NCCL_LL128_DATAELEMS = 15
  }
  const std::uint64_t n = ctx.bytes;
  const std::uint64_t nch = ctx.channels;
  if (a == Algo::nvls_tree) {
    chunk = ctx.nvls_tree_chunk != 0 ? ctx.nvls_tree_chunk : default_nvls_tree_chunk(ctx.nodes);
    chunk = shrink_nvls_chunk(chunk, n, nch * ctx.heads,
                              {{32, 262144}, {16, 131072}, {4, 65536}, {1, 32768}});
  } else if (a == Algo::tree && p == Proto::ll128) {
    const double ppn = static_cast<double>(ctx.ranks) / ctx.nodes;
    const double nsteps = 1.0 + log2i(ctx.nodes) + 0.1 * ppn;
    // The left side is an integer division in NCCL too.
    while (static_cast<double>(n / (nch * chunk)) < nsteps * 64 / ppn && chunk > 131072) {
      chunk /= 2;
    }
    while (static_cast<double>(n / (nch * chunk)) < nsteps * 16 / ppn && chunk > 32768) {
      chunk /= 2;
    }
  } else if (a == Algo::pat) {
    const std::uint64_t factor = ctx.collective == CollectiveKind::allgather ? 32 : 16;
    while (chunk * nch * factor > n && chunk > 65536) {
      chunk /= 2;
    }
  }
  return chunk;
}

core::Range block_chunk(std::uint64_t n, std::uint32_t p, std::uint32_t b, std::uint32_t channels,
                        std::uint32_t channel, std::uint64_t chunk, std::uint64_t k) {
  const auto [block_off, block_len] = core::block_range(n, p, b);
  const auto [sub_off, sub_len] = channel_slice(block_len, channels, channel);
  const std::uint64_t begin = std::min(sub_len, k * chunk);
  const std::uint64_t len = std::min(chunk, sub_len - begin);
  return detail::data_range(block_off + sub_off + begin, len);
}

std::uint64_t block_chunks(std::uint64_t n, std::uint32_t p, std::uint32_t channels,
                           std::uint32_t channel, std::uint64_t chunk) {
  const std::uint64_t longest = core::block_range(n, p, 0).second;
  return chunk_count(channel_slice(longest, channels, channel).second, chunk);
}

ChunkContext chunk_context(const Request& req, const detail::NodeLayout& layout) {
  ChunkContext ctx;
  ctx.collective = req.collective;
  ctx.bytes = req.chunk_basis != 0 ? req.chunk_basis : req.bytes.value;
  ctx.channels = channels_of(req);
  ctx.ranks = req.ranks;
  ctx.nodes = layout.nodes();
  if (const auto it = req.params.find("max_chunk"); it != req.params.end()) {
    ctx.nvls_tree_chunk = static_cast<std::uint64_t>(it->second);
  }
  if (const auto it = req.params.find("buffsize"); it != req.params.end()) {
    ctx.buffer = static_cast<std::uint64_t>(it->second);
  }
  return ctx;
}

std::vector<ChannelChunk> interleaved_chunks(std::uint64_t bytes, std::uint32_t channels,
                                             std::uint64_t chunk) {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> slices;
  std::uint64_t most = 0;
  for (std::uint32_t c = 0; c < channels; ++c) {
    slices.push_back(channel_slice(bytes, channels, c));
    most = std::max(most, chunk_count(slices.back().second, chunk));
  }
  std::vector<ChannelChunk> out;
  for (std::uint64_t k = 0; k < most; ++k) {
    for (std::uint32_t c = 0; c < channels; ++c) {
      const auto [lo, len] = slices[c];
      if (k * chunk < len) {
        out.push_back({c, lo + k * chunk, std::min(chunk, len - k * chunk)});
      }
    }
  }
  return out;
}

std::uint64_t BlockChunking::most() const {
  return chunks.empty() ? 0 : *std::max_element(chunks.begin(), chunks.end());
}

BlockChunking block_chunking(const Request& req, Algo a, const detail::NodeLayout& layout) {
  BlockChunking out;
  out.p = req.ranks;
  out.n = req.bytes.value;
  out.channels = channels_of(req);
  out.chunk = chunk_bytes(a, protocol_of(req), chunk_context(req, layout));
  for (std::uint32_t c = 0; c < out.channels; ++c) {
    out.chunks.push_back(block_chunks(out.n, out.p, out.channels, c, out.chunk));
  }
  return out;
}

std::string pat_refusal(const Request& req) {
  if (std::string why = buffer_refusal(req); !why.empty()) {
    return why;
  }
  if (protocol_of(req) != Proto::simple) {
    return "NCCL runs PAT with the Simple protocol only";
  }
  if (detail::node_layout(req).max_per_node() > 1) {
    return "NCCL enables PAT only with one rank per node";
  }
  return {};
}

std::vector<core::Rank> ring_order(const detail::NodeLayout& layout, std::uint32_t channel) {
  std::vector<core::Rank> out;
  out.reserve(layout.node.size());
  for (const auto& members : layout.members) {
    const std::size_t m = members.size();
    for (std::size_t j = 0; j < m; ++j) {
      out.push_back(members[(channel + j) % m]);
    }
  }
  return out;
}

std::vector<Ring> rings(const detail::NodeLayout& layout, std::uint32_t channels) {
  std::vector<Ring> out(channels);
  for (std::uint32_t c = 0; c < channels; ++c) {
    out[c].order = ring_order(layout, c);
    out[c].pos.resize(out[c].order.size());
    for (std::uint32_t i = 0; i < out[c].order.size(); ++i) {
      out[c].pos[out[c].order[i]] = i;
    }
  }
  return out;
}

TreeLinks btree(std::uint32_t n, std::uint32_t i) {
  TreeLinks out;
  if (n <= 1) {
    return out;
  }
  if (i == 0) {
    // The root's only child is the largest power of two below n.
    out.child0 = std::bit_floor(n - 1);
    return out;
  }
  const std::uint32_t bit = i & (~i + 1); // lowest set bit
  std::uint32_t up = (i ^ bit) | (bit << 1);
  if (up >= n) {
    up = i ^ bit;
  }
  out.parent = up;
  std::uint32_t low = bit >> 1;
  if (low != 0) {
    out.child0 = i - low;
    while (low != 0 && i + low >= n) {
      low >>= 1;
    }
    if (low != 0) {
      out.child1 = i + low;
    }
  }
  return out;
}

TreeLinks dtree(std::uint32_t n, std::uint32_t i, std::uint32_t tree) {
  if (tree == 0 || n <= 1) {
    return btree(n, i);
  }
  const bool odd = n % 2 == 1;
  // Shift: node i plays node i-1 of tree 0; mirror: node i plays node n-1-i.
  const auto to_tree0 = [&](std::uint32_t j) { return odd ? (j + n - 1) % n : n - 1 - j; };
  const auto from_tree0 = [&](std::uint32_t j) {
    return j == kNone ? kNone : (odd ? (j + 1) % n : n - 1 - j);
  };
  const TreeLinks t = btree(n, to_tree0(i));
  TreeLinks out{from_tree0(t.parent), from_tree0(t.child0), from_tree0(t.child1)};
  return out;
}

std::uint32_t dtree_height(std::uint32_t n) {
  std::uint32_t most = 0;
  for (std::uint32_t t = 0; t < 2; ++t) {
    for (std::uint32_t i = 0; i < n; ++i) {
      std::uint32_t hops = 0;
      for (std::uint32_t v = i; dtree(n, v, t).parent != kNone; v = dtree(n, v, t).parent) {
        ++hops;
      }
      most = std::max(most, hops);
    }
  }
  return most;
}

} // namespace collsim::algorithms::nccl
