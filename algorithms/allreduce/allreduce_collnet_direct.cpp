// CollNet Direct allreduce (algorithms.md AR17, section 2.4): within each node every rank scatters
// its vector directly to the node's "head" ranks, one per NIC; each head reduces its shard, hands
// it to the reducing network switch (InfiniBand SHARP), which reduces the shard across the nodes'
// heads and returns it, and the head sends the result directly to every rank of its node.
//
// Source: NCCL src/device/all_reduce.h (the NCCL_ALGO_COLLNET_DIRECT specialisation: scatter to
// up to NCCL_MAX_DIRECT_ARITY+1 = 8 heads, the heads' collnet send/recv, direct gather back);
// tuning.cc (CollNetDirect is skipped when a node holds more than 8 ranks).
//
// Heads: on a topology, the heads of a node are, for each NIC its ranks leave the node through
// (core::Device::egress), the lowest rank using that NIC, at most 8; without NICs (no topology, or
// a single-node topology without egress) the first min(8, m) ranks of an m-rank node. The vector
// is cut into H = (the most heads of any node) shards (block_range(n, H, j)); on a node with h
// heads, shard j belongs to head j mod h, so every node hands every shard to the switch once even
// when nodes differ (a partial last node).
//
// Schedule, rank r at place l of node k (m ranks, h heads), owner(j) its node's head of shard j:
//   1. for every shard j it does not own: send shard j to owner(j), head by head from head l mod h
//      on (cyclically; a head's shards ascending): NCCL rotates each rank's scatter and gather
//      peers by `shift` = localRank mod nHeads (src/graph/connect.cc; prims_simple.h,
//      ScatterGatherOp: "peer offset to avoid all ranks sending to or receiving from same peer"),
//      so the heads receive from different ranks at once instead of all ranks sending to head 0
//      first;
//   2. for every shard j it owns (ascending): recv_reduce shard j from every other rank of the node
//      in the order their scatters reach it (each waiting for the previous); with more than one
//      node send shard j to the switch; then receive the switch's result into data (waiting for
//      that send) and send it to every other rank of the node, from the one after r on
//      (cyclically). On one node each shard goes back right after its reduction;
//      with a switch, every owned shard is handed to the switch before the first result is
//      awaited (waiting for one round trip per shard would serialise them);
//   3. for every shard j it does not own: receive it from owner(j) into data (waiting for the send
//      of step 1, which read those bytes).
//   Switch, per shard j: receive it from node 0's owner, recv_reduce from every other node's owner,
//   send the result to every node's owner. On one node there is no switch and no agent.
// Per rank of an m-rank node with h heads: a non-head sends and receives n; a head of s shards
// (about n s / H bytes) receives (m-1) times them and sends them to the m-1 others, plus one
// round trip through the switch.
//
// Cost: not exact (an in-network agent takes part; no closed form is declared). Expected, N > 1
// uniform nodes of m ranks with h heads: 2(a_intra + a_net) + 2(m-1)(n/h) b_intra + 2(n/h) b_net
// (a head's link carries m-1 incoming and m-1 outgoing shards of n/h bytes, and one round trip
// through the switch), plus (m-1)(n/h) g for the heads' reductions.

#include "allreduce/allreduce_algorithms.hpp"
#include "in_network_support.hpp"
#include "nccl_support.hpp"

#include <algorithm>

namespace collsim::algorithms {
namespace {

using detail::innet::Emitter;
using detail::innet::kNoDep;

constexpr const char* kName = "collnet_direct";
/// NCCL_MAX_DIRECT_ARITY + 1: the most heads, and the most ranks per node.
constexpr std::uint32_t kMaxHeads = 8;

struct Plan {
  detail::innet::Fabric fabric;
  std::vector<std::vector<core::Rank>> heads; ///< per node, ascending
  std::uint32_t shards = 1;                   ///< H
};

std::vector<core::Rank> heads_of(const Request& req, const std::vector<core::Rank>& members) {
  std::vector<core::Rank> heads;
  std::vector<core::DeviceId> nics;
  const core::Topology* t = req.topology;
  if (t != nullptr && !t->is_full_mesh() && t->rank_count() >= req.ranks) {
    for (core::Rank r : members) {
      const core::DeviceId nic = t->devices()[t->device_of(r)].egress;
      if (nic != core::kNoDevice && std::find(nics.begin(), nics.end(), nic) == nics.end() &&
          heads.size() < kMaxHeads) {
        nics.push_back(nic);
        heads.push_back(r);
      }
    }
  }
  if (heads.empty()) {
    const std::size_t h = std::min<std::size_t>(kMaxHeads, members.size());
    heads.assign(members.begin(), members.begin() + static_cast<std::ptrdiff_t>(h));
  }
  return heads;
}

Plan plan_of(const Request& req) {
  Plan plan{detail::innet::fabric_of(req), {}, 1};
  for (const auto& members : plan.fabric.layout.members) {
    plan.heads.push_back(heads_of(req, members));
    plan.shards = std::max(plan.shards, static_cast<std::uint32_t>(plan.heads.back().size()));
  }
  return plan;
}

std::string refusal(const Plan& plan) {
  if (std::string why = detail::innet::local_ranks_refusal(plan.fabric, kMaxHeads, kName,
                                                           "NCCL_MAX_DIRECT_ARITY+1");
      !why.empty()) {
    return why;
  }
  return detail::innet::network_switch_refusal(plan.fabric, kName);
}

/// Rank r's place among its node's ranks (ascending).
std::uint32_t local_index(const std::vector<core::Rank>& members, core::Rank r) {
  return static_cast<std::uint32_t>(std::lower_bound(members.begin(), members.end(), r) -
                                    members.begin());
}

/// The ranks of a node in the order their scatter reaches head `hi` of h: a rank at place l
/// starts at head l mod h, so it reaches head hi after (hi - l) mod h others.
std::vector<core::Rank> by_arrival(const std::vector<core::Rank>& members, std::uint32_t hi,
                                   std::uint32_t h) {
  std::vector<core::Rank> order = members;
  const auto turn = [&](core::Rank q) { return (hi + h - local_index(members, q) % h) % h; };
  std::stable_sort(order.begin(), order.end(),
                   [&](core::Rank a, core::Rank b) { return turn(a) < turn(b); });
  return order;
}

void emit(const Request& req, const Plan& plan, Emitter& e) {
  const std::uint32_t p = req.ranks;
  if (p < 2) {
    return;
  }
  const std::uint64_t n = req.bytes.value;
  const auto& layout = plan.fabric.layout;
  const std::uint32_t nodes = layout.nodes();
  const std::uint32_t shards = plan.shards;
  const bool network = nodes > 1;
  const core::Rank sw = p; // the network switch, when there is more than one node
  const auto shard = [&](std::uint32_t j) { return detail::innet::piece(n, shards, j); };
  const auto owner = [&](std::uint32_t node, std::uint32_t j) {
    const auto& h = plan.heads[node];
    return h[j % h.size()];
  };

  std::vector<std::uint32_t> sent(shards);
  std::vector<std::uint32_t> last(shards);
  std::vector<std::uint32_t> owned;
  for (core::Rank r = 0; r < p; ++r) {
    e.begin(r);
    const std::uint32_t k = layout.node[r];
    const auto& members = layout.members[k];
    const auto& heads = plan.heads[k];
    const auto h = static_cast<std::uint32_t>(heads.size());
    const std::uint32_t local = local_index(members, r);
    // NCCL's scatter starts at the head after its own place (`shift`), so that the ranks of a
    // node do not all send to one head first; per head its shards in ascending order.
    for (std::uint32_t t = 0; t < h; ++t) {
      const std::uint32_t hi = (local + t) % h;
      for (std::uint32_t j = hi; heads[hi] != r && j < shards; j += h) {
        sent[j] = e.send(heads[hi], shard(j));
      }
    }
    owned.clear();
    for (std::uint32_t j = 0; j < shards; ++j) {
      if (owner(k, j) == r) {
        owned.push_back(j);
      }
    }
    const auto count = static_cast<std::uint32_t>(owned.size());
    detail::innet::interleave(
        count, network ? count : 0U,
        [&](std::uint32_t i) {
          const std::uint32_t j = owned[i];
          // Reduced in the order the shards arrive: the member whose scatter reaches this head
          // first (NCCL's head reduces all of them at once, recvReduceDirectSend over its fan).
          std::uint32_t w = kNoDep;
          for (core::Rank q : by_arrival(members, j % h, h)) {
            if (q != r) {
              w = e.recv_reduce(q, shard(j), w);
            }
          }
          last[j] = network ? e.send(sw, shard(j), w) : w;
        },
        [&](std::uint32_t i) {
          const std::uint32_t j = owned[i];
          const std::uint32_t w = network ? e.recv(sw, shard(j), last[j]) : last[j];
          // To the members from the one after this head on: the heads' results reach
          // different members at once (NCCL's gather is rotated by `shift` too).
          const auto m = static_cast<std::uint32_t>(members.size());
          for (std::uint32_t t = 1; t < m; ++t) {
            e.send(members[(local + t) % m], shard(j), w);
          }
        });
    for (std::uint32_t j = 0; j < shards; ++j) {
      if (owner(k, j) != r) {
        e.recv(owner(k, j), shard(j), sent[j]);
      }
    }
  }
  if (!network) {
    return;
  }
  e.begin(sw);
  for (std::uint32_t j = 0; j < shards; ++j) {
    std::uint32_t w = kNoDep;
    for (std::uint32_t k = 0; k < nodes; ++k) {
      w = e.gather_reduce(owner(k, j), shard(j), w);
    }
    for (std::uint32_t k = 0; k < nodes; ++k) {
      e.send(owner(k, j), shard(j), w);
    }
  }
}

core::Schedule generate(const Request& req) {
  const Plan plan = plan_of(req);
  core::ScheduleHeader h = make_header(req, 0, kName);
  // NCCL runs CollNetDirect with the Simple protocol only (full payload, tuning.cc latencies).
  h.protocol = nccl::make_protocol(nccl::Algo::collnet_direct, nccl::Proto::simple, req);
  if (req.ranks > 1 && plan.fabric.layout.nodes() > 1) {
    h.agents = {plan.fabric.network_switch};
  }
  return detail::innet::build(std::move(h), [&](Emitter& e) { emit(req, plan, e); });
}

std::string check(const Request& req) {
  const Plan plan = plan_of(req);
  if (std::string why = refusal(plan); !why.empty()) {
    return why;
  }
  Emitter counter;
  emit(req, plan, counter);
  return detail::size_limit_refusal(counter.counts());
}

} // namespace

AlgorithmInfo describe_allreduce_collnet_direct() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::allreduce;
  a.summary = "scatter to up to 8 head ranks per node (one per NIC), heads reduce and allreduce "
              "their shard in the network switch (SHARP), heads send the result to every rank";
  a.source = "NCCL CollNetDirect (src/device/all_reduce.h, tuning.cc)";
  a.aliases = {"nccl:collnetdirect"};
  a.constraints = {"at most 8 ranks per node (NCCL_MAX_DIRECT_ARITY+1)",
                   "ranks on more than one node need a reducing network switch (InfiniBand SHARP)",
                   "heads: the lowest rank per NIC of each node (at most 8), or the first min(8, "
                   "ranks on the node) ranks when the topology has no NICs"};
  a.check = check;
  a.generate = generate;
  a.cost_formula = "not exact (in-network agent): per node of m ranks with h heads, about "
                   "2(a_intra + a_net) + 2(m-1)/h n b_intra + 2 n/h b_net; a non-head rank sends "
                   "and receives n";
  return a;
}

} // namespace collsim::algorithms
