// NVLS reduce-scatter (algorithms.md RS9, sections 2.4 and 3.3): NVLink SHARP. Every rank sends its
// whole vector to its node's NVSwitch once; the switch reduces block b across the node's ranks and
// delivers it to b's owner. Across nodes the node switches hand every reduced block to the reducing
// network switch, which reduces it across nodes and returns it to the owner's node switch (NVLS +
// CollNet; NCCL gives multi-node NVLS reduce-scatter no bandwidth unless CollNet is enabled).
//
// Source: NCCL NVLS reduce-scatter (src/device/reduce_scatter.h, multimem.ld_reduce on the
// multicast address); tuning.cc (NVLS is skipped for non-allreduce collectives when a node holds
// more than NCCL_MAX_NVLS_ARITY = 32 ranks).
//
// Schedule (in-place reduce-scatter: rank r's result is block_range(n, p, r) of data):
//   Rank r: send blocks 0..p-1 to its node switch; receive its own block back into data (waiting
//   for the send that read it).
//   Node switch of ranks M: for every block b: receive it from M[0], recv_reduce it from M[1..]
//   (each waiting for the previous write); with more than one node send it to the network switch.
//   When b is a local rank: receive block b's result from the network switch (waiting for that
//   send) and send it to b: on one node right after its reduction, across nodes after every block
//   has been handed to the network switch (waiting for one round trip per block would serialise
//   them).
//   Network switch, per block b: receive from node switch 0, recv_reduce from the others, send the
//   result to the switch of b's node.
// Agents: the node switches in node order, then the network switch. One rank: nothing to do.
// Per rank: n out, n/p in; per node switch across N nodes: n out and its node's blocks in.
//
// Cost: not exact (in-network agents take part; no closed form is declared). Expected on one node
// with the switch reducing as fast as data arrives: 2a + (n + n/p) b.

#include "in_network_support.hpp"
#include "reduce_scatter/reduce_scatter_algorithms.hpp"

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
  const bool network = nodes > 1;
  const core::Rank net = p + nodes;
  const auto block = [&](core::Rank b) { return detail::innet::piece(n, p, b); };

  std::vector<std::uint32_t> last(p);
  for (core::Rank r = 0; r < p; ++r) {
    e.begin(r);
    const core::Rank sw = p + layout.node[r];
    for (core::Rank b = 0; b < p; ++b) {
      last[b] = e.send(sw, block(b));
    }
    e.recv(sw, block(r), last[r]);
  }
  for (std::uint32_t k = 0; k < nodes; ++k) {
    e.begin(p + k);
    const auto& members = layout.members[k];
    detail::innet::interleave(
        p, network ? p : 0U,
        [&](core::Rank b) {
          std::uint32_t w = kNoDep;
          for (core::Rank q : members) {
            w = e.gather_reduce(q, block(b), w);
          }
          last[b] = network ? e.send(net, block(b), w) : w;
        },
        [&](core::Rank b) {
          if (layout.node[b] != k) {
            return;
          }
          const std::uint32_t w = network ? e.recv(net, block(b), last[b]) : last[b];
          e.send(b, block(b), w);
        });
  }
  if (!network) {
    return;
  }
  e.begin(net);
  for (core::Rank b = 0; b < p; ++b) {
    std::uint32_t w = kNoDep;
    for (std::uint32_t k = 0; k < nodes; ++k) {
      w = e.gather_reduce(p + k, block(b), w);
    }
    e.send(p + layout.node[b], block(b), w);
  }
}

} // namespace

AlgorithmInfo describe_reduce_scatter_nvls() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::reduce_scatter;
  a.summary = "NVLink SHARP: every rank sends its vector to the node's NVSwitch, which reduces "
              "each block and delivers it to its owner (across nodes also through the network "
              "switch)";
  a.source = "NCCL NVLS reduce-scatter (src/device/reduce_scatter.h multimem.ld_reduce; "
             "tuning.cc)";
  a.aliases = {"nccl:nvls"};
  a.constraints = {"every node needs a reducing NVSwitch (NVLink SHARP)",
                   "at most 32 ranks per node (NCCL_MAX_NVLS_ARITY)",
                   "ranks on more than one node also need a reducing network switch (NVLS + "
                   "CollNet, as NCCL requires)"};
  a.check = [](const Request& req) { return detail::innet::nvls_refusal(req, kName, true, emit); };
  a.generate = [](const Request& req) { return detail::innet::nvls_generate(req, kName, emit); };
  a.cost_formula = "not exact (in-network agents): each rank sends n and receives its block "
                   "(2a + (n + n/p) b on one node)";
  return a;
}

} // namespace collsim::algorithms
