// NCCL tree allreduce (algorithms.md AR13): an intra-node chain joined to an inter-node double
// binary tree; each chunk is reduced up the tree and broadcast back down, chunks pipelined.
//
// Source: NCCL v2.30 src/graph/trees.cc ncclGetBtree / ncclGetDtree (tree 1 is tree 0 mirrored,
// i -> N-1-i, for an even node count N, or shifted, i -> i+1 mod N, for an odd one),
// src/device/all_reduce.h runTreeSplit (reduce up and broadcast down run concurrently on separate
// warps), src/enqueue.cc chunk sizes (Tree uses chunkSteps 1: Simple 512 KiB, LL 32 KiB, LL128
// 576,000 B halved for small messages), src/graph/tuning.cc latencies (section 3.1).
//
// Schedule. Nodes come from the request's layout (no topology: every rank is a node). In node v
// the ranks form a chain in rank order, rotated per channel so that channel c's chain starts at
// local rank c mod ppn (links_of; on an NVLink mesh the chain follows channel c's ring of direct
// NVLinks from there, nccl::rings); its first rank (the head) is node v's vertex in channel c's
// inter-node tree. Channel c owns slice c of the buffer (block_range(n, channels, c)) and uses
// tree c mod 2, so with an even channel count each tree carries half the data (with one channel
// only tree 0 is used). A channel's slice is cut into chunks of NCCL's chunk size. For one chunk
// and tree t, a rank's parent is its chain predecessor, or for a head the head of node v's parent
// in tree t; its children are the heads of node v's tree children and its chain successor (at most
// three, NCCL_MAX_TREE_ARITY):
//   up:   recv_reduce the chunk from each child (tree children, then the chain successor); send it
//         to the parent;
//   down: recv the reduced chunk from the parent (the root has it after the up phase); send it to
//         each child.
// Chunks of all channels are interleaved, chunk by chunk, and a rank's up and down parts of the
// chunks are ordered by level (nccl::tree_steps: with H the deepest rank's hops to its root, a
// rank d hops deep reduces up at level H - d and forwards down at H + d; a level is
// 2 x NCCL_STEPS x channels chunks), standing in for the concurrent warps of runTreeSplit, each
// bounded by NCCL's FIFO of NCCL_STEPS chunks per connection, in the IR's in-order issue.
//
// Dependencies: reductions into a chunk are chained; the send up waits for the last one; the
// receive from the parent overwrites the chunk, so it waits for the send up; the sends down wait
// for the chunk's final value.
//
// Cost: per node, about 2n bytes in each direction (interior in one tree, a leaf in the other), and
// a chunk crosses 2(ppn - 1 + depth) hops: T about 2(ppn - 1 + ceil(lg N)) a_hop + (K - 1) x the
// slowest stage + 2 n b (derived, algorithms.md AR13). The pipeline stages and the protocol's
// latencies are not alpha-beta-gamma terms: no closed form is declared.

#include "allreduce/allreduce_algorithms.hpp"
#include "nccl_support.hpp"

#include <algorithm>
#include <array>
#include <vector>

namespace collsim::algorithms {
namespace {

using nccl::kNone;
constexpr const char* kName = "nccl_tree";

using Item = nccl::ChannelChunk;

struct Plan {
  std::uint32_t p = 1;
  std::uint32_t channels = 1;
  detail::NodeLayout layout;
  std::vector<Item> items; // chunks of all channels, interleaved
  /// Per channel, the order of each node's chain: node v's ranks are order[start[v] ..
  /// start[v] + m). The rings' order (nccl::rings): rank order rotated by the channel, or on an
  /// NVLink mesh a path of direct NVLinks, as NCCL's tree search also keeps to NVLink.
  std::vector<nccl::Ring> chains;
  std::vector<std::uint32_t> start;
};

Plan make_plan(const Request& req) {
  Plan pl;
  pl.p = req.ranks;
  pl.channels = nccl::channels_of(req);
  pl.layout = detail::node_layout(req);
  const std::uint64_t chunk = nccl::chunk_bytes(nccl::Algo::tree, nccl::protocol_of(req),
                                                nccl::chunk_context(req, pl.layout));
  pl.items = nccl::interleaved_chunks(req.bytes.value, pl.channels, chunk);
  pl.chains = nccl::rings(req, pl.layout, pl.channels);
  std::uint32_t at = 0;
  for (const auto& members : pl.layout.members) {
    pl.start.push_back(at);
    at += static_cast<std::uint32_t>(members.size());
  }
  return pl;
}

/// A rank's parent and children for channel `c` (chain inside the node, double binary tree
/// across).
struct Links {
  core::Rank parent = kNone;
  std::array<core::Rank, 3> children{};
  std::uint32_t child_count = 0;
  std::uint32_t depth = 0; ///< hops up to the root: chain position plus the node's tree depth
};

/// Channel c runs tree c mod 2, and its chain in each node starts at local rank c mod ppn: NCCL's
/// search gives the tree channels of a node different GPUs next to different NICs where it can
/// (src/graph/search.cc, one NIC per channel on rail-optimised nodes), so the channels' inter-node
/// traffic spreads over the NICs instead of all leaving through the first GPU's.
Links links_of(const Plan& pl, core::Rank r, std::uint32_t c) {
  Links out;
  const detail::NodeLayout& layout = pl.layout;
  const std::uint32_t t = c % 2;
  const std::uint32_t v = layout.node[r];
  const auto m = static_cast<std::uint32_t>(layout.members[v].size());
  const nccl::Ring& chain = pl.chains[c];
  const auto at = [&](std::uint32_t node, std::uint32_t position) {
    return chain.order[pl.start[node] + position];
  };
  const std::uint32_t j = chain.pos[r] - pl.start[v]; // position in the node's chain
  if (j > 0) {
    out.parent = at(v, j - 1);
  } else {
    const nccl::TreeLinks tl = nccl::dtree(layout.nodes(), v, t);
    if (tl.parent != kNone) {
      out.parent = at(tl.parent, 0);
    }
    for (const std::uint32_t child : {tl.child0, tl.child1}) {
      if (child != kNone) {
        out.children[out.child_count++] = at(child, 0);
      }
    }
  }
  if (j + 1 < m) {
    out.children[out.child_count++] = at(v, j + 1);
  }
  out.depth = j;
  const std::uint32_t n = layout.nodes();
  for (std::uint32_t u = v; nccl::dtree(n, u, t).parent != kNone; u = nccl::dtree(n, u, t).parent) {
    ++out.depth;
  }
  return out;
}

void emit(const Plan& pl, nccl::Sink& sink) {
  if (pl.p < 2) {
    return;
  }
  const std::size_t items = pl.items.size();
  // Levels (nccl::tree_steps): with H the deepest rank, a rank at depth d reduces up at H - d
  // (its children sent one level below) and receives and forwards down at H + d.
  const std::uint32_t top = pl.layout.max_per_node() - 1 + nccl::dtree_height(pl.layout.nodes());
  std::vector<std::uint32_t> sent_up(items);
  std::vector<std::uint32_t> value(items); // the operation that last wrote the chunk
  for (core::Rank r = 0; r < pl.p; ++r) {
    sink.begin(r);
    std::vector<Links> links(pl.channels);
    for (std::uint32_t c = 0; c < pl.channels; ++c) {
      links[c] = links_of(pl, r, c);
    }
    const auto steps = nccl::tree_steps(items, pl.channels, [&](std::size_t x) {
      const std::uint32_t d = links[pl.items[x].channel].depth;
      return std::array<std::uint32_t, 2>{top - d, top + d};
    });
    for (const nccl::TreeStep& st : steps) {
      const std::uint32_t x = st.item;
      const Item& it = pl.items[x];
      const Links& l = links[it.channel];
      const core::Range range = detail::data_range(it.offset, it.length);
      // Each channel's reduce-up and broadcast-down run on warps of their own.
      sink.stream(2 * it.channel + st.part);
      if (st.part == 0) { // up
        std::uint32_t w = kNone;
        for (std::uint32_t k = 0; k < l.child_count; ++k) {
          w = sink.recv_reduce(l.children[k], range, nccl::dep(w));
        }
        value[x] = w;
        sent_up[x] = l.parent == kNone ? kNone : sink.send(l.parent, range, nccl::dep(w));
      } else { // down
        if (l.parent != kNone) {
          value[x] = sink.recv(l.parent, range, nccl::dep(sent_up[x]));
        }
        for (std::uint32_t k = 0; k < l.child_count; ++k) {
          sink.send(l.children[k], range, nccl::dep(value[x]));
        }
      }
    }
    if (sink.over_limit()) {
      return;
    }
  }
}

core::Schedule generate(const Request& req) {
  return nccl::build(req, kName, nccl::Algo::tree, make_plan(req), emit);
}

} // namespace

AlgorithmInfo describe_allreduce_nccl_tree() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::allreduce;
  a.summary = "NCCL tree: intra-node chain + inter-node double binary tree, pipelined reduce up "
              "and broadcast down by chunks";
  a.source = "NCCL v2.30 src/graph/trees.cc ncclGetBtree/ncclGetDtree; src/device/all_reduce.h "
             "runTreeSplit; src/enqueue.cc chunk sizes";
  a.aliases = {"nccl:tree"};
  a.params = {nccl::protocol_param(), nccl::channels_param(), nccl::buffer_param()};
  a.check = [](const Request& req) {
    if (std::string why = nccl::buffer_refusal(req); !why.empty()) {
      return why;
    }
    return nccl::size_refusal(make_plan(req), emit);
  };
  a.generate = generate;
  // One chunk of every channel (interleaved_chunks); the levels (nccl::tree_steps) move with the
  // chunks.
  a.loop_bytes = [](const Request& req) { return nccl::chunk_loop(req, nccl::Algo::tree); };
  a.cost = [](const Request&) { return std::optional<CostTerms>{}; };
  a.cost_formula =
      "approximate, not exact: about 2(ppn - 1 + ceil(lg N)) hop latencies + (K - 1) "
      "pipeline stages + 2 n b for K chunks (algorithms.md AR13); the pipeline and the "
      "protocol's latencies are not alpha-beta-gamma terms";
  return a;
}

} // namespace collsim::algorithms
