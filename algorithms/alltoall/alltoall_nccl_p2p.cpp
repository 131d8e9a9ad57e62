// NCCL's all-to-all: grouped ncclSend/ncclRecv to and from every peer (algorithms.md section 2.4),
// as nccl-tests' alltoall_perf and the frameworks call it (ncclGroupStart; for each peer r:
// ncclSend(block r), ncclRecv(into block r); ncclGroupEnd).
//
// Source: NCCL src/enqueue.cc (scheduleP2pTasksToPlan, addP2pToPlan: channels and protocol per
// operation, chunk size), src/init.cc (computeBuffSizes: P2P chunk sizes, the p2pSchedule of
// rounds), src/graph/paths.cc (ncclTopoComputeP2pChannels), src/include/channel.h and device.h
// (the channel of each part of an operation).
//
// NCCL's plan. Round i (0 <= i < p) pairs a send with a receive as init.cc's ncclP2pSchedule
// orders them (p2p_schedule below: r+1, r+2, ... on one node; across nodes, groups of 8 ranks of
// a node visited in a quadratic sequence of group deltas). Round 0 is the rank's own block, a
// local copy. Each send or receive of b bytes is split into `channels` parts (the
// number addP2pToPlan picks for b; stacks::nccl_p2p_choice), each part runs on its own channel
// (thread block) and moves in chunks through the peer's FIFO of NCCL_STEPS slots: Simple chunks of
// the P2P chunk size (NCCL_P2P_NVL_CHUNKSIZE 512 KiB on an NVLink-only node, NCCL_P2P_PCI_CHUNKSIZE
// 128 KiB on PCIe, NCCL_P2P_NET_CHUNKSIZE 128 KiB with several nodes, quartered for a network peer
// when b < one chunk and halved when b < 8 chunks), LL chunks of half an LL step (32 KiB of data).
// All rounds are in flight at once: NCCL packs them into the channels' work batches.
//
// Schedule, rank r: copy its own block data[r b, +b) -> data[n + r b, +b); then for each round
// (send peer t, receive peer f), for each chunk index, for each part k (issue stream k): receive
// the chunk from f into data[n + f b + ..] and send the chunk of data[t b + ..] to t. No
// dependencies:
// every operation touches its own bytes. The NCCL stack lowers it with the ring's protocol
// constants (launch, per-step latency, FIFO slots, line efficiency): NCCL's tuning model has none
// for point-to-point transfers, and they run through the same connections and protocol buffers.
//
// Cost: about a + (p-1)/p n b without contention; no closed form is declared (protocol latencies
// and line efficiency are not alpha-beta terms).

#include "alltoall/alltoall_algorithms.hpp"
#include "nccl_support.hpp"

#include <bit>
#include <numeric>
#include <utility>
#include <vector>

namespace collsim::algorithms {
namespace {

using nccl::Proto;

constexpr const char* kName = "nccl_p2p";
constexpr std::uint64_t kNetChunk = 128 << 10; // NCCL_P2P_NET_CHUNKSIZE
constexpr std::uint64_t kPciChunk = 128 << 10; // NCCL_P2P_PCI_CHUNKSIZE
constexpr std::uint64_t kNvlChunk = 512 << 10; // NCCL_P2P_NVL_CHUNKSIZE

/// Rank r's (send peer, receive peer) for rounds 0..p-1: init.cc's ncclP2pSchedule. Ranks are
/// cut into groups of NCCL_P2P_SCHEDULE_GROUP_SIZE (8) ranks of a node (one node: the whole node;
/// the gcd where a node's ranks do not divide), group deltas run through the quadratic sequence
/// (x^2 + x)/2 mod pow2Up(groups) (skipping those >= groups), and inside each group delta the
/// local deltas 0, 1, ..., so a one-node exchange goes r+1, r+2, ... and a multi-node one visits
/// the other nodes' groups in a spread order. Round 0 pairs the rank with itself.
std::vector<std::pair<core::Rank, core::Rank>> p2p_schedule(const detail::NodeLayout& l,
                                                            core::Rank r) {
  const std::uint32_t nodes = l.nodes();
  std::uint32_t g = nodes > 1 ? 8 : l.max_per_node();
  for (const auto& m : l.members) {
    const auto local_ranks = static_cast<std::uint32_t>(m.size());
    if (local_ranks % g != 0 || local_ranks < g) {
      g = std::gcd(g, local_ranks);
    }
  }
  std::vector<std::uint32_t> group_node;
  std::vector<std::uint32_t> group_local;
  std::uint32_t group = l.local[r] / g;
  for (std::uint32_t n = 0; n < nodes; ++n) {
    const auto in_node = static_cast<std::uint32_t>(l.members[n].size()) / g;
    for (std::uint32_t k = 0; k < in_node; ++k) {
      group_node.push_back(n);
      group_local.push_back(k * g);
    }
    if (n < l.node[r]) {
      group += in_node;
    }
  }
  const auto groups = static_cast<std::uint32_t>(group_node.size());
  const std::uint32_t pow2 = std::bit_ceil(groups);
  const std::uint32_t local = l.local[r] % g;
  std::vector<std::pair<core::Rank, core::Rank>> out;
  std::uint32_t delta = 0;
  for (std::uint32_t round = 1; round <= pow2; ++round) {
    if (delta < groups) {
      const std::uint32_t send_group = (group + delta) % groups;
      const std::uint32_t recv_group = (group + groups - delta) % groups;
      for (std::uint32_t d = 0; d < g; ++d) {
        out.emplace_back(
            l.members[group_node[send_group]][group_local[send_group] + (local + d) % g],
            l.members[group_node[recv_group]][group_local[recv_group] + (local + g - d) % g]);
      }
    }
    delta = (delta + round) & (pow2 - 1); // quadratic update
  }
  return out;
}

struct P2pPlan {
  std::uint32_t p = 1;
  std::uint64_t n = 0;
  std::uint32_t channels = 1;
  detail::NodeLayout layout;
  std::uint64_t intra_chunk = 0;  // data bytes per chunk to a peer on the same node
  std::uint64_t remote_chunk = 0; // ... on another node
};

P2pPlan plan_of(const Request& req) {
  P2pPlan pl;
  pl.p = req.ranks;
  pl.n = req.bytes.value;
  pl.channels = nccl::channels_of(req);
  pl.layout = detail::node_layout(req);
  const detail::NodeLayout& layout = pl.layout;
  const std::uint64_t b = pl.n / pl.p;
  if (nccl::protocol_of(req) == Proto::ll) {
    // stepSize = buffSizes[LL] / NCCL_STEPS, half of it data.
    pl.intra_chunk = pl.remote_chunk = nccl::buffer_bytes(Proto::ll) / nccl::kSteps / 2;
    return pl;
  }
  const std::uint64_t step =
      layout.nodes() > 1 ? kNetChunk : (nccl::intra_node_nvlink(req) ? kNvlChunk : kPciChunk);
  pl.intra_chunk = step;
  pl.remote_chunk = b < step ? step / 4 : b < 8 * step ? step / 2 : step;
  return pl;
}

void emit(const P2pPlan& pl, nccl::Sink& sink) {
  const std::uint32_t p = pl.p;
  const std::uint64_t b = pl.n / p;
  for (core::Rank r = 0; r < p; ++r) {
    sink.begin(r);
    sink.stream(0);
    sink.copy(detail::data_range(r * b, b), detail::data_range(pl.n + r * b, b));
    for (const auto& [to, from] : p2p_schedule(pl.layout, r)) {
      if (to == r) {
        continue; // the rank's own block: the copy above
      }
      // One chunk size per direction: the peers of a round may sit on different nodes.
      const std::vector<std::uint32_t>& node = pl.layout.node;
      const std::uint64_t send_chunk = node[to] == node[r] ? pl.intra_chunk : pl.remote_chunk;
      const std::uint64_t recv_chunk = node[from] == node[r] ? pl.intra_chunk : pl.remote_chunk;
      std::uint64_t most = 0;
      for (std::uint32_t k = 0; k < pl.channels; ++k) {
        const std::uint64_t part = nccl::channel_slice(b, pl.channels, k).second;
        most = std::max({most, nccl::chunk_count(part, send_chunk),
                         nccl::chunk_count(part, recv_chunk), std::uint64_t{1}});
      }
      for (std::uint64_t j = 0; j < most; ++j) {
        for (std::uint32_t k = 0; k < pl.channels; ++k) {
          const auto [off, part] = nccl::channel_slice(b, pl.channels, k);
          sink.stream(k);
          // An empty operation still synchronises with its peer, as NCCL's does (one message).
          if (j < std::max<std::uint64_t>(nccl::chunk_count(part, recv_chunk), 1)) {
            const std::uint64_t at = j * recv_chunk;
            sink.recv(from, detail::data_range(pl.n + from * b + off + std::min(at, part),
                                               at < part ? std::min(recv_chunk, part - at) : 0));
          }
          if (j < std::max<std::uint64_t>(nccl::chunk_count(part, send_chunk), 1)) {
            const std::uint64_t at = j * send_chunk;
            sink.send(to, detail::data_range(to * b + off + std::min(at, part),
                                             at < part ? std::min(send_chunk, part - at) : 0));
          }
        }
      }
    }
    if (sink.over_limit()) {
      return;
    }
  }
}

} // namespace

AlgorithmInfo describe_alltoall_nccl_p2p() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::alltoall;
  a.summary = "NCCL's all-to-all: grouped send/recv with every peer, each split over channels "
              "and moved in P2P chunks";
  a.source = "NCCL src/enqueue.cc scheduleP2pTasksToPlan, addP2pToPlan; src/init.cc p2pSchedule";
  a.aliases = {"nccl:p2p"};
  algorithms::ParamSpec channels = nccl::channels_param();
  channels.help = "NCCL channels each send and each receive is split over (addP2pToPlan's "
                  "nChannels; by default NCCL's own split for the block size)";
  a.params = {nccl::protocol_param(), channels};
  a.constraints = {"bytes divisible by ranks", "protocol simple or ll"};
  a.check = [](const Request& req) -> std::string {
    if (req.bytes.value % req.ranks != 0) {
      return "alltoall needs bytes divisible by ranks";
    }
    if (nccl::protocol_of(req) == Proto::ll128) {
      return "NCCL moves point-to-point transfers with Simple or LL, not LL128";
    }
    return nccl::size_refusal(plan_of(req), emit);
  };
  a.generate = [](const Request& req) {
    return nccl::build(req, kName, nccl::Algo::ring, plan_of(req), emit);
  };
  a.cost = [](const Request&) { return std::optional<CostTerms>{}; };
  a.cost_formula = "approximate, not exact: about a + (p-1)/p n b without contention, plus the "
                   "protocol's launch, per-chunk latencies and line efficiency";
  return a;
}

} // namespace collsim::algorithms
