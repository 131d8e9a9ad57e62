// Pipelined tree allreduce (algorithms.md AR12): each chunk of the vector is reduced up a k-nomial
// tree to rank 0 and broadcast back down the same tree before the next chunk starts up.
//
// Source: MPICH MPIR_Allreduce_intra_tree ("mpich:tree") with its defaults: tree type knomial_1
// (MPIR_CVAR_ALLREDUCE_TREE_TYPE), radix 2 (MPIR_CVAR_ALLREDUCE_TREE_KVAL), chunk size 0 = no
// pipelining (MPIR_CVAR_ALLREDUCE_TREE_PIPELINE_CHUNK_SIZE), one receive buffer shared by all
// children (MPIR_CVAR_ALLREDUCE_TREE_BUFFER_PER_CHILD = 0).
//   Tree (MPII_Treeutil_tree_knomial_1_init, root 0): with maxstep = the number of base-k digits
//   of p-1, rank 0's subtrees are the consecutive ranges that start at 1, 1 + k^(maxstep-1),
//   1 + 2 k^(maxstep-1), ...; each subtree is numbered the same way one level down. A rank's
//   children are listed largest subtree first.
//   Chunks (MPIR_Algo_calculate_pipeline_chunk_info): with chunk size c > 0 and n > c, ceil(n / c)
//   chunks, the first of n mod c bytes (c when that is 0), the others of c bytes; otherwise one.
//
// Schedule, rank r, for each chunk in order (MPICH's loop; its receives and reductions block):
//   for each child in order: receive the chunk into tmp (at the chunk's offset) and reduce it into
//   data; then, unless r is the root, send the chunk to the parent and receive the reduced chunk
//   back from it into data; then send the chunk to every child.
// So a rank takes up chunk j+1 only once chunk j has come back down to it.
//
// Dependencies (MPICH's blocking calls): a receive from a child waits for the rank's previous
// blocking operation (the previous reduction, or the previous chunk's receive from the parent);
// the send to the parent likewise; the receive from the parent overwrites the bytes that send
// reads, so it waits for it; the sends to children wait for the receive from the parent (the root:
// for its last reduction). Every operation but each rank's first has exactly one dependency.
//
// Cost: for a k-ary tree of height h and K chunks about 2(h + K - 1) k (a + (n/K)(b + g))
// (algorithms.md); the round trip per chunk dominates here. Exact only for p <= 2: K chunks cost
// 2K a + 2 n b + n g (each chunk's round trip, summed). For larger trees, children of one parent
// finish at different times and cost() declines.

#include "allreduce/allreduce_algorithms.hpp"
#include "generator_support.hpp"

#include <array>
#include <vector>

namespace collsim::algorithms {
namespace {

using core::OpKind;
using detail::OpCounts;

constexpr const char* kName = "tree";
constexpr const char* kRadix = "radix";
constexpr const char* kChunk = "chunk_size";

std::int64_t param(const Request& req, const char* name, std::int64_t fallback) {
  const auto it = req.params.find(name);
  return it == req.params.end() ? fallback : it->second;
}

/// MPICH's chunking: the number of chunks and the sizes of the first and of the others.
struct Chunks {
  std::uint64_t count = 1;
  std::uint64_t first = 0;
  std::uint64_t rest = 0;
};

Chunks chunks_of(std::uint64_t n, std::uint64_t chunk) {
  if (chunk == 0 || n <= chunk) {
    return {1, n, n};
  }
  const std::uint64_t first = n % chunk == 0 ? chunk : n % chunk;
  return {(n + chunk - 1) / chunk, first, chunk};
}

/// Parent and children of `lrank` in MPICH's knomial_1 tree over p ranks rooted at 0.
struct Links {
  bool has_parent = false;
  core::Rank parent = 0;
  std::vector<core::Rank> children;
};

Links knomial_1(std::uint32_t p, std::uint32_t k, core::Rank lrank) {
  std::uint32_t maxstep = 0;
  for (std::uint32_t t = p - 1; t != 0; t /= k) {
    ++maxstep;
  }
  std::vector<std::uint64_t> span(maxstep + 1, 1); // span[i] = k^i
  for (std::uint32_t i = 1; i <= maxstep; ++i) {
    span[i] = span[i - 1] * k;
  }
  Links links;
  std::uint64_t current = 0;
  std::uint64_t running = 1;
  std::uint32_t step = 0;
  for (; current != lrank; ++step) {
    for (std::uint32_t j = 1; j < k; ++j) {
      const std::uint64_t size = span[maxstep - step - 1];
      if (lrank >= running && lrank < running + size) {
        links.has_parent = true;
        links.parent = static_cast<core::Rank>(current);
        current = running;
        running = current + 1;
        break;
      }
      running += size;
    }
  }
  std::uint64_t child = std::uint64_t{lrank} + 1;
  for (std::uint32_t i = step; i < maxstep; ++i) {
    for (std::uint32_t j = 1; j < k; ++j) {
      if (child < p) {
        links.children.push_back(static_cast<core::Rank>(child));
      }
      child += span[maxstep - i - 1];
    }
  }
  return links;
}

OpCounts tree_counts(std::uint32_t p, const Chunks& c) {
  if (p < 2) {
    return {};
  }
  // Per chunk and tree edge: receive, reduction and send at the parent, send and receive at the
  // child. Every operation has one dependency except each rank's first.
  const std::uint64_t ops = 5 * c.count * (std::uint64_t{p} - 1);
  return {ops, ops - p};
}

core::Schedule generate_tree(const Request& req) {
  const std::uint32_t p = req.ranks;
  const std::uint64_t n = req.bytes.value;
  const auto k = static_cast<std::uint32_t>(param(req, kRadix, 2));
  const Chunks chunks = chunks_of(n, static_cast<std::uint64_t>(param(req, kChunk, 0)));
  core::Schedule s(make_header(req, p > 1 ? n : 0, kName));
  const OpCounts counts = tree_counts(p, chunks);
  s.reserve(counts.ops, counts.deps);
  std::array<std::uint32_t, 1> dep{};
  for (core::Rank r = 0; r < p; ++r) {
    s.begin_rank(r);
    if (p < 2) {
      continue;
    }
    const Links links = knomial_1(p, k, r);
    bool has_last = false;
    std::uint32_t last = 0; // the previous blocking operation
    std::uint64_t offset = 0;
    for (std::uint64_t j = 0; j < chunks.count; ++j) {
      const std::uint64_t length = j == 0 ? chunks.first : chunks.rest;
      const core::Range mine = detail::data_range(offset, length);
      const core::Range scratch = detail::tmp_range(offset, length);
      for (const core::Rank child : links.children) {
        dep[0] = last;
        const std::uint32_t got = detail::add_op(s, OpKind::recv, child, scratch,
                                                 std::span(dep.data(), has_last ? 1 : 0));
        last = s.reduce(scratch, mine, {got});
        has_last = true;
      }
      if (links.has_parent) {
        dep[0] = last;
        const std::uint32_t up = detail::add_op(s, OpKind::send, links.parent, mine,
                                                std::span(dep.data(), has_last ? 1 : 0));
        last = s.recv(links.parent, mine, {up});
        has_last = true;
      }
      for (const core::Rank child : links.children) {
        s.send(child, mine, {last});
      }
      offset += length;
    }
  }
  s.finish();
  return s;
}

std::optional<CostTerms> tree_cost(const Request& req) {
  if (req.ranks == 1) {
    return CostTerms{};
  }
  if (req.ranks != 2) {
    return std::nullopt;
  }
  const std::uint64_t n = req.bytes.value;
  const Chunks chunks = chunks_of(n, static_cast<std::uint64_t>(param(req, kChunk, 0)));
  const auto bytes = static_cast<double>(n);
  return CostTerms{2.0 * static_cast<double>(chunks.count), 2.0 * bytes, bytes};
}

} // namespace

AlgorithmInfo describe_allreduce_tree() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::allreduce;
  a.summary = "k-nomial tree (MPICH knomial_1): each chunk is reduced up to rank 0 and broadcast "
              "back down before the next chunk";
  a.source = "MPICH MPIR_Allreduce_intra_tree (MPII_Treeutil_tree_knomial_1_init)";
  a.aliases = {"mpich:tree"};
  a.params = {{kRadix, 2, 2, 1024, "tree radix k (MPIR_CVAR_ALLREDUCE_TREE_KVAL, default 2)"},
              {kChunk, 0, 0, std::int64_t{1} << 30,
               "pipeline chunk size in bytes (0: the whole vector, MPICH's default)"}};
  a.check = [](const Request& req) {
    return detail::size_limit_refusal(tree_counts(
        req.ranks, chunks_of(req.bytes.value, static_cast<std::uint64_t>(param(req, kChunk, 0)))));
  };
  a.generate = generate_tree;
  a.cost = tree_cost;
  a.cost_formula = "p = 2 with K chunks: 2K a + 2 n b + n g; otherwise about 2(h + K - 1) k (a + "
                   "(n/K)(b + g)) for a tree of height h (not exact: siblings finish at different "
                   "times)";
  return a;
}

} // namespace collsim::algorithms
