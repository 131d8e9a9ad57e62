// NCCL NVLS-tree allreduce (algorithms.md AR20, AR19): NVLink SHARP inside each node (the node's
// NVSwitch reduces what the GPUs send it and multicasts the result back) and the double binary
// tree of AR13 across nodes on the node-reduced chunks.
//
// Source: NCCL v2.30 src/device/all_reduce.h (RunWorkColl NCCL_ALGO_NVLS_TREE: reduce-scatter by
// multimem.ld_reduce, inter-node tree up/down on each head's shard, multimem.st multicast back),
// src/graph/trees.cc ncclGetDtree, src/enqueue.cc chunk sizes (nvlsChunkSize 128 KiB, at most
// 64 KiB from 4 nodes, down to 32 KiB for small messages with concurrentOps = channels x heads;
// here heads = the most ranks on a node), src/graph/tuning.cc latencies (NVLSTree: Simple only,
// launch 0, NVLINK 25 us, NET 20.9 us). NCCL disables NVLS-tree on one node (section 2.4).
//
// Participants: the ranks, then one agent per node (header.agents): the node's reducing switch
// (detail::node_reducing_switch), participant p + v for node v.
//
// Schedule. Channel c owns slice c of the buffer (block_range(n, channels, c)) and uses tree
// c mod 2; slices are cut into chunks; chunk k of channel c has, in node v with m ranks, the head
// members[v][(k + c) mod m] (each channel's chunks rotate over the node's GPUs as NCCL's shards
// do, every GPU a head for 1/m of them). For chunk x of the interleaved sequence of all channels'
// chunks:
//   every GPU:   send the chunk to its switch;
//   switch:      recv it from the first GPU, recv_reduce it from the others, send the node's sum to
//                the head;
//   head:        recv the node's sum; recv_reduce from the heads of its tree children; send to the
//                head of its tree parent (up); recv the result from the parent (down; the root
//                has it); send it to its tree children's heads and, when m > 1, to the switch;
//   switch:      (m > 1) recv the result from the head, send it to every other GPU (multicast);
//   other GPUs:  recv the result from the switch.
// A participant's parts of the chunks are ordered by level (nccl::tree_steps; levels in emit()):
// NCCL's warps run up and down at once, each bounded by its FIFO; the IR issues in order.
//
// Dependencies: a receive that overwrites a chunk waits for the send that read it; reductions are
// chained; sends wait for the operation that produced their data.
//
// Cost: per GPU about n out and n in over NVLink, per node about 2n across the network (AR13);
// switch reductions at the switch's reduce bandwidth. The pipeline, the agents and the protocol's
// latencies are not alpha-beta-gamma terms: no closed form is declared.

#include "allreduce/allreduce_algorithms.hpp"
#include "nccl_support.hpp"

#include <algorithm>
#include <array>
#include <fmt/format.h>
#include <numeric>
#include <vector>

namespace collsim::algorithms {
namespace {

using nccl::kNone;
constexpr const char* kName = "nvls_tree";

using Item = nccl::ChannelChunk;

struct Plan {
  std::uint32_t p = 1;
  std::uint32_t channels = 1;
  detail::NodeLayout layout;
  std::vector<Item> items;
};

Plan make_plan(const Request& req) {
  Plan pl;
  pl.p = req.ranks;
  const std::uint32_t channels = nccl::channels_of(req);
  pl.channels = channels;
  pl.layout = detail::node_layout(req);
  nccl::ChunkContext ctx = nccl::chunk_context(req, pl.layout);
  ctx.heads = pl.layout.max_per_node();
  const std::uint64_t chunk = nccl::chunk_bytes(nccl::Algo::nvls_tree, nccl::protocol_of(req), ctx);
  pl.items = nccl::interleaved_chunks(req.bytes.value, channels, chunk);
  return pl;
}

/// Hops from node v up to the root of tree t.
std::uint32_t node_depth(std::uint32_t nodes, std::uint32_t v, std::uint32_t t) {
  std::uint32_t hops = 0;
  for (; nccl::dtree(nodes, v, t).parent != kNone; v = nccl::dtree(nodes, v, t).parent) {
    ++hops;
  }
  return hops;
}

void emit(const Plan& pl, nccl::Sink& sink) {
  const detail::NodeLayout& lay = pl.layout;
  const std::uint32_t nodes = lay.nodes();
  const std::size_t items = pl.items.size();
  // NCCL hands each loop of a channel to all of a node's heads at once (RunWorkColl
  // NCCL_ALGO_NVLS_TREE: loopCount = nHeads x chunkCount, head h's chunk at headRank x
  // chunkCount; prims.scatter sends one to each), so every GPU is a head for 1/m of each
  // channel's chunks: chunk k of channel c goes to head (k + c) mod m, the channels starting on
  // different heads as NCCL's scatter keeps all heads busy at once.
  std::vector<std::uint32_t> nth(items);
  {
    std::vector<std::uint32_t> seen(pl.channels, 0);
    for (std::size_t x = 0; x < items; ++x) {
      const std::uint32_t c = pl.items[x].channel;
      nth[x] = seen[c]++ + c;
    }
  }
  const auto head = [&](std::size_t x, std::uint32_t v) {
    const auto& m = lay.members[v];
    return m[nth[x] % m.size()];
  };
  // Levels (nccl::tree_steps), with H the deepest node and d node v's depth in the chunk's tree:
  // every GPU sends to the switch at H - d, the switch reduces at H - d + 1, the head reduces its
  // tree children and sends up at H - d + 2; down, the head at H + d + 2, the switch's multicast
  // at H + d + 3, the other GPUs receive at H + d + 4.
  const std::uint32_t top = nccl::dtree_height(nodes);
  std::vector<std::array<std::uint32_t, 2>> depth(nodes);
  for (std::uint32_t v = 0; v < nodes; ++v) {
    depth[v] = {node_depth(nodes, v, 0), node_depth(nodes, v, 1)};
  }
  const auto tree_of = [&](std::size_t x) { return pl.items[x].channel % 2; };
  std::vector<std::uint32_t> sent(items);
  std::vector<std::uint32_t> value(items);
  for (core::Rank r = 0; r < pl.p; ++r) {
    sink.begin(r);
    const std::uint32_t v = lay.node[r];
    const core::Rank sw = pl.p + v;
    const bool alone = lay.members[v].size() == 1;
    const std::array<nccl::TreeLinks, 2> trees{nccl::dtree(nodes, v, 0), nccl::dtree(nodes, v, 1)};
    // Parts: 0 send to the switch; a head: 1 reduce and send up, 2 down; another GPU: 1 down.
    const auto steps = nccl::tree_steps(items, pl.channels, [&](std::size_t x) {
      const std::uint32_t d = depth[v][tree_of(x)];
      return head(x, v) == r ? std::vector<std::uint32_t>{top - d, top - d + 2, top + d + 2}
                             : std::vector<std::uint32_t>{top - d, top + d + 4};
    });
    for (const nccl::TreeStep& st : steps) {
      const std::uint32_t x = st.item;
      const Item& it = pl.items[x];
      const core::Range range = detail::data_range(it.offset, it.length);
      const nccl::TreeLinks& t = trees[tree_of(x)];
      const bool is_head = head(x, v) == r;
      // NCCL runs each role of a channel on warps of its own (all_reduce.h NVLS_TREE: scatter,
      // gather, reduce-and-send-up, receive-and-broadcast), each bounded only by its own FIFO:
      // streams 3c (to the switch), 3c + 1 (a head's reduction and send up), 3c + 2 (the
      // result coming down). A head's reduction waiting for the switch holds back none of its
      // later chunks' sends to the switch (with NCCL's FIFO flow control that would deadlock).
      const bool down = is_head ? st.part == 2 : st.part == 1;
      sink.stream(3 * it.channel + (down ? 2 : st.part));
      if (st.part == 0) {
        sent[x] = sink.send(sw, range);
      } else if (is_head && st.part == 1) {
        std::uint32_t w = sink.recv(sw, range, nccl::dep(sent[x]));
        for (const std::uint32_t u : {t.child0, t.child1}) {
          if (u != kNone) {
            w = sink.recv_reduce(head(x, u), range, nccl::dep(w));
          }
        }
        value[x] = w;
        if (t.parent != kNone) {
          sent[x] = sink.send(head(x, t.parent), range, nccl::dep(w));
        }
      } else if (is_head) {
        if (t.parent != kNone) {
          value[x] = sink.recv(head(x, t.parent), range, nccl::dep(sent[x]));
        }
        for (const std::uint32_t u : {t.child0, t.child1}) {
          if (u != kNone) {
            sink.send(head(x, u), range, nccl::dep(value[x]));
          }
        }
        if (!alone) {
          sink.send(sw, range, nccl::dep(value[x]));
        }
      } else {
        sink.recv(sw, range, nccl::dep(sent[x]));
      }
    }
    if (sink.over_limit()) {
      return;
    }
  }
  // The switches: reduce (part 0) and multicast (part 1).
  for (std::uint32_t v = 0; v < nodes; ++v) {
    sink.begin(pl.p + v);
    const auto& members = lay.members[v];
    const auto steps = nccl::tree_steps(items, pl.channels, [&](std::size_t x) {
      const std::uint32_t d = depth[v][tree_of(x)];
      return std::array<std::uint32_t, 2>{top - d + 1, top + d + 3};
    });
    for (const nccl::TreeStep& st : steps) {
      const std::uint32_t x = st.item;
      const Item& it = pl.items[x];
      const core::Range range = detail::data_range(it.offset, it.length);
      const core::Rank h = head(x, v);
      sink.stream(3 * it.channel + st.part);
      if (st.part == 0) {
        std::uint32_t w = sink.recv(members[0], range);
        for (std::size_t j = 1; j < members.size(); ++j) {
          w = sink.recv_reduce(members[j], range, nccl::dep(w));
        }
        sent[x] = sink.send(h, range, nccl::dep(w));
      } else if (members.size() > 1) {
        const std::uint32_t got = sink.recv(h, range, nccl::dep(sent[x]));
        for (const core::Rank g : members) {
          if (g != h) {
            sink.send(g, range, nccl::dep(got));
          }
        }
      }
    }
  }
}

/// The smallest `max_chunk` taken: NCCL's own rules never go below 32 KiB, and much smaller
/// chunks would cut a large message into more chunks than a schedule can hold.
constexpr std::int64_t kSmallestChunk = 4 << 10;

std::string refusal(const Request& req) {
  if (nccl::protocol_of(req) != nccl::Proto::simple) {
    return "NCCL runs NVLS-tree with the Simple protocol only";
  }
  if (const auto it = req.params.find("max_chunk");
      it != req.params.end() && it->second > 0 && it->second < kSmallestChunk) {
    return fmt::format("max_chunk={} is below {} bytes (0 takes NCCL's default chunk)", it->second,
                       kSmallestChunk);
  }
  const detail::NodeLayout layout = detail::node_layout(req);
  for (std::uint32_t v = 0; v < layout.nodes(); ++v) {
    if (detail::node_reducing_switch(req, layout.topology_node[v]).empty()) {
      return req.topology == nullptr
                 ? std::string("NVLS-tree needs a topology whose nodes have a reducing NVLink "
                               "switch (NVLink SHARP); there is no topology")
                 : fmt::format("NVLS-tree needs a reducing NVLink switch (NVLink SHARP) in every "
                               "node; node {} has none",
                               layout.topology_node[v]);
    }
  }
  if (layout.nodes() < 2) {
    return "NCCL disables NVLS-tree on a single node";
  }
  return nccl::size_refusal(make_plan(req), emit);
}

core::Schedule generate(const Request& req) {
  const Plan pl = make_plan(req);
  return nccl::build(req, kName, nccl::Algo::nvls_tree, pl, emit, [&](core::ScheduleHeader& h) {
    for (std::uint32_t v = 0; v < pl.layout.nodes(); ++v) {
      h.agents.push_back(detail::node_reducing_switch(req, pl.layout.topology_node[v]));
    }
  });
}

/// One chunk of every channel (interleaved_chunks), repeated until each node's heads, which
/// rotate over its GPUs chunk by chunk within each channel (emit), are back where they started: a
/// message L bytes shorter then runs the same last chunks on the same heads.
std::uint64_t loop_bytes(const Request& req) {
  if (req.ranks < 2) {
    return 0;
  }
  const std::uint32_t channels = nccl::channels_of(req);
  const detail::NodeLayout layout = detail::node_layout(req);
  nccl::ChunkContext ctx = nccl::chunk_context(req, layout);
  ctx.heads = layout.max_per_node();
  const std::uint64_t chunk = nccl::chunk_bytes(nccl::Algo::nvls_tree, nccl::protocol_of(req), ctx);
  std::uint64_t rounds = 1; // loops until every node's head rotation repeats
  for (const auto& members : layout.members) {
    const std::uint64_t m = members.size();
    rounds = std::lcm(rounds, m);
  }
  return std::uint64_t{channels} * chunk * rounds;
}

} // namespace

AlgorithmInfo describe_allreduce_nvls_tree() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::allreduce;
  a.summary = "NCCL NVLS-tree: NVLink SHARP reduce + multicast in each node's switch, double "
              "binary tree across nodes";
  a.source = "NCCL v2.30 src/device/all_reduce.h (NCCL_ALGO_NVLS_TREE); src/graph/trees.cc; "
             "src/enqueue.cc chunk sizes";
  a.aliases = {"nccl:nvlstree"};
  a.params = {nccl::protocol_param(), nccl::channels_param(), nccl::nvls_tree_chunk_param()};
  a.constraints = {"every node needs a reducing NVLink switch (NVLink SHARP)",
                   "at least two nodes (NCCL disables NVLS-tree on one node)",
                   "Simple protocol only"};
  a.check = refusal;
  a.generate = generate;
  a.loop_bytes = loop_bytes;
  a.cost = [](const Request&) { return std::optional<CostTerms>{}; };
  a.cost_formula = "approximate, not exact: per GPU about n out and n in over NVLink, per node "
                   "about 2n across the network, pipelined by chunks; switch reductions, the "
                   "pipeline and the protocol's latencies are not alpha-beta-gamma terms";
  return a;
}

} // namespace collsim::algorithms
