// CollNet Chain allreduce (algorithms.md AR18, section 2.4): within each node a pipelined chain
// reduces the vector to the node's NIC rank, the reducing network switch (InfiniBand SHARP)
// allreduces it across the nodes, and a pipelined chain broadcasts the result back.
//
// Source: NCCL CollNetChain (src/device/all_reduce.h, the NCCL_ALGO_COLLNET_CHAIN specialisation;
// tuning.cc: skipped when a node holds more than NCCL_MAX_DIRECT_ARITY+1 = 8 ranks; chunks start at
// min(256 KiB, ...), algorithms.md section 3.7).
//
// Schedule, node of m ranks M[0..m-1] (ascending; M[0], the node's lowest rank, is the NIC rank and
// the chain's end), segments s = 0..S-1 of segment_size bytes (S = ceil(n / segment_size); one
// segment when segment_size is 0 or n is 0):
//   reduce, for every segment: M[l] (l < m-1) recv_reduces it from M[l+1] into data; M[l] (l > 0)
//     then sends it to M[l-1]; M[0], with more than one node, sends it to the switch;
//   broadcast, for every segment: M[0] receives the switch's result (waiting for its send);
//     M[l] (l > 0) receives it from M[l-1] (waiting for its reduce send, which read those bytes);
//     M[l] (l < m-1) sends it to M[l+1].
//   Switch, per segment: receive from node 0's M[0], recv_reduce from the other nodes' M[0], send
//   the result to every node's M[0]. On one node there is no switch and no agent.
// Each rank emits the reduce part of every segment in issue stream 0 and the broadcast part in
// stream 1, as NCCL runs the two on separate warps (a rank that waited for segment s to come back
// before forwarding segment s + k would serialise round trips, and under NCCL's FIFO flow control,
// core::Protocol::fifo_slots, a reduce part waiting for slots that only the broadcast part frees
// would deadlock); every rank sends and
// receives about n each way per phase on its chain link, the NIC rank n each way through the
// switch.
//
// Cost: not exact (an in-network agent takes part; no closed form is declared). Expected, uniform
// nodes of m ranks, S segments of s bytes: 2(m-1+S-1)(a_intra + s b_intra) + 2(a_net + s b_net)
// + (S-1) s b_net when the network is slower, plus (m-1) n g.

#include "allreduce/allreduce_algorithms.hpp"
#include "in_network_support.hpp"
#include "nccl_support.hpp"

#include <algorithm>
#include <cstdint>

namespace collsim::algorithms {
namespace {

using detail::innet::Emitter;
using detail::innet::kNoDep;

constexpr const char* kName = "collnet_chain";
constexpr std::uint32_t kMaxLocal = 8; // NCCL_MAX_DIRECT_ARITY + 1
constexpr std::int64_t kDefaultSegment = std::int64_t{256} << 10;

std::uint64_t segment_of(const Request& req) {
  return static_cast<std::uint64_t>(detail::innet::param_or(req, "segment_size", kDefaultSegment));
}

std::uint64_t segments(std::uint64_t n, std::uint64_t seg) {
  return n == 0 || seg == 0 ? 1 : (n + seg - 1) / seg;
}

void emit(const Request& req, const detail::innet::Fabric& f, Emitter& e) {
  const std::uint32_t p = req.ranks;
  if (p < 2) {
    return;
  }
  const std::uint64_t n = req.bytes.value;
  const std::uint64_t seg = segment_of(req);
  const std::uint64_t count = segments(n, seg);
  const auto segment = [&](std::uint64_t i) {
    if (count == 1) {
      return detail::data_range(0, n);
    }
    const std::uint64_t begin = i * seg;
    return detail::data_range(begin, std::min(n, begin + seg) - begin);
  };
  const auto& layout = f.layout;
  const std::uint32_t nodes = layout.nodes();
  const bool network = nodes > 1;
  const core::Rank sw = p;

  std::vector<std::uint32_t> up(count); // per segment: the reduce send (or the last write)
  for (core::Rank r = 0; r < p; ++r) {
    e.begin(r);
    const auto& members = layout.members[layout.node[r]];
    const std::uint32_t m = static_cast<std::uint32_t>(members.size());
    const std::uint32_t l = layout.local[r];
    detail::innet::interleave(
        count, count,
        [&](std::uint64_t i) {
          e.stream(0);
          std::uint32_t w = kNoDep;
          if (l + 1 < m) {
            w = e.recv_reduce(members[l + 1], segment(i));
          }
          if (l > 0) {
            up[i] = e.send(members[l - 1], segment(i), w);
          } else {
            up[i] = network ? e.send(sw, segment(i), w) : w;
          }
        },
        [&](std::uint64_t i) {
          e.stream(1);
          std::uint32_t w = up[i];
          if (l > 0) {
            w = e.recv(members[l - 1], segment(i), up[i]);
          } else if (network) {
            w = e.recv(sw, segment(i), up[i]);
          }
          if (l + 1 < m) {
            e.send(members[l + 1], segment(i), w);
          }
        });
  }
  if (!network) {
    return;
  }
  e.begin(sw);
  for (std::uint64_t i = 0; i < count; ++i) {
    std::uint32_t w = kNoDep;
    for (std::uint32_t k = 0; k < nodes; ++k) {
      w = e.gather_reduce(layout.members[k].front(), segment(i), w);
    }
    for (std::uint32_t k = 0; k < nodes; ++k) {
      e.send(layout.members[k].front(), segment(i), w);
    }
  }
}

core::Schedule generate(const Request& req) {
  const auto f = detail::innet::fabric_of(req);
  core::ScheduleHeader h = make_header(req, 0, kName);
  // NCCL runs CollNetChain with the Simple protocol only (full payload, tuning.cc latencies).
  h.protocol = nccl::make_protocol(nccl::Algo::collnet_chain, nccl::Proto::simple, req);
  if (req.ranks > 1 && f.layout.nodes() > 1) {
    h.agents = {f.network_switch};
  }
  return detail::innet::build(std::move(h), [&](Emitter& e) { emit(req, f, e); });
}

std::string check(const Request& req) {
  const auto f = detail::innet::fabric_of(req);
  if (std::string why =
          detail::innet::local_ranks_refusal(f, kMaxLocal, kName, "NCCL_MAX_DIRECT_ARITY+1");
      !why.empty()) {
    return why;
  }
  if (std::string why = detail::innet::network_switch_refusal(f, kName); !why.empty()) {
    return why;
  }
  // Per segment: 4(m-1) operations on a node of m ranks, 2 more on its NIC rank and 2 on the
  // switch per node when there is more than one node.
  const std::uint64_t count = segments(req.bytes.value, segment_of(req));
  const std::uint64_t nodes = f.layout.nodes();
  const std::uint64_t per_segment =
      req.ranks < 2 ? 0 : 4ULL * (req.ranks - nodes) + (nodes > 1 ? 4 * nodes : 0);
  const std::uint64_t ops =
      per_segment != 0 && count > UINT64_MAX / per_segment ? UINT64_MAX : count * per_segment;
  return detail::size_limit_refusal({ops, 0});
}

} // namespace

AlgorithmInfo describe_allreduce_collnet_chain() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::allreduce;
  a.summary = "pipelined chain reduce to each node's NIC rank, network switch (SHARP) allreduce "
              "across nodes, pipelined chain broadcast back";
  a.source = "NCCL CollNetChain (src/device/all_reduce.h, tuning.cc)";
  a.aliases = {"nccl:collnetchain"};
  a.params = {{"segment_size", kDefaultSegment, 0, std::int64_t{1} << 30,
               "bytes per pipeline segment (0: the whole vector in one message)"}};
  a.constraints = {"at most 8 ranks per node (NCCL_MAX_DIRECT_ARITY+1)",
                   "ranks on more than one node need a reducing network switch (InfiniBand SHARP)",
                   "the chain ends at each node's lowest rank (its NIC rank)"};
  a.check = check;
  a.generate = generate;
  a.cost_formula = "not exact (in-network agent): about 2(m-1+S-1)(a + s b) within the node for S "
                   "segments of s bytes, plus a round trip of n through the switch";
  return a;
}

} // namespace collsim::algorithms
