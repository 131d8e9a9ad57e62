// Pipelined k-ary tree broadcast (algorithms.md BC11; MPICH pipelined_tree): the vector is cut
// into chunks and every chunk flows down a k-ary tree rooted at the root, a rank forwarding chunk
// i to its children (non-blocking sends) as soon as it has received it.
//
// Source: MPICH MPIR_Bcast_intra_pipelined_tree (src/mpi/coll/bcast/bcast_intra_pipelined_tree.c)
// with tree_type kary (MPIR_CVAR_BCAST_TREE_TYPE's default), is_nb = true
// (MPIR_CVAR_BCAST_IS_NON_BLOCKING) and recv_pre_posted = false (MPIR_CVAR_BCAST_RECV_PRE_POST);
// chunking by MPIR_Algo_calculate_pipeline_chunk_info. Parameter defaults: radix 2
// (MPIR_CVAR_BCAST_TREE_KVAL) and chunk_size 8192 bytes (MPIR_CVAR_BCAST_TREE_PIPELINE_CHUNK_SIZE
// in MPICH's current cvars; an older cvars.txt carried 4096 and k = 3). chunk_size 0 (or >= n)
// sends the whole vector as one chunk, as MPICH does for a chunk size <= 0.
//
// Tree: relative rank l = (r - root) mod p; parent (l-1)/k; children l k + 1 .. l k + k (< p),
// mapped back by + root mod p.
// Chunks (c = chunk_size, c < n): K = ceil(n/c); chunk 0 is n mod c bytes (c when that is 0), the
// others c, in order through `data`. n = 0 sends nothing (MPICH returns at once).
//
// Schedule, rank r: the root sends chunk i to each child in turn, for i = 0..K-1. Any other rank
// posts the receives of chunks 0, 1, 2 (all of them when K <= 3) from its parent up front, then
// for each chunk i: (i >= 3: receive it, a blocking MPI_Recv) and send it to each child.
// Dependencies: a chunk's sends wait for its receive; the receive of chunk i >= 3 is posted only
// after chunk i-1 has arrived (the blocking receive follows MPI_Wait on the previous chunk).
//
// Cost: about (h + K - 1)(a + k c b) with h = the tree's height, the k children's sends of a chunk
// sharing the rank's port; not exact on the loggp engine (the first chunk is the short one,
// latencies of consecutive sends overlap, and a rank's children are served in turn), so cost()
// declines. The bandwidth term tends to k n b, not n b.

#include "bcast/bcast_algorithms.hpp"
#include "generator_support.hpp"
#include "op_sink.hpp"

#include <algorithm>
#include <array>
#include <vector>

namespace collsim::algorithms {
namespace {

using detail::OpCounts;
using detail::OpSink;

constexpr const char* kName = "pipelined_tree";
constexpr const char* kRadix = "radix";
constexpr const char* kChunk = "chunk_size";
constexpr std::uint32_t kPreposted = 3; // MPICH posts three receives ahead

std::uint64_t param(const Request& req, const char* name, std::uint64_t fallback) {
  const auto it = req.params.find(name);
  return it == req.params.end() ? fallback : static_cast<std::uint64_t>(it->second);
}

/// Chunk count and the size of chunk 0 (the others are `chunk_size`).
struct Chunks {
  std::uint64_t count = 0;
  std::uint64_t first = 0;
  std::uint64_t size = 0;
};

Chunks chunks_of(std::uint64_t n, std::uint64_t c) {
  if (n == 0) {
    return {};
  }
  if (c == 0 || c >= n) {
    return {1, n, n};
  }
  const std::uint64_t rest = n % c;
  return {(n + c - 1) / c, rest == 0 ? c : rest, c};
}

/// The chunk size: the parameter, or 0 (one chunk) for MPICH's non-pipelined tree.
std::uint64_t chunk_param(const Request& req, bool pipelined) {
  return pipelined ? param(req, kChunk, 8192) : 0;
}

OpCounts tree_counts(const Request& req, bool pipelined) {
  const std::uint64_t p = req.ranks;
  const Chunks ch = chunks_of(req.bytes.value, chunk_param(req, pipelined));
  if (p < 2 || ch.count == 0) {
    return {};
  }
  const std::uint64_t k = param(req, kRadix, 2);
  const std::uint64_t root_children = std::min(k, p - 1);
  const std::uint64_t late = ch.count > kPreposted ? ch.count - kPreposted : 0;
  // Every non-root rank receives each chunk once and every tree edge carries it once; sends of
  // non-root ranks wait for one receive, and so does each receive beyond the third.
  return {2 * (p - 1) * ch.count, (p - 1 - root_children) * ch.count + (p - 1) * late};
}

void emit(OpSink& sink, const Request& req, bool pipelined) {
  const std::uint32_t p = req.ranks;
  const std::uint64_t k = param(req, kRadix, 2);
  const Chunks ch = chunks_of(req.bytes.value, chunk_param(req, pipelined));
  if (p < 2 || ch.count == 0) {
    return;
  }
  const auto chunk = [&](std::uint64_t i) {
    return i == 0 ? detail::data_range(0, ch.first)
                  : detail::data_range(ch.first + (i - 1) * ch.size, ch.size);
  };
  std::vector<core::Rank> children;
  std::vector<std::uint32_t> got;
  for (core::Rank r = 0; r < p; ++r) {
    sink.begin_rank(r);
    const std::uint64_t l = (std::uint64_t{r} + p - req.root) % p;
    children.clear();
    for (std::uint64_t c = 1; c <= k && l * k + c < p; ++c) {
      children.push_back(static_cast<core::Rank>((l * k + c + req.root) % p));
    }
    got.clear();
    const auto parent = static_cast<core::Rank>(l == 0 ? 0 : ((l - 1) / k + req.root) % p);
    if (l != 0) {
      for (std::uint64_t i = 0; i < std::min<std::uint64_t>(ch.count, kPreposted); ++i) {
        got.push_back(sink.recv(parent, chunk(i)));
      }
    }
    for (std::uint64_t i = 0; i < ch.count; ++i) {
      if (l != 0 && i >= kPreposted) {
        const std::array<std::uint32_t, 1> dep{got.back()};
        got.push_back(sink.recv(parent, chunk(i), dep));
      }
      const std::array<std::uint32_t, 1> dep{l != 0 ? got[i] : 0};
      for (const core::Rank child : children) {
        sink.send(child, chunk(i), std::span(dep.data(), l != 0 ? 1 : 0));
      }
    }
  }
}

} // namespace

namespace detail {

core::Schedule kary_tree_bcast(const Request& req, const char* name, bool pipelined) {
  core::Schedule s(make_header(req, 0, name));
  const OpCounts counts = tree_counts(req, pipelined);
  s.reserve(counts.ops, counts.deps);
  OpSink sink(s);
  emit(sink, req, pipelined);
  s.finish();
  return s;
}

std::string kary_tree_bcast_refusal(const Request& req, bool pipelined) {
  return size_limit_refusal(tree_counts(req, pipelined));
}

} // namespace detail

AlgorithmInfo describe_bcast_pipelined_tree() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::bcast;
  a.summary = "chunks stream down a k-ary tree, each forwarded to the children on arrival";
  a.source = "MPICH MPIR_Bcast_intra_pipelined_tree (kary tree, non-blocking sends)";
  a.aliases = {"mpich:pipelined_tree"};
  a.params = {
      {kRadix, 2, 2, 1024, "k: children per rank (MPIR_CVAR_BCAST_TREE_KVAL, default 2)", {}},
      {kChunk,
       8192,
       0,
       std::int64_t{1} << 40,
       "bytes per chunk (MPIR_CVAR_BCAST_TREE_PIPELINE_CHUNK_SIZE, default 8192; 0: one "
       "chunk)",
       {}}};
  a.check = [](const Request& req) { return detail::kary_tree_bcast_refusal(req, true); };
  a.generate = [](const Request& req) { return detail::kary_tree_bcast(req, kName, true); };
  a.cost = [](const Request&) { return std::optional<CostTerms>{}; };
  a.cost_formula = "about (h + K - 1)(a + k c b) for K chunks of c bytes down a k-ary tree of "
                   "height h; not exact on loggp (short first chunk, overlapping sends), no "
                   "closed form";
  return a;
}

} // namespace collsim::algorithms
