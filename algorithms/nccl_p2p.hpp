#pragma once
// Internal: NCCL's grouped point-to-point transfers (alltoall, gather and scatter run as
// ncclSend/ncclRecv since NCCL 2.28: src/enqueue.cc expands them per peer), shared by
// alltoall/alltoall_nccl_p2p.cpp, gather/gather_nccl_p2p.cpp and scatter/scatter_nccl_p2p.cpp.
//
// Sources: src/init.cc ncclP2pSchedule (round order) and computeBuffSizes (P2P chunk sizes),
// src/enqueue.cc addP2pToPlan (an operation split over channels, chunk shrinking for network
// peers). The channel count and protocol of an operation come in the request's `channels` and
// `protocol` (stacks::nccl_p2p_choice fills them with NCCL's own).

#include "nccl_support.hpp"

#include <functional>
#include <optional>
#include <utility>
#include <vector>

namespace collsim::algorithms::nccl {

/// Rank r's (send peer, receive peer) for rounds 0..p-1 (round 0 pairs the rank with itself).
std::vector<std::pair<core::Rank, core::Rank>> p2p_schedule(const detail::NodeLayout& l,
                                                            core::Rank r);

/// One side of a round: the peer and the bytes [offset, offset + length) of the data buffer.
struct P2pSide {
  core::Rank peer = 0;
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
};

/// What a rank sends and receives in one round (nullopt: nothing that way).
using P2pRound = std::function<std::pair<std::optional<P2pSide>, std::optional<P2pSide>>(
    core::Rank r, core::Rank to, core::Rank from)>;

/// The plan every nccl_p2p generator shares: the request's ranks, layout, channels and chunks.
/// The parameters that split each operation by its own size (per-rank counts; nccl_p2p.cpp).
inline constexpr const char* kPeerChannels = "peer_channels";
inline constexpr const char* kMinChannels = "min_channels";
/// The P2P chunk parameter (comm->p2pChunkSize), and the smallest and largest taken.
inline constexpr const char* kP2pChunk = "chunk";
inline constexpr std::int64_t kSmallestP2pChunk = 4 << 10;
inline constexpr std::int64_t kLargestP2pChunk = 16 << 20;

struct P2pPlan {
  std::uint32_t p = 1;
  std::uint32_t channels = 1;
  detail::NodeLayout layout;
  Proto proto = Proto::simple;
  std::uint64_t step = 0;  ///< the Simple P2P chunk (stepSize); LL: half an LL step
  std::uint64_t chunk = 0; ///< the P2P chunk (the `chunk` parameter or p2p_chunk_bytes)
  bool nodes = false;      ///< more than one node (network chunk shrinking applies)
  bool nvlink = false;     ///< the node's GPUs talk over NVLink (the P2P chunk size)
  /// 0: every operation over `channels`; else each over p2p_op_channels(its bytes,
  /// min_channels, peer_channels), as NCCL splits operations of different sizes.
  std::uint32_t peer_channels = 0;
  std::uint32_t min_channels = 0;
  [[nodiscard]] std::uint32_t channels_for(std::uint64_t bytes) const {
    return peer_channels == 0
               ? channels
               : p2p_op_channels(bytes, min_channels, peer_channels, nodes, nvlink, chunk);
  }
};
P2pPlan p2p_plan(const Request& req);

/// Emits every rank's rounds in p2pSchedule order: `round(r, to, from)` names what r sends to
/// `to` and receives from `from`; each transfer is split into `channels` parts (issue stream k for
/// part k), each part cut into chunks, the receive and the send of a chunk index interleaved over
/// the parts. `self(r)` emits the rank's own block (round 0), if any.
void emit_p2p(const P2pPlan& pl, Sink& sink, const P2pRound& round,
              const std::function<void(core::Rank, Sink&)>& self);

/// One collective NCCL runs as point-to-point transfers.
struct P2pCollective {
  core::CollectiveKind collective = core::CollectiveKind::alltoall;
  const char* summary = "";
  const char* source = "";
  const char* cost_formula = "";
  std::vector<std::string> constraints;
  /// "" or why the request cannot run (besides LL128 and the size limit); may be empty.
  std::function<std::string(const Request&)> refusal;
  /// The collective's operations under the plan (emit_p2p with its rounds).
  std::function<void(const Request&, const P2pPlan&, Sink&)> emit;
  /// `emit` honours per-rank counts (AlgorithmInfo::counts): each send and receive carries its
  /// pair's count, as ncclSend/ncclRecv of a framework's alltoallv do.
  bool counts = false;
};
/// Gather (`to_root`: every rank's block to the root, which receives them in round order) or
/// scatter (the root sends every rank its block): the emit of their P2pCollective. Blocks are
/// core::BlockLayout's (block_range(n, p, q), or the counts' displacements for gatherv and
/// scatterv) of the data buffer; the root's own stays in place.
std::function<void(const Request&, const P2pPlan&, Sink&)> rooted_p2p(bool to_root);

/// The registry entry "nccl_p2p" (alias "nccl:p2p") of `c.collective`: parameters `protocol` and
/// `channels` (the channels each send and each receive is split over), LL128 refused, the
/// schedule built under the ring's protocol constants, no closed form.
AlgorithmInfo describe_p2p(const P2pCollective& c);

} // namespace collsim::algorithms::nccl
