// SHARP allreduce, host-based node level (algorithms.md AR17 and AR14 item 2): each node reduces
// its vectors to its leader with a binomial tree, the leaders allreduce in the reducing network
// switch (InfiniBand SHARP: the switch receives every leader's vector, reduces, and returns the
// result), and each leader broadcasts the result over the node with a binomial tree.
//
// Source: MVAPICH2 2.3.7 MPIR_Sharp_Allreduce_MV2 (allreduce_osu.c) inside the two-level allreduce
// MPIR_Allreduce_two_level_MV2: intra-node reduce to the node leader (reduce_p2p, binomial), SHARP
// among the leaders, intra-node bcast.
//
// Schedule, node of m ranks M[0..m-1] ascending, leader M[0] (the node's lowest rank), local index
// l, the whole vector n in data:
//   reduce: for mask = 1, 2, 4, ...: if l has bit mask, send data to M[l - mask] and stop; else if
//     l + mask < m, recv_reduce data from M[l + mask] (each waiting for the previous write);
//   leader, more than one node: send data to the switch, receive the result into data (waiting for
//     that send);
//   bcast: a non-leader receives data from M[l - lowbit(l)] (waiting for its reduce send, which
//   read
//     data), then, like the leader, sends it to M[l + mask] for mask = lowbit(l)/2 (the leader: the
//     largest power of two below m) down to 1 where l + mask < m.
//   Switch: receive from leader 0, recv_reduce from the other leaders, send to every leader.
// On one node there is no switch and no agent: a binomial reduce plus a binomial bcast.
//
// Cost: not exact (an in-network agent takes part; no closed form is declared). Expected, uniform
// nodes of m ranks: 2 ceil(lg m)(a + n b) + ceil(lg m) n g within the node, plus 2 a_net + 2 n
// b_net through the switch.

#include "allreduce/allreduce_algorithms.hpp"
#include "in_network_support.hpp"

#include <bit>

namespace collsim::algorithms {
namespace {

using detail::innet::Emitter;
using detail::innet::kNoDep;

constexpr const char* kName = "sharp";

void emit(const Request& req, const detail::innet::Fabric& f, Emitter& e) {
  const std::uint32_t p = req.ranks;
  if (p < 2) {
    return;
  }
  const core::Range all = detail::data_range(0, req.bytes.value);
  const auto& layout = f.layout;
  const std::uint32_t nodes = layout.nodes();
  const bool network = nodes > 1;
  const core::Rank sw = p;
  for (core::Rank r = 0; r < p; ++r) {
    e.begin(r);
    const auto& members = layout.members[layout.node[r]];
    const std::uint32_t m = static_cast<std::uint32_t>(members.size());
    const std::uint32_t l = layout.local[r];
    std::uint32_t w = kNoDep;
    std::uint32_t up = kNoDep;
    for (std::uint32_t mask = 1; mask < m; mask <<= 1) {
      if ((l & mask) != 0) {
        up = e.send(members[l - mask], all, w);
        break;
      }
      if (l + mask < m) {
        w = e.recv_reduce(members[l + mask], all, w);
      }
    }
    std::uint32_t top = 0; // the largest child distance
    if (l == 0) {
      if (network) {
        w = e.recv(sw, all, e.send(sw, all, w));
      }
      top = m > 1 ? std::bit_floor(m - 1) : 0;
    } else {
      const std::uint32_t low = l & (~l + 1);
      w = e.recv(members[l - low], all, up);
      top = low >> 1;
    }
    for (std::uint32_t mask = top; mask > 0; mask >>= 1) {
      if (l + mask < m) {
        e.send(members[l + mask], all, w);
      }
    }
  }
  if (!network) {
    return;
  }
  e.begin(sw);
  std::uint32_t w = kNoDep;
  for (std::uint32_t k = 0; k < nodes; ++k) {
    w = e.gather_reduce(layout.members[k].front(), all, w);
  }
  for (std::uint32_t k = 0; k < nodes; ++k) {
    e.send(layout.members[k].front(), all, w);
  }
}

core::Schedule generate(const Request& req) {
  const auto f = detail::innet::fabric_of(req);
  core::ScheduleHeader h = make_header(req, 0, kName);
  if (req.ranks > 1 && f.layout.nodes() > 1) {
    h.agents = {f.network_switch};
  }
  return detail::innet::build(std::move(h), [&](Emitter& e) { emit(req, f, e); });
}

std::string check(const Request& req) {
  const auto f = detail::innet::fabric_of(req);
  if (std::string why = detail::innet::network_switch_refusal(f, kName); !why.empty()) {
    return why;
  }
  Emitter counter;
  emit(req, f, counter);
  return detail::size_limit_refusal(counter.counts());
}

} // namespace

AlgorithmInfo describe_allreduce_sharp() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::allreduce;
  a.summary = "binomial reduce to each node's lowest rank, SHARP allreduce of the leaders in the "
              "network switch, binomial bcast within the node";
  a.source = "MVAPICH2 MPIR_Sharp_Allreduce_MV2 in MPIR_Allreduce_two_level_MV2 (allreduce_osu.c)";
  a.aliases = {"mv2:sharp"};
  a.constraints = {"ranks on more than one node need a reducing network switch (InfiniBand SHARP)"};
  a.check = check;
  a.generate = generate;
  a.cost_formula = "not exact (in-network agent): about 2 ceil(lg m)(a + n b) + ceil(lg m) n g "
                   "within a node of m ranks, plus 2 a_net + 2 n b_net through the switch";
  return a;
}

} // namespace collsim::algorithms
