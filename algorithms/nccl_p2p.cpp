// NCCL's grouped point-to-point transfers (nccl_p2p.hpp for the sources).

#include "nccl_p2p.hpp"

#include "collsim/core/layout.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <numeric>

namespace collsim::algorithms::nccl {
namespace {

/// addP2pToPlan's chunk for an operation of `bytes`: Simple chunks of the P2P chunk size, to a
/// network peer a quarter of it below one chunk and half below 8; LL chunks of half an LL step.
std::uint64_t chunk_for(const P2pPlan& pl, std::uint64_t bytes, bool remote) {
  if (pl.proto == Proto::ll || !remote) {
    return pl.step;
  }
  return bytes < pl.step ? pl.step / 4 : bytes < 8 * pl.step ? pl.step / 2 : pl.step;
}

} // namespace

/// init.cc's ncclP2pSchedule. Ranks are cut into groups of NCCL_P2P_SCHEDULE_GROUP_SIZE (8)
/// ranks of a node (one node: the whole node; the gcd where a node's ranks do not divide), group
/// deltas run through the quadratic sequence (x^2 + x)/2 mod pow2Up(groups) (skipping those
/// >= groups), and inside each group delta the local deltas 0, 1, ..., so a one-node exchange
/// goes r+1, r+2, ... and a multi-node one visits the other nodes' groups in a spread order.
std::uint64_t p2p_chunk_bytes(bool multi_node, bool nvlink) {
  constexpr std::uint64_t kNetChunk = 128 << 10; // NCCL_P2P_NET_CHUNKSIZE
  constexpr std::uint64_t kPciChunk = 128 << 10; // NCCL_P2P_PCI_CHUNKSIZE
  constexpr std::uint64_t kNvlChunk = 512 << 10; // NCCL_P2P_NVL_CHUNKSIZE
  return multi_node ? kNetChunk : (nvlink ? kNvlChunk : kPciChunk);
}

std::uint32_t p2p_op_channels(std::uint64_t bytes, std::uint32_t fewest, std::uint32_t per_peer,
                              bool multi_node, bool nvlink, std::uint64_t chunk) {
  if (bytes == 0) {
    return 1;
  }
  const std::uint64_t step = chunk != 0 ? chunk : p2p_chunk_bytes(multi_node, nvlink);
  const std::uint64_t min_part = multi_node ? step / 2 : step / 8;
  const std::uint64_t max_part = multi_node ? step : step * 32;
  auto nc = static_cast<std::uint32_t>(std::min<std::uint64_t>(std::max<std::uint32_t>(fewest, 1),
                                                               (bytes + min_part - 1) / min_part));
  std::uint64_t part = std::max(min_part, (bytes + nc - 1) / nc);
  while (part > max_part && nc <= per_peer / 2) {
    nc *= 2;
    part = (bytes + nc - 1) / nc;
  }
  return nc;
}

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

P2pPlan p2p_plan(const Request& req) {
  P2pPlan pl;
  pl.p = req.ranks;
  pl.channels = channels_of(req);
  pl.layout = detail::node_layout(req);
  pl.proto = protocol_of(req);
  pl.nodes = pl.layout.nodes() > 1;
  pl.nvlink = intra_node_nvlink(req);
  const auto param = [&](const char* name) -> std::uint32_t {
    const auto it = req.params.find(name);
    return it == req.params.end() ? 0 : static_cast<std::uint32_t>(it->second);
  };
  pl.peer_channels = param(kPeerChannels);
  pl.min_channels = param(kMinChannels);
  pl.chunk = param(kP2pChunk);
  if (pl.chunk == 0) {
    pl.chunk = p2p_chunk_bytes(pl.nodes, pl.nvlink);
  }
  if (pl.proto == Proto::ll) {
    pl.step = buffer_bytes(Proto::ll) / kSteps / 2; // stepSize = buffSizes[LL] / 8, half data
  } else {
    pl.step = pl.chunk;
  }
  return pl;
}

void emit_p2p(const P2pPlan& pl, Sink& sink, const P2pRound& round,
              const std::function<void(core::Rank, Sink&)>& self) {
  const std::vector<std::uint32_t>& node = pl.layout.node;
  for (core::Rank r = 0; r < pl.p; ++r) {
    sink.begin(r);
    sink.stream(0);
    self(r, sink);
    for (const auto& [to, from] : p2p_schedule(pl.layout, r)) {
      if (to == r) {
        continue; // the rank's own block: `self`
      }
      const auto [send, recv] = round(r, to, from);
      const std::uint64_t send_chunk =
          send ? chunk_for(pl, send->length, node[send->peer] != node[r]) : 1;
      const std::uint64_t recv_chunk =
          recv ? chunk_for(pl, recv->length, node[recv->peer] != node[r]) : 1;
      // Each operation's channels (the same on both sides of a message: they see its size).
      const std::uint32_t send_ch = send ? pl.channels_for(send->length) : 0;
      const std::uint32_t recv_ch = recv ? pl.channels_for(recv->length) : 0;
      // Chunks per part, at least one: an empty operation still synchronises with its peer, as
      // NCCL's does (one message).
      const auto chunks = [&](const std::optional<P2pSide>& side, std::uint32_t ch,
                              std::uint64_t chunk, std::uint32_t k) -> std::uint64_t {
        if (!side || k >= ch) {
          return 0;
        }
        const std::uint64_t part = channel_slice(side->length, ch, k).second;
        return std::max<std::uint64_t>(chunk_count(part, chunk), 1);
      };
      const std::uint32_t lanes = std::max(send_ch, recv_ch);
      std::uint64_t most = 0;
      for (std::uint32_t k = 0; k < lanes; ++k) {
        most = std::max(
            {most, chunks(send, send_ch, send_chunk, k), chunks(recv, recv_ch, recv_chunk, k)});
      }
      const auto piece = [&](const P2pSide& side, std::uint32_t ch, std::uint64_t chunk,
                             std::uint32_t k, std::uint64_t j) {
        const auto [off, part] = channel_slice(side.length, ch, k);
        const std::uint64_t at = std::min(j * chunk, part);
        return detail::data_range(side.offset + off + at, std::min(chunk, part - at));
      };
      for (std::uint64_t j = 0; j < most; ++j) {
        for (std::uint32_t k = 0; k < lanes; ++k) {
          sink.stream(k);
          if (j < chunks(recv, recv_ch, recv_chunk, k)) {
            sink.recv(recv->peer, piece(*recv, recv_ch, recv_chunk, k, j));
          }
          if (j < chunks(send, send_ch, send_chunk, k)) {
            sink.send(send->peer, piece(*send, send_ch, send_chunk, k, j));
          }
        }
      }
    }
    if (sink.over_limit()) {
      return;
    }
  }
}

std::function<void(const Request&, const P2pPlan&, Sink&)> rooted_p2p(bool to_root) {
  return [to_root](const Request& req, const P2pPlan& pl, Sink& sink) {
    const core::BlockLayout lay(req.collective, req.ranks, req.bytes.value, req.counts);
    const core::Rank root = req.root;
    emit_p2p(
        pl, sink,
        [&](core::Rank r, core::Rank to, core::Rank from) {
          const auto block = [&](core::Rank q, core::Rank peer) {
            const auto [off, len] = lay.block(q);
            return P2pSide{peer, off, len};
          };
          std::optional<P2pSide> send;
          std::optional<P2pSide> recv;
          if (to_root) {
            if (r != root && to == root) {
              send = block(r, root); // its block, in the round that pairs it with the root
            }
            if (r == root && from != root) {
              recv = block(from, from);
            }
          } else {
            if (r == root && to != root) {
              send = block(to, to);
            }
            if (r != root && from == root) {
              recv = block(r, root);
            }
          }
          return std::pair{send, recv};
        },
        [](core::Rank, Sink&) {});
  };
}

AlgorithmInfo describe_p2p(const P2pCollective& c) {
  AlgorithmInfo a;
  a.name = "nccl_p2p";
  a.collective = c.collective;
  a.summary = c.summary;
  a.source = c.source;
  a.aliases = {"nccl:p2p"};
  ParamSpec channels = channels_param();
  channels.help = "NCCL channels each send and each receive is split over (addP2pToPlan's "
                  "nChannels; by default NCCL's own split for the block size)";
  a.params = {protocol_param(),
              channels,
              {kPeerChannels, 0, 0, 64,
               "most channels one operation may take (comm->p2pnChannelsPerPeer): with it each "
               "operation takes NCCL's split for its own size (set by the NCCL model for "
               "per-rank counts); 0: every operation takes `channels`"},
              {kMinChannels, 0, 0, 64,
               "with peer_channels: the channels an operation takes at most before parts grow "
               "past the chunk (scheduleP2pTasksToPlan's nChannelsMin)"},
              {kP2pChunk, 0, 0, kLargestP2pChunk,
               "the P2P chunk in bytes, Simple's step (comm->p2pChunkSize: NCCL_P2P_NET_CHUNKSIZE "
               "across nodes, NCCL_P2P_NVL_CHUNKSIZE on NVLink, NCCL_P2P_PCI_CHUNKSIZE); 0: "
               "NCCL's default, 128 KiB, 512 KiB on NVLink"}};
  a.constraints = c.constraints;
  a.constraints.emplace_back("protocol simple or ll");
  a.check = [c](const Request& req) -> std::string {
    if (c.refusal) {
      if (std::string why = c.refusal(req); !why.empty()) {
        return why;
      }
    }
    if (protocol_of(req) == Proto::ll128) {
      return "NCCL moves point-to-point transfers with Simple or LL, not LL128";
    }
    if (const auto it = req.params.find(kP2pChunk);
        it != req.params.end() && it->second > 0 && it->second < kSmallestP2pChunk) {
      return fmt::format("{}={} is below {} bytes (0 takes NCCL's default chunk)", kP2pChunk,
                         it->second, kSmallestP2pChunk);
    }
    return size_refusal(p2p_plan(req),
                        [&](const P2pPlan& pl, Sink& sink) { c.emit(req, pl, sink); });
  };
  a.generate = [c](const Request& req) {
    return build(req, "nccl_p2p", Algo::ring, p2p_plan(req),
                 [&](const P2pPlan& pl, Sink& sink) { c.emit(req, pl, sink); });
  };
  a.cost = [](const Request&) { return std::optional<CostTerms>{}; };
  a.cost_formula = c.cost_formula;
  a.counts = c.counts;
  return a;
}

} // namespace collsim::algorithms::nccl
