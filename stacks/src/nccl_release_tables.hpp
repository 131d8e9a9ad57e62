#pragma once
// Internal: the constants of NCCL's tuning model as each release had them (src/graph/tuning.cc,
// baseLat, hwLat and the per-architecture bandwidth caps), for stacks/nccl_tuning.cpp, and the
// release predicates of the rules that changed (each with the release that changed it). The
// newest release's tables equal algorithms::nccl's and nccl_model_constants.hpp's (a test checks).

#include "collsim/algorithms/nccl_release.hpp"

#include "nccl_model_constants.hpp"

#include <array>
#include <span>

namespace collsim::stacks::nccl_detail {

using algorithms::nccl::ReleaseCode;

/// [algorithm: Tree, Ring, CollNetDirect, CollNetChain, NVLS, NVLSTree, PAT][protocol: LL,
/// LL128, Simple], microseconds.
using LatencyTable = std::array<std::array<double, 3>, 7>;

struct NcclTunerTables {
  LatencyTable base_lat{};
  std::array<LatencyTable, 3> hw_lat{}; ///< [NVLink, PCI, network]
  PerArch ll_max_bw{};
  PerArch ring_ll128_bw{};
  PerArch tree_ll128_bw{};
  PerArch tree_bw{};
  PerArch nvls_tree_bw{};                  ///< from 2.28.3; zero before
  std::array<double, 4> nvls_efficiency{}; ///< from 2.28.3; zero before
};

/// The tables of the revision of tuning.cc that `release` shipped (older than 2.12.12: 2.12.12's).
const NcclTunerTables& nccl_tuner_tables(ReleaseCode release);

/// The row of the per-architecture tables NCCL reads for compute capability `cc`: before 2.15.1
/// only sm80 had a row of its own (compCap80), 2.15.1 added sm90 (exactly), 2.17.1 made the rows
/// "at least" (sm86 and sm89 Ampere's, sm100 Hopper's), 2.25.1 added Blackwell.
inline std::size_t cc_index(ReleaseCode release, std::uint32_t cc) {
  if (release < 21501) {
    return cc == 80 ? 1 : 0;
  }
  if (release < 21701) {
    return cc == 90 ? 2 : cc == 80 ? 1 : 0;
  }
  if (release < 22501) {
    return cc >= 90 ? 2 : cc >= 80 ? 1 : 0;
  }
  return cc_index(cc);
}

// Release predicates (NCCL version codes; the sources name the release's files).
/// CollNet split into CollNetDirect and CollNetChain (2.14.3).
inline bool has_collnet_chain(ReleaseCode r) {
  return r >= 21403;
}
/// NVLS on one node, priced on the ring graph (2.17.1); its own graph, NVLSTree, multi-node NVLS
/// through CollNet, and the new latency accounting (2.18.1).
inline bool has_nvls(ReleaseCode r) {
  return r >= 21701;
}
inline bool has_nvls_graph(ReleaseCode r) {
  return r >= 21801;
}
/// Whether NVLS initialises on a node (nvls.cc): from 2.17.1 on one node only (more than one
/// GPU), from 2.18.1 across nodes too with more than 2 GPUs per node, from 2.28.7 with 2.
inline bool nvls_on_node(ReleaseCode r, std::uint32_t nodes, std::uint32_t local_ranks) {
  if (!has_nvls(r)) {
    return false;
  }
  if (!has_nvls_graph(r)) {
    return nodes == 1 && local_ranks > 1;
  }
  return local_ranks > (r >= 22807 ? 1U : 2U);
}
/// PAT for allgather and reduce_scatter with one GPU per node (2.23.4).
inline bool has_pat(ReleaseCode r) {
  return r >= 22304;
}
/// 2.18.1 reworked multi-node latency: no LL x 1.8 inside the node, the plugin's latencyInter
/// added to the network row (twice with Simple), the ring's NCCL_NET_OVERHEAD floor.
inline bool latency_2_18(ReleaseCode r) {
  return r >= 21801;
}
/// 2.23.4: one GPU per node reads the tree's network row; a ring allreduce crosses the network
/// 2 (nNodes - 1) times (2 nNodes before); no 0.7 on a ring LL128 with one GPU per node.
inline bool latency_2_23(ReleaseCode r) {
  return r >= 22304;
}
/// Ring LL's bus bandwidth: x 0.5 from 2.21.5; before, x 1/4 (several nodes, allreduce, reduce)
/// or x 1/3.
inline bool ring_ll_half(ReleaseCode r) {
  return r >= 22105;
}
/// LL128 on by default for any sm70+ (2.27.3); before, a whitelist: sm70, sm80, sm90 (2.15.1),
/// sm100 and sm120 (2.25.1).
inline bool ll128_arch_enabled(ReleaseCode r, std::uint32_t cc) {
  if (r >= 22703) {
    return cc >= 70;
  }
  return cc == 70 || cc == 80 || (cc == 90 && r >= 21501) ||
         ((cc == 100 || cc == 120) && r >= 22501);
}
/// MAXCHANNELS: 32 before 2.25.1, then 64 (src/include/device.h).
inline std::uint32_t max_channels(ReleaseCode r) {
  return r >= 22501 ? kMaxChannels : kMaxChannels / 2;
}

/// NCCL's NVLink bandwidth per link over collsim's signalling rate (topo.h): SM70 and SM80 (and
/// sm90, which had no constant of its own) 22 GB/s before 2.18.1, then 20; SM90 20.6 from 2.20.3;
/// SM100 40.0 from 2.25.1 (before, sm90's), 40.1 from 2.27.5.
inline double search_nvlink_scale(ReleaseCode r, std::uint32_t cc) {
  if (cc >= 100 && r >= 22501) {
    return (r >= 22705 ? 40.1 : 40.0) / 50.0;
  }
  const double per_link = r < 21801 ? 22.0 : (cc >= 90 && r >= 22003) ? 20.6 : 20.0;
  return per_link / (cc >= 100 ? 50.0 : 25.0);
}

/// The search's speed arrays (search.cc, GB/s per channel) of `r` for compute capability `cc`,
/// inside a node or across nodes: one generic pair, sm90's from 2.16.5, sm100's from 2.25.1,
/// each revised several times (the tags beside them).
std::span<const double> speed_array(ReleaseCode r, std::uint32_t cc, bool inter);

/// ncclTopoDupChannels' rule: double the channels at half the bandwidth. Before 2.16.5 when
/// bwIntra >= 25; 2.16.5: sm80 and older at 25, sm90 at 50; from 2.18.3 at 25 except sm90+ under
/// 50 with more than 4 channels.
inline bool dup_channels(ReleaseCode r, std::uint32_t cc, double bw_intra, std::uint32_t channels) {
  if (r < 21605) {
    return bw_intra >= 25.0;
  }
  if (r < 21803) {
    return (cc <= 80 && bw_intra >= 25.0) || (cc <= 90 && bw_intra >= 50.0);
  }
  return bw_intra >= 25.0 && !(cc > 80 && bw_intra < 50.0 && channels > 4);
}

} // namespace collsim::stacks::nccl_detail
