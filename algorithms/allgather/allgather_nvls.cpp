// NVLS allgather (algorithms.md AG16, sections 2.4 and 3.3): every rank multicasts its block once
// through its node's NVSwitch (multimem.st), which delivers it to every other rank of the node.
// Across nodes the node switches also hand their ranks' blocks to the network switch, which
// delivers each to every other node switch (NVLS + CollNet; NCCL gives multi-node NVLS allgather
// no bandwidth unless CollNet is enabled, so a multi-node request needs the reducing network
// switch, although the switch only forwards here).
//
// Source: NCCL NVLS allgather (src/device/all_gather.h, multimem.st on the multicast address);
// tuning.cc (NVLS is skipped for non-allreduce collectives when a node holds more than
// NCCL_MAX_NVLS_ARITY = 32 ranks).
//
// Schedule (in-place allgather: rank r's block is block_range(n, p, r) of data):
//   Rank r: send its block to its node switch; receive every other block from it, in the order the
//   switch sends them: the node's ranks ascending, then the other nodes' ranks by node and rank.
//   Node switch of ranks M: receive each M[i]'s block; with more than one node, receive every other
//   node's blocks from the network switch (same order); then send each local block to every other
//   local rank and to the network switch, and each remote block to every local rank.
//   Network switch: for every node k and rank r of it, receive r's block from switch k and send it
//   to every other node switch.
// Agents: the node switches in node order, then the network switch. One rank: nothing to do.
// Per rank: n/p out, n - n/p in (the switch multicasts); per node switch across N nodes: its
// node's blocks out, the rest in.
//
// Cost: not exact (in-network agents take part; no closed form is declared). Expected on one node:
// 2a + (p-1)/p n b (a rank's link carries its block once out and p-1 blocks in).

#include "allgather/allgather_algorithms.hpp"
#include "in_network_support.hpp"

namespace collsim::algorithms {
namespace {

using detail::innet::Emitter;

constexpr const char* kName = "nvls";

void emit(const Request& req, const detail::innet::Fabric& f, Emitter& e) {
  const std::uint32_t p = req.ranks;
  if (p < 2) {
    return;
  }
  const std::uint64_t n = req.bytes.value;
  const auto& layout = f.layout;
  const std::uint32_t nodes = layout.nodes();
  const bool network = nodes > 1;
  const core::Rank net = p + nodes;
  const auto block = [&](core::Rank b) { return detail::innet::piece(n, p, b); };
  // Blocks of other nodes than k, in the order the network switch sends them to switch k.
  const auto for_remote = [&](std::uint32_t k, auto&& fn) {
    for (std::uint32_t other = 0; other < nodes; ++other) {
      if (other != k) {
        for (core::Rank b : layout.members[other]) {
          fn(b);
        }
      }
    }
  };

  for (core::Rank r = 0; r < p; ++r) {
    e.begin(r);
    const std::uint32_t k = layout.node[r];
    const core::Rank sw = p + k;
    e.send(sw, block(r));
    for (core::Rank b : layout.members[k]) {
      if (b != r) {
        e.recv(sw, block(b));
      }
    }
    for_remote(k, [&](core::Rank b) { e.recv(sw, block(b)); });
  }
  std::vector<std::uint32_t> got(p);
  for (std::uint32_t k = 0; k < nodes; ++k) {
    e.begin(p + k);
    const auto& members = layout.members[k];
    for (core::Rank b : members) {
      got[b] = e.recv(b, block(b));
    }
    for_remote(k, [&](core::Rank b) { got[b] = e.recv(net, block(b)); });
    for (core::Rank b : members) {
      for (core::Rank q : members) {
        if (q != b) {
          e.send(q, block(b), got[b]);
        }
      }
      if (network) {
        e.send(net, block(b), got[b]);
      }
    }
    for_remote(k, [&](core::Rank b) {
      for (core::Rank q : members) {
        e.send(q, block(b), got[b]);
      }
    });
  }
  if (!network) {
    return;
  }
  e.begin(net);
  for (std::uint32_t k = 0; k < nodes; ++k) {
    for (core::Rank b : layout.members[k]) {
      const std::uint32_t w = e.recv(p + k, block(b));
      for (std::uint32_t other = 0; other < nodes; ++other) {
        if (other != k) {
          e.send(p + other, block(b), w);
        }
      }
    }
  }
}

} // namespace

AlgorithmInfo describe_allgather_nvls() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::allgather;
  a.summary = "NVLink SHARP multicast: every rank sends its block once to the node's NVSwitch, "
              "which delivers it to every rank (across nodes also through the network switch)";
  a.source = "NCCL NVLS allgather (src/device/all_gather.h multimem.st; tuning.cc)";
  a.aliases = {"nccl:nvls"};
  a.constraints = {"every node needs a reducing NVSwitch (NVLink SHARP)",
                   "at most 32 ranks per node (NCCL_MAX_NVLS_ARITY)",
                   "ranks on more than one node also need a reducing network switch (NVLS + "
                   "CollNet, as NCCL requires)"};
  a.check = [](const Request& req) { return detail::innet::nvls_refusal(req, kName, true, emit); };
  a.generate = [](const Request& req) { return detail::innet::nvls_generate(req, kName, emit); };
  a.cost_formula = "not exact (in-network agents): each rank sends its block once and receives the "
                   "other p-1 (2a + (p-1)/p n b on one node)";
  return a;
}

} // namespace collsim::algorithms
