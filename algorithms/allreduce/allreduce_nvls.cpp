// NVLS allreduce (algorithms.md AR19, sections 2.4 and 3.3): NVLink SHARP. Each node's NVSwitch
// reduces in the switch and multicasts the result: every rank sends each shard of its vector to the
// switch once, the switch reduces the shard across the node's ranks and sends the result back to
// all of them. With more than one node the node switches hand their reduced shards to the reducing
// network switch, which reduces them across nodes and returns them (NVLS + CollNet: NCCL skips
// multi-node NVLS without CollNet support, `a == NVLS && collNetSupport != 1 && nNodes > 1`).
//
// Source: NCCL NVLS (src/device/all_reduce.h, the NCCL_ALGO_NVLS specialisation: multimem.ld_reduce
// on the multicast address, then multimem.st); tuning.cc.
//
// Model: the switch is an agent (core::ScheduleHeader::agents): node switches in node order, then
// the network switch. NCCL's GPU g pulls shard g reduced (ld_reduce) and stores it multicast; here
// the switch itself reduces and multicasts, so each rank's link carries n out and n in
// (algorithms.md AR19: "n out + n in instead of 2(p-1)/p n").
//
// Schedule: shards j = 0..S-1 with S = the most ranks on any node (block_range(n, S, j); one layout
// for every node, so the network switch's shards line up when the last node is partial).
//   Rank: send every shard to its node switch (stream 0); receive every shard back into data
//   (stream 1, each waiting for the send that read it).
//   Node switch of ranks M[0..m-1]: for every shard, receive it from M[0] and recv_reduce it from
//   M[1..] (each waiting for the previous write); with more than one node, send it to the network
//   switch; then receive the network switch's result (waiting for that send) and send the shard to
//   every M[i]. On one node each shard is multicast right after its reduction (so the way back
//   overlaps the way in); across nodes every shard is handed to the network switch before the
//   first result is awaited (waiting for one round trip per shard would serialise them).
//   Network switch, per shard: receive from node switch 0, recv_reduce from the others, send the
//   result to every node switch.
// One rank: nothing to do (no agent).
//
// Cost: not exact (in-network agents take part; no closed form is declared). Expected on one node
// with the switch reducing as fast as data arrives: 2a + (n + n/S) b (a rank's link carries n each
// way, pipelined over the S shards); across nodes each node switch also sends and receives n
// through the network switch, about 2 a_net + n b_net more.

#include "allreduce/allreduce_algorithms.hpp"
#include "in_network_support.hpp"

namespace collsim::algorithms {
namespace {

using detail::innet::Emitter;
using detail::innet::kNoDep;

constexpr const char* kName = "nvls";

void emit(const Request& req, const detail::innet::Fabric& f, Emitter& e) {
  const std::uint32_t p = req.ranks;
  if (p < 2) {
    return;
  }
  const std::uint64_t n = req.bytes.value;
  const auto& layout = f.layout;
  const std::uint32_t nodes = layout.nodes();
  const std::uint32_t shards = layout.max_per_node();
  const bool network = nodes > 1;
  const core::Rank net = p + nodes;
  const auto shard = [&](std::uint32_t j) { return detail::innet::piece(n, shards, j); };

  std::vector<std::uint32_t> sent(shards);
  for (core::Rank r = 0; r < p; ++r) {
    e.begin(r);
    const core::Rank sw = p + layout.node[r];
    // Sending and receiving are separate roles on separate streams, as NCCL's NVLS kernel runs
    // its scatter and gather in separate warp groups (src/device/all_reduce.h): a rank takes
    // results back while it still sends. In one stream, with more shards than a connection's FIFO
    // slots (NCCL's flow control, stacks/nccl), the switch would wait to multicast a result the
    // rank is not receiving yet while the rank waited for credit to send (32 ranks and more on
    // one NVLink domain).
    e.stream(0);
    for (std::uint32_t j = 0; j < shards; ++j) {
      sent[j] = e.send(sw, shard(j));
    }
    e.stream(1);
    for (std::uint32_t j = 0; j < shards; ++j) {
      e.recv(sw, shard(j), sent[j]);
    }
    e.stream(0);
  }
  for (std::uint32_t k = 0; k < nodes; ++k) {
    e.begin(p + k);
    const auto& members = layout.members[k];
    detail::innet::interleave(
        shards, network ? shards : 0U,
        [&](std::uint32_t j) {
          std::uint32_t w = kNoDep;
          for (core::Rank q : members) {
            w = e.gather_reduce(q, shard(j), w);
          }
          sent[j] = network ? e.send(net, shard(j), w) : w;
        },
        [&](std::uint32_t j) {
          const std::uint32_t w = network ? e.recv(net, shard(j), sent[j]) : sent[j];
          for (core::Rank q : members) {
            e.send(q, shard(j), w);
          }
        });
  }
  if (!network) {
    return;
  }
  e.begin(net);
  for (std::uint32_t j = 0; j < shards; ++j) {
    std::uint32_t w = kNoDep;
    for (std::uint32_t k = 0; k < nodes; ++k) {
      w = e.gather_reduce(p + k, shard(j), w);
    }
    for (std::uint32_t k = 0; k < nodes; ++k) {
      e.send(p + k, shard(j), w);
    }
  }
}

} // namespace

AlgorithmInfo describe_allreduce_nvls() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::allreduce;
  a.summary =
      "NVLink SHARP: every rank sends its vector to the node's NVSwitch, which reduces each "
      "shard and multicasts it back (across nodes also through the SHARP network switch)";
  a.source = "NCCL NVLS (src/device/all_reduce.h multimem.ld_reduce + multimem.st; tuning.cc)";
  a.aliases = {"nccl:nvls"};
  a.constraints = {"every node needs a reducing NVSwitch (NVLink SHARP)",
                   "ranks on more than one node also need a reducing network switch (NVLS + "
                   "CollNet, as NCCL requires)"};
  a.check = [](const Request& req) { return detail::innet::nvls_refusal(req, kName, false, emit); };
  a.generate = [](const Request& req) { return detail::innet::nvls_generate(req, kName, emit); };
  a.cost_formula =
      "not exact (in-network agents): each rank sends n and receives n over its "
      "NVLink (2a + n b on one node, pipelined over shards); each node switch sends and "
      "receives n through the network switch across nodes";
  return a;
}

} // namespace collsim::algorithms
