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
// c mod 2; slices are cut into chunks; chunk x of the interleaved sequence of all channels' chunks
// has, in node v with m ranks, the head members[v][x mod m] (heads rotate over the node's GPUs as
// NCCL's shards do). For chunk x:
//   every GPU:   send the chunk to its switch;
//   switch:      recv it from the first GPU, recv_reduce it from the others, send the node's sum to
//                the head;
//   head:        recv the node's sum; recv_reduce from the heads of its tree children; send to the
//                head of its tree parent (up); recv the result from the parent (down; the root
//                has it); send it to its tree children's heads and, when m > 1, to the switch;
//   switch:      (m > 1) recv the result from the head, send it to every other GPU (multicast);
//   other GPUs:  recv the result from the switch.
// A participant issues the down part of a chunk after the up part of the chunk
// nccl::tree_lag(2 + tree height) later (NCCL's warps run both at once; the IR issues in order).
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
#include <vector>

namespace collsim::algorithms {
namespace {

using nccl::kNone;
constexpr const char* kName = "nvls_tree";

struct Item {
  std::uint32_t channel;
  std::uint64_t offset;
  std::uint64_t length;
};

struct Plan {
  std::uint32_t p = 1;
  detail::NodeLayout layout;
  std::vector<Item> items;
};

Plan make_plan(const Request& req) {
  Plan pl;
  pl.p = req.ranks;
  const std::uint32_t channels = nccl::channels_of(req);
  pl.layout = detail::node_layout(req);
  nccl::ChunkContext ctx;
  ctx.collective = core::CollectiveKind::allreduce;
  ctx.bytes = req.bytes.value;
  ctx.channels = channels;
  ctx.ranks = pl.p;
  ctx.nodes = pl.layout.nodes();
  ctx.heads = pl.layout.max_per_node();
  const std::uint64_t chunk = nccl::chunk_bytes(nccl::Algo::nvls_tree, nccl::protocol_of(req), ctx);
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
        pl.items.push_back(Item{c, lo + k * chunk, std::min(chunk, len - k * chunk)});
      }
    }
  }
  return pl;
}

void emit(const Plan& pl, nccl::Sink& sink) {
  const detail::NodeLayout& lay = pl.layout;
  const std::uint32_t nodes = lay.nodes();
  const std::size_t items = pl.items.size();
  const std::size_t lag = nccl::tree_lag(2 + nccl::dtree_height(nodes));
  const auto head = [&](std::size_t x, std::uint32_t v) {
    const auto& m = lay.members[v];
    return m[x % m.size()];
  };
  std::vector<std::uint32_t> sent(items);
  std::vector<std::uint32_t> value(items);
  for (core::Rank r = 0; r < pl.p; ++r) {
    sink.begin(r);
    const std::uint32_t v = lay.node[r];
    const core::Rank sw = pl.p + v;
    const bool alone = lay.members[v].size() == 1;
    const std::array<nccl::TreeLinks, 2> trees{nccl::dtree(nodes, v, 0), nccl::dtree(nodes, v, 1)};
    for (std::size_t x = 0; x < items + lag; ++x) {
      if (x < items) {
        const Item& it = pl.items[x];
        const core::Range range = detail::data_range(it.offset, it.length);
        sent[x] = sink.send(sw, range);
        if (head(x, v) == r) {
          const nccl::TreeLinks& t = trees[it.channel % 2];
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
        }
      }
      if (x >= lag) {
        const std::size_t y = x - lag;
        const Item& it = pl.items[y];
        const core::Range range = detail::data_range(it.offset, it.length);
        if (head(y, v) == r) {
          const nccl::TreeLinks& t = trees[it.channel % 2];
          std::uint32_t src = value[y];
          if (t.parent != kNone) {
            src = sink.recv(head(y, t.parent), range, nccl::dep(sent[y]));
          }
          for (const std::uint32_t u : {t.child0, t.child1}) {
            if (u != kNone) {
              sink.send(head(y, u), range, nccl::dep(src));
            }
          }
          if (!alone) {
            sink.send(sw, range, nccl::dep(src));
          }
        } else {
          sink.recv(sw, range, nccl::dep(sent[y]));
        }
      }
    }
    if (sink.over_limit()) {
      return;
    }
  }
  // The switches: reduce and multicast.
  for (std::uint32_t v = 0; v < nodes; ++v) {
    sink.begin(pl.p + v);
    const auto& members = lay.members[v];
    for (std::size_t x = 0; x < items + lag; ++x) {
      if (x < items) {
        const Item& it = pl.items[x];
        const core::Range range = detail::data_range(it.offset, it.length);
        std::uint32_t w = sink.recv(members[0], range);
        for (std::size_t j = 1; j < members.size(); ++j) {
          w = sink.recv_reduce(members[j], range, nccl::dep(w));
        }
        sent[x] = sink.send(head(x, v), range, nccl::dep(w));
      }
      if (x >= lag && members.size() > 1) {
        const std::size_t y = x - lag;
        const Item& it = pl.items[y];
        const core::Range range = detail::data_range(it.offset, it.length);
        const core::Rank h = head(y, v);
        const std::uint32_t got = sink.recv(h, range, nccl::dep(sent[y]));
        for (const core::Rank g : members) {
          if (g != h) {
            sink.send(g, range, nccl::dep(got));
          }
        }
      }
    }
  }
}

detail::OpCounts count(const Plan& pl) {
  nccl::Sink sink;
  emit(pl, sink);
  return sink.counts();
}

std::string refusal(const Request& req) {
  if (nccl::protocol_of(req) != nccl::Proto::simple) {
    return "NCCL runs NVLS-tree with the Simple protocol only";
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
  return detail::size_limit_refusal(count(make_plan(req)));
}

core::Schedule generate(const Request& req) {
  const Plan pl = make_plan(req);
  core::ScheduleHeader h = make_header(req, 0, kName);
  h.protocol = nccl::make_protocol(nccl::Algo::nvls_tree, nccl::protocol_of(req), req);
  for (std::uint32_t v = 0; v < pl.layout.nodes(); ++v) {
    h.agents.push_back(detail::node_reducing_switch(req, pl.layout.topology_node[v]));
  }
  core::Schedule s(std::move(h));
  const detail::OpCounts counts = count(pl);
  s.reserve(counts.ops, counts.deps);
  nccl::Sink sink(s);
  emit(pl, sink);
  s.finish();
  return s;
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
  a.params = {nccl::protocol_param(), nccl::channels_param()};
  a.constraints = {"every node needs a reducing NVLink switch (NVLink SHARP)",
                   "at least two nodes (NCCL disables NVLS-tree on one node)",
                   "Simple protocol only"};
  a.check = refusal;
  a.generate = generate;
  a.cost = [](const Request&) { return std::optional<CostTerms>{}; };
  a.cost_formula = "approximate, not exact: per GPU about n out and n in over NVLink, per node "
                   "about 2n across the network, pipelined by chunks; switch reductions, the "
                   "pipeline and the protocol's latencies are not alpha-beta-gamma terms";
  return a;
}

} // namespace collsim::algorithms
