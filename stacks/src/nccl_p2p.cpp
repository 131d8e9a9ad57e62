// How NCCL splits a point-to-point transfer of a grouped exchange (nccl_model.hpp,
// nccl_p2p_choice). Sources, NCCL src/graph/paths.cc: ncclTopoGetNchannels (channels per peer:
// 2 x the NVLinks of the path, 2 over PCIe, across nodes by release: see net_peer_channels),
// ncclTopoComputeP2pChannels (powers of two; from 2.29.2 on several nodes: fewer channels per
// peer until the peers fit in one round); src/enqueue.cc:
// scheduleP2pTasksToPlan (nChannelsMin: halved until every peer fits in p2pnChannels) and
// addP2pToPlan (an operation's channels from its size and the part sizes, LL up to
// NCCL_P2P_LL_THRESHOLD per channel); src/init.cc: the P2P chunk sizes.

#include "nccl_model_constants.hpp"

#include "collsim/stacks/nccl_model.hpp"

#include <algorithm>
#include <bit>
#include <cmath>

namespace collsim::stacks {
using namespace nccl_detail;
namespace {

constexpr std::uint32_t kMaxP2pChannels = 64; // NCCL_MAX_P2P_NCHANNELS default: MAXCHANNELS
constexpr std::uint64_t kLlThreshold = 16384; // NCCL_P2P_LL_THRESHOLD
constexpr double kPerChannelNetBw = 14.0;     // NCCL_P2P_PER_CHANNEL_NET_BW, GB/s
constexpr std::uint32_t kMaxP2pPerBatch = 8;  // NCCL_MAX_DEV_WORK_P2P_PER_BATCH

std::uint32_t pow2_up(std::uint32_t x) {
  return std::bit_ceil(std::max<std::uint32_t>(x, 1));
}

/// ncclTopoNVLinkBw: NCCL's data rate of one NVLink (SM70/SM80 20, SM90 20.6, SM100 40.1 GB/s).
double nvlink_bw(std::uint32_t cc) {
  return nvlink_scale(cc) * (cc >= 100 ? 50.0 : 25.0);
}

/// ncclTopoGetNchannels for a peer on another node: NCCL_NCHANNELS_PER_NET_PEER where set, else
/// by release (src/graph/paths.cc at the tags named):
/// - before 2.20.3 (v2.12.12 .. v2.19.4): the variable's default, 2;
/// - 2.20.3 .. 2.28 (v2.20.3 .. v2.28.9): 2, halved while 2 x the ranks exceeds 4 x
///   p2pnChannels (not yet rounded up to a power of two: ncclTopoComputeP2pChannels asks before
///   it rounds), and at least getLocalNetCountByBw, the GPU's local NICs it takes to reach its
///   PCIe bandwidth (one here: collsim's GPUs each leave through one NIC);
/// - from 2.29.2 (v2.29.2 .. v2.30.7): one per local NIC, more to reach the NIC's bandwidth at
///   NCCL_P2P_PER_CHANNEL_NET_BW (14 GB/s) a channel: divUp((int)netBw, 14).
std::uint32_t net_peer_channels(const NcclModelInputs& in, std::uint32_t p2p_channels) {
  if (in.env.net_peer_channels > 0) {
    return in.env.net_peer_channels;
  }
  if (in.release < 22003) {
    return 2;
  }
  if (in.release < 22902) {
    std::uint32_t most = 2;
    while (most * in.ranks > p2p_channels * 4 && most > 1) {
      most /= 2;
    }
    return most;
  }
  const auto net_bw = static_cast<std::uint32_t>(in.net_bw); // NCCL's (int) cast
  const auto per_channel = static_cast<std::uint32_t>(kPerChannelNetBw);
  return std::max<std::uint32_t>(1, (net_bw + per_channel - 1) / per_channel);
}

} // namespace

NcclP2pChoice nccl_p2p_choice(const NcclModelInputs& in, std::uint64_t bytes) {
  NcclP2pChoice out;
  out.p2p_channels =
      std::min(pow2_up(std::min(nccl_comm_channels(in), kMaxP2pChannels)), kMaxP2pChannels);
  // ncclTopoGetNchannels, the fewest over the peers.
  std::uint32_t per_peer = kMaxP2pChannels;
  if (in.local_ranks > 1) {
    std::uint32_t local = 2; // a PCIe path
    if (in.nvlink) {
      // Through an NVSwitch the path has all of the GPU's NVLinks; on a mesh the fewest a pair
      // shares is one link (NCCL: the path's bw / one link's).
      const double links =
          in.nvswitch ? std::floor(in.gpu_nvlink_bw / nvlink_bw(in.compute_capability) + 0.5) : 1.0;
      local = 2 * std::max<std::uint32_t>(1, static_cast<std::uint32_t>(links));
    }
    per_peer = std::min(per_peer, local);
  }
  if (in.nodes > 1) {
    per_peer = std::min(per_peer,
                        net_peer_channels(in, std::min(nccl_comm_channels(in), kMaxP2pChannels)));
  }
  per_peer = std::min(pow2_up(per_peer), out.p2p_channels);
  // From 2.29.2, unless NCCL_NCHANNELS_PER_NET_PEER is set: halved until the peers' batches of
  // NCCL_MAX_DEV_WORK_P2P_PER_BATCH fit in one round.
  if (in.nodes > 1 && in.release >= 22902 && in.env.net_peer_channels == 0) {
    const std::uint32_t batches = (in.ranks + kMaxP2pPerBatch - 1) / kMaxP2pPerBatch;
    while (per_peer * batches > out.p2p_channels && per_peer > 1) {
      per_peer /= 2;
    }
  }
  out.channels_per_peer = per_peer;
  // scheduleP2pTasksToPlan: try one channel per operation for every peer at once.
  std::uint32_t fewest = per_peer;
  while (fewest * in.ranks > out.p2p_channels && fewest > 1) {
    fewest /= 2;
  }
  out.min_channels = fewest;
  // addP2pToPlan, with the Simple step (the P2P chunk size).
  out.channels = algorithms::nccl::p2p_op_channels(bytes, fewest, per_peer, in.nodes > 1, in.nvlink,
                                                   p2p_chunk_param(in).value_or(0));
  out.proto = bytes <= out.channels * kLlThreshold ? algorithms::nccl::Proto::ll
                                                   : algorithms::nccl::Proto::simple;
  return out;
}

} // namespace collsim::stacks
