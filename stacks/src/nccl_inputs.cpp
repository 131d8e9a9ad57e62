// NCCL's model inputs from a collsim topology: what NCCL's topology search (src/graph/search.cc
// ncclTopoCompute, src/graph/connect.cc) would hand its cost model (nccl_model.hpp).
//
// Sources: src/graph/tuning.cc (ncclTopoTuneModel: per-(collective, algorithm, protocol) bandwidth
// and latency; ncclTopoGetAlgoTime: time = lat + nBytes / (1000 bw)), src/enqueue.cc
// (updateCollCostTable: which pairs are legal; topoGetAlgoInfo: argmin, then channel and thread
// tuning), src/graph/search.cc (ncclTopoCompute: the speed arrays and the channel search whose
// result tuning.cc reads), src/graph/connect.cc (comm->nChannels), src/graph/topo.h (NVLink and
// PCI bandwidth constants). The base and hardware latencies are collsim::algorithms::nccl's tables
// (one copy, shared with the NCCL generators); the tuner's other constants are below.
//
// The model, per (a, p) and collective c over n ranks on N nodes, ppn = n/N (section 3):
//   bw  = nCh(a) x per-channel bw (bwIntra if N <= 2 or CollNet, else bwInter; NVLS variants
//         first mix intra and inter, 3.3), times protocol and algorithm factors, times the
//         busBw -> algBw ratio n/nsteps (ring, NVLS) or 0.5 (tree, CollNet);
//   lat = baseLat[a][p] + per-algorithm sums of hwLat (3.4);
//   time(S) = lat x (1.4 or 1.9 for a multi-node Simple ring allreduce past the plateau)
//             + S / (1000 x bw x treeCorrection[p][log2(S/64)] for tree allreduce).
// NCCL picks the smallest time; ties go to the lower (algorithm, protocol) index.

#include "collsim/stacks/nccl_model.hpp"

#include "nccl_model_constants.hpp"
#include "nccl_release_tables.hpp"

#include "collsim/core/errors.hpp"
#include "collsim/core/scenario.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <tuple>

namespace collsim::stacks {
using namespace nccl_detail;
namespace {

using algorithms::nccl::Algo;
using algorithms::nccl::Hw;
using core::CollectiveKind;

// ---- from the collsim topology -----------------------------------------------------------------

/// NCCL's bandwidth of one collsim link (GB/s).
double ncclbw(const core::Link& l, std::uint32_t cc, ReleaseCode release) {
  const double gbs = l.bandwidth.gbps();
  switch (l.kind) {
  case core::LinkKind::nvlink: return gbs * search_nvlink_scale(release, cc);
  case core::LinkKind::pcie: return gbs * kPciScale;
  default: return gbs;
  }
}

/// NCCL's path type of a route within a node: NVLink only (through NVSwitches: NVL; through
/// another GPU: NVB), else by the PCIe devices it passes (one switch: PIX; several: PXB; a CPU:
/// PHB; two CPUs: SYS).
NcclPath path_type(const core::Topology& t, const std::vector<core::LinkId>& path) {
  if (path.empty()) {
    return NcclPath::loc;
  }
  bool all_nvlink = true;
  bool via_gpu = false;
  std::uint32_t switches = 0;
  std::uint32_t cpus = 0;
  for (std::size_t i = 0; i < path.size(); ++i) {
    const core::Link& l = t.links()[path[i]];
    all_nvlink = all_nvlink && l.kind == core::LinkKind::nvlink;
    if (i + 1 == path.size()) {
      break;
    }
    switch (t.devices()[l.to].kind) {
    case core::DeviceKind::gpu: via_gpu = true; break;
    case core::DeviceKind::pcie_switch: ++switches; break;
    case core::DeviceKind::cpu:
    case core::DeviceKind::numa: ++cpus; break;
    default: break;
    }
  }
  if (all_nvlink) {
    return via_gpu ? NcclPath::nvb : NcclPath::nvl;
  }
  if (cpus >= 2) {
    return NcclPath::sys;
  }
  if (cpus == 1) {
    return NcclPath::phb;
  }
  return switches <= 1 ? NcclPath::pix : NcclPath::pxb;
}

/// The compute capability a GPU node implies; the topology has no GPU model, so it is read from
/// the NVLink generation: NVLink SHARP (NVSwitch gen3) needs sm90; otherwise the GPU's NVLink rate
/// (V100 6 x 25 = 150 GB/s, A100 12 x 25 = 300, H100 18 x 25 = 450, B200 18 x 50 = 900).
std::pair<std::uint32_t, std::string> infer_cc(double nvlink_gbs, bool sharp) {
  if (nvlink_gbs >= 900.0) {
    return {100, fmt::format("NVLink {:g} GB/s per GPU (NVLink 5: Blackwell)", nvlink_gbs)};
  }
  if (sharp) {
    return {90, "an NVSwitch with NVLink SHARP (Hopper)"};
  }
  if (nvlink_gbs >= 450.0) {
    return {90, fmt::format("NVLink {:g} GB/s per GPU (NVLink 4: Hopper)", nvlink_gbs)};
  }
  if (nvlink_gbs >= 300.0) {
    return {80, fmt::format("NVLink {:g} GB/s per GPU (NVLink 3: Ampere)", nvlink_gbs)};
  }
  if (nvlink_gbs > 0.0) {
    return {70, fmt::format("NVLink {:g} GB/s per GPU (NVLink 2: Volta)", nvlink_gbs)};
  }
  return {80, "no NVLink: assumed Ampere (sm80)"};
}

/// The same from the scenario's NVLink section: the generation by its links a GPU and their rate
/// (NVLink 2: 6 on V100; NVLink 3: 12 on A100; NVLink 4: 18 of 25 GB/s on H100; NVLink 5: 18 of
/// 50 GB/s on B200). A calibrated profile moves the link rate, not the link count, so an A100
/// whose fitted links carry 23 GB/s stays an A100 (by the GPU's total, 277 GB/s, it read as a
/// V100).
std::optional<std::pair<std::uint32_t, std::string>> infer_cc(const core::NvlinkSpec& nv,
                                                              std::uint32_t gpus, bool sharp) {
  std::uint32_t links = 0;
  if (nv.kind == "switch") {
    links = nv.links_per_gpu;
  } else if (nv.kind == "all_to_all") {
    links = nv.links_per_pair * (gpus > 0 ? gpus - 1 : 0);
  } else if (nv.kind == "bridges") {
    links = nv.links_per_pair;
  } else if (nv.kind == "explicit") {
    for (const auto& p : nv.links) {
      links += p.a == 0 || p.b == 0 ? p.links : 0;
    }
  }
  if (links == 0) {
    return std::nullopt;
  }
  const double gbs = nv.link_bandwidth.gbps();
  const auto said = [&](const char* gen) {
    return fmt::format("{} NVLinks of {:g} GB/s per GPU ({})", links, gbs, gen);
  };
  if (gbs >= 40.0) {
    return std::pair{100U, said("NVLink 5: Blackwell")};
  }
  if (sharp) {
    return std::pair{90U, std::string("an NVSwitch with NVLink SHARP (Hopper)")};
  }
  if (links >= 18) {
    return std::pair{90U, said("NVLink 4: Hopper")};
  }
  if (links >= 12) {
    return std::pair{80U, said("NVLink 3: Ampere")};
  }
  return std::pair{70U, said("NVLink 2: Volta")};
}

/// What the channel search needs to know about one node.
struct SearchNode {
  ReleaseCode release = algorithms::nccl::kNewestModelled;
  std::uint32_t cc = 80;
  std::uint32_t gpus = 1;   // ngpus of the node
  double intra_total = 0.0; // totalBw: max(NVLink sum, PCI) of a GPU
  double intra_max = 0.0;   // maxBw between GPUs: the widest GPU-to-GPU path
  double net = 0.0;         // GPU -> NIC -> network bottleneck (0: one node)
  std::uint32_t nics = 0;   // NICs the node's ranks use
  bool inter = false;       // system->inter: more than one node
};

constexpr std::uint32_t kUnlimited = std::numeric_limits<std::uint32_t>::max();

/// Channels of `s` GB/s the node carries: each channel crosses every GPU once on its intra-node
/// links and, across nodes, enters and leaves through one NIC (crossNic off). This assumes the
/// search packs channels until a GPU's NVLink (or PCI) bandwidth is used up, which is what it
/// finds on NVSwitch nodes; on NVLink meshes it is an upper bound.
std::uint32_t capacity(const SearchNode& n, double s, std::uint32_t max_channels,
                       bool intra_only = false) {
  std::uint32_t ch = max_channels;
  if (n.gpus > 1) {
    if (s > n.intra_max + 1e-9) {
      return 0;
    }
    // Across nodes a channel is a chain NIC -> GPU ... GPU -> NIC: n - 1 NVLink hops per
    // channel, the exit GPU rotating over channels; inside a node it is a closed ring.
    const double share = n.inter ? static_cast<double>(n.gpus - 1) / n.gpus : 1.0;
    ch = std::min(ch, static_cast<std::uint32_t>(std::floor(n.intra_total / (s * share) + 1e-9)));
  }
  if (n.inter && !intra_only) {
    if (s > n.net + 1e-9 || n.nics == 0) {
      return 0;
    }
    ch = std::min(ch, n.nics * static_cast<std::uint32_t>(std::floor(n.net / s + 1e-9)));
  }
  return ch;
}

/// ncclTopoCompute for the ring (and, with pass 2's bwIntra raise, the tree) pattern.
NcclGraph search(const SearchNode& n, bool tree) {
  const std::uint32_t graph_max = max_channels(n.release) / 2; // ring/tree graphs (MAXCHANNELS/2)
  const std::span<const double> speeds = speed_array(n.release, n.cc, n.inter);
  const double max_bw = n.inter ? n.net : (n.gpus == 1 ? kLocBw : n.intra_max);
  const double total_bw = n.gpus == 1 ? kLocBw : n.intra_total;
  std::size_t i = 0;
  while (i + 1 < speeds.size() && (speeds[i] > max_bw + 1e-9 || speeds[i] > total_bw + 1e-9)) {
    ++i;
  }
  // Pass 1: the best (channels x speed) from the first speed down; stop at a "perfect" graph
  // (nChannels x bw >= totalBw) or when the next speed is below 0.49 of the best one found.
  std::uint32_t best_ch = 0;
  double best_s = 0.0;
  for (;;) {
    const std::uint32_t ch = capacity(n, speeds[i], graph_max);
    if (ch > 0 && ch * speeds[i] > best_ch * best_s + 1e-9) {
      best_ch = ch;
      best_s = speeds[i];
    }
    if (best_ch > 0 && best_ch * best_s >= total_bw - 1e-9) {
      break;
    }
    if (i + 1 < speeds.size() && (best_ch == 0 || speeds[i + 1] / best_s > 0.49)) {
      ++i;
      continue;
    }
    break;
  }
  NcclGraph g;
  if (best_ch == 0) { // "Could not find a path": simple order, one channel at 0.1 GB/s
    g.channels = 1;
    g.bw_intra = g.bw_inter = 0.1;
    g.type_intra = NcclPath::sys;
    g.type_inter = NcclPath::sys;
    return g;
  }
  g.channels = best_ch;
  g.bw_intra = g.bw_inter = best_s;
  // ncclTopoDupChannels: double the channels at half the bandwidth when bwIntra >= 25, except on
  // sm90+ with bwIntra < 50 and more than 4 channels (older releases: dup_channels).
  if (dup_channels(n.release, n.cc, g.bw_intra, g.channels)) {
    const std::uint32_t dup = std::min(g.channels * 2, graph_max);
    const std::uint32_t div = (dup + g.channels - 1) / g.channels;
    g.bw_intra /= div;
    g.bw_inter /= div;
    g.channels = dup;
  }
  // Pass 2: try the next higher speed with at least as many channels (ring: both bandwidths;
  // tree: bwIntra only, while it is below twice bwInter).
  std::size_t j = 0;
  while (j + 1 < speeds.size() && speeds[j] > g.bw_inter + 1e-9) {
    ++j;
  }
  while (j > 0) {
    const double s = speeds[j - 1];
    if (!tree) {
      if (capacity(n, s, graph_max) < g.channels) {
        break;
      }
      g.bw_intra = g.bw_inter = s;
    } else {
      if (g.bw_intra >= 2 * g.bw_inter - 1e-9 || n.gpus <= 1 || s > n.intra_max + 1e-9 ||
          capacity(n, s, kUnlimited, true) < g.channels) {
        break;
      }
      g.bw_intra = s;
    }
    --j;
  }
  return g;
}

std::uint32_t count_nodes(const core::Topology& t, std::uint32_t ranks,
                          std::uint32_t& local_ranks) {
  std::map<std::uint32_t, std::uint32_t> per_node;
  for (core::Rank r = 0; r < ranks; ++r) {
    ++per_node[t.node_of(r)];
  }
  local_ranks = 0;
  for (const auto& [node, count] : per_node) {
    local_ranks = std::max(local_ranks, count);
  }
  return static_cast<std::uint32_t>(per_node.size());
}

} // namespace

namespace {

/// The first release whose IB transport merges a card's ports (v2.20.3-1, net_ib.cc).
constexpr ReleaseCode kFirstMergedNics = 22003;

/// nccl_inputs(), reading what the graph does not keep from the scenario's node where there is
/// one (`spec_node`): its NVLink link count (the GPU generation) and its NIC cards' ports.
NcclModelInputs inputs(const core::Topology& t, std::uint32_t ranks, ReleaseCode release,
                       const core::NodeSpec* spec_node) {
  // From 2.20.3 NCCL's IB transport merges the ports of one card into one NET device of their
  // summed speed (src/transport/net_ib.cc: NCCL_IB_MERGE_NICS, default 1, joins devices of the
  // same PCI device, the function digit cleared, and system image GUID); before, every port
  // was a device of its own.
  const std::uint32_t nic_ports =
      spec_node != nullptr && release < kFirstMergedNics ? spec_node->nic_ports : 1;
  if (ranks == 0 || ranks > t.rank_count()) {
    throw core::UsageError(fmt::format("NCCL's model needs 1 to {} ranks on this topology, got {}",
                                       t.rank_count(), ranks));
  }
  NcclModelInputs in;
  in.ranks = ranks;
  in.nodes = count_nodes(t, ranks, in.local_ranks);
  in.release = release;
  SearchNode node;
  node.release = release;
  node.inter = in.nodes > 1;
  NcclPath nic_path = NcclPath::pix; // GPU -> NIC; single node: the search's minTypeInter
  node.gpus = in.local_ranks;

  if (t.is_full_mesh()) {
    // The textbook model: every rank a node of its own, joined by one uniform link.
    in.compute_capability = 80;
    in.compute_capability_from = "full-mesh topology: assumed Ampere (sm80)";
    in.net_bw = ranks > 1 ? t.route_cost(0, 1).bottleneck.gbps() : 0.0;
    in.nics = 1;
    node.net = in.net_bw;
    node.nics = 1;
  } else {
    const core::DeviceId d0 = t.device_of(0);
    double nvlink_rate = 0.0; // the topology's own rate, GB/s
    double nvlink_widest = 0.0;
    bool sharp = false;
    for (const core::LinkId id : t.out_links(d0)) {
      const core::Link& l = t.links()[id];
      const core::Device& to = t.devices()[l.to];
      if (l.kind == core::LinkKind::nvlink) {
        nvlink_rate += l.bandwidth.gbps();
        nvlink_widest = std::max(nvlink_widest, l.bandwidth.gbps());
        if (to.kind == core::DeviceKind::nvswitch) {
          in.nvswitch = true;
          sharp = sharp || to.reduces;
        }
      } else if (l.kind == core::LinkKind::pcie) {
        in.gpu_pci_bw = std::max(in.gpu_pci_bw, l.bandwidth.gbps() * kPciScale);
      }
    }
    auto [cc, why] = infer_cc(nvlink_rate, sharp);
    if (spec_node != nullptr && nvlink_rate > 0.0) {
      if (const auto by_links = infer_cc(spec_node->nvlink, spec_node->gpus, sharp)) {
        std::tie(cc, why) = *by_links;
      }
    }
    in.compute_capability = cc;
    in.compute_capability_from = why;
    in.nvlink = nvlink_rate > 0.0;
    in.gpu_nvlink_bw = nvlink_rate * search_nvlink_scale(release, cc);
    node.intra_total = std::max(in.gpu_nvlink_bw, in.gpu_pci_bw);
    node.intra_max = in.nvlink ? nvlink_widest * search_nvlink_scale(release, cc) : in.gpu_pci_bw;
    in.nvls_support = sharp && cc >= 90 && nvls_on_node(release, in.nodes, in.local_ranks);
    // NICs of node 0's ranks, and the path of rank 0 to its NIC and into the network.
    std::set<core::DeviceId> nics;
    for (core::Rank r = 0; r < ranks; ++r) {
      if (t.node_of(r) == t.node_of(0) && t.devices()[t.device_of(r)].egress != core::kNoDevice) {
        nics.insert(t.devices()[t.device_of(r)].egress);
      }
    }
    in.nics = static_cast<std::uint32_t>(nics.size());
    node.nics = in.nics;
    if (node.inter) {
      const core::DeviceId nic = t.devices()[d0].egress;
      if (nic != core::kNoDevice) {
        const std::vector<core::LinkId> path = t.route_between(d0, nic);
        double bw = std::numeric_limits<double>::infinity();
        for (const core::LinkId id : path) {
          bw = std::min(bw, ncclbw(t.links()[id], cc, release));
        }
        for (const core::LinkId id : t.out_links(nic)) {
          if (t.devices()[t.links()[id].to].node == core::kNetworkNode) {
            bw = std::min(bw, t.links()[id].bandwidth.gbps());
          }
        }
        in.net_bw = std::isfinite(bw) ? bw : 0.0;
        nic_path = path_type(t, path);
      } else {
        // No NIC of its own: the bottleneck of a route to another node, through the host.
        for (core::Rank r = 1; r < ranks; ++r) {
          if (t.node_of(r) != t.node_of(0)) {
            in.net_bw = t.route_cost(0, r).bottleneck.gbps();
            break;
          }
        }
        nic_path = NcclPath::sys;
        in.nics = node.nics = std::max<std::uint32_t>(in.nics, 1);
      }
      // A card's ports are NET devices of their own to NCCL (core::NodeSpec::nic_ports): the
      // search runs a channel through one port, at most the port's rate.
      in.nics = node.nics = in.nics * nic_ports;
      in.net_bw /= nic_ports;
      node.net = in.net_bw;
    }
    for (const core::DeviceId id : t.reducing_switches()) {
      in.collnet_support =
          in.collnet_support || (t.devices()[id].node == core::kNetworkNode && in.nodes > 1);
    }
  }
  node.cc = in.compute_capability;

  // Path types: between two GPUs of node 0 (LOC with one GPU per node) and GPU -> NIC.
  NcclPath type_intra = NcclPath::loc;
  if (!t.is_full_mesh()) {
    for (core::Rank r = 1; r < ranks; ++r) {
      if (t.node_of(r) == t.node_of(0)) {
        type_intra = path_type(t, t.route(0, r));
        break;
      }
    }
  }
  const NcclPath type_inter = nic_path;

  in.ring = search(node, false);
  in.tree = search(node, true);
  for (NcclGraph* g : {&in.ring, &in.tree}) {
    if (g->type_intra != NcclPath::sys) {
      g->type_intra = type_intra;
      g->type_inter = type_inter;
    }
  }
  if (in.nvls_support) {
    // NVLS graphs have one head GPU per channel (maxChannels = min(NCCL_MAX_NVLS_ARITY, ngpus)),
    // all of them on one node; across nodes each head needs a NIC. No channel duplication.
    const std::span<const double> speeds = speed_array(release, node.cc, node.inter);
    NcclGraph g;
    g.channels = std::min(kMaxNvlsArity, node.gpus);
    if (node.inter) {
      g.channels = std::min(g.channels, std::max<std::uint32_t>(node.nics, 1));
    }
    const double cap = node.inter ? node.net : node.intra_max;
    double s = speeds.back();
    for (const double v : speeds) {
      if (v <= cap + 1e-9) {
        s = v;
        break;
      }
    }
    g.bw_intra = g.bw_inter = s;
    g.type_intra = type_intra;
    g.type_inter = type_inter;
    in.nvls = g;
  }
  if (in.collnet_support) {
    // CollNet graphs: the tree's channels and bandwidths (an approximation of their own search);
    // CollNetDirect has at most NCCL_MAX_DIRECT_ARITY + 1 heads.
    in.collnet_chain = in.tree;
    in.collnet_direct = in.tree;
    in.collnet_direct.channels =
        std::min({in.tree.channels, kMaxDirectArity + 1, std::max(node.gpus, 1U)});
  }
  // connect.cc: comm->nChannels = min(ring, tree) channels, duplicated; CollNet adds half when
  // enabled and the node is faster inside than out; sm90+ across nodes doubles again ("4 compute
  // channels per search channel") when the ring's bwIntra exceeds 45 GB/s.
  std::uint32_t nc =
      std::min(max_channels(release), 2 * std::min(in.ring.channels, in.tree.channels));
  in.comm_channels = nc;
  in.tree_pattern_tree = false;
  in.nvls_channels = nvls_channels(in);
  return in;
}

} // namespace

NcclModelInputs nccl_inputs(const core::Topology& t, std::uint32_t ranks, ReleaseCode release) {
  return inputs(t, ranks, release, nullptr);
}

std::uint32_t nvls_channels(const NcclModelInputs& in) {
  const ReleaseCode r = in.release;
  if (!in.nvls_support) {
    return 0;
  }
  if (in.compute_capability < 100 || r < 22501) {
    return kNvlsChannels; // NVLS_NCHANNELS_SM90 (16), every release before 2.25.1
  }
  if (r < 22703) {
    return 32; // NVLS_NCHANNELS_SM100 (2.25.1)
  }
  if (in.nodes == 1) {
    return 24; // NVLS_NCHANNELS_SM100_NVL (2.27.3)
  }
  if (r < 23003) {
    return 32;
  }
  // ncclNvlsTreeSm100Tuning (2.30.3), by the slowest NIC (minNetBw, GB/s) and GPUs per node.
  const double nic = in.net_bw + 1e-9;
  if (in.nodes == 2 && nic >= 48.0) {
    return 32;
  }
  if (nic >= 96.0) {
    return in.local_ranks <= 8 ? 24 : 32;
  }
  return nic >= 48.0 ? 24 : 32;
}

std::uint64_t nvls_tree_chunk(const NcclModelInputs& in) {
  const ReleaseCode r = in.release;
  if (!in.nvls_support) {
    return 0;
  }
  const NcclEnv& env = in.env;
  if (r < 22105) {
    // enqueue.cc before 2.21.5: the Simple step, buffSizes[SIMPLE] / NCCL_STEPS (4 MiB / 8 on
    // x86), capped from 2.19.3 at 64 KiB from 4 nodes, and from 2.20.3 at
    // NCCL_NVLSTREE_MAX_CHUNKSIZE when it is set.
    const std::uint64_t step = // buffSizes[SIMPLE] / NCCL_STEPS
        env.buffer[static_cast<std::size_t>(algorithms::nccl::Proto::simple)].value_or(
            algorithms::nccl::kDefaultSimpleBuffer) /
        algorithms::nccl::kSteps;
    if (r >= 22003 && env.nvls_tree_max_chunk) {
      return std::min(step, *env.nvls_tree_max_chunk);
    }
    return r >= 21903 && in.nodes >= 4 ? algorithms::nccl::kNvlsTreeManyNodesChunk : step;
  }
  // 2.21.5 on: comm->nvlsChunkSize (NCCL_NVLS_CHUNKSIZE), at most NCCL_NVLSTREE_MAX_CHUNKSIZE
  // (64 KiB from 4 nodes by default; enqueue.cc, nvls.cc ncclNvlsTuning from 2.30.3).
  // Not modelled: 2.30.3's ncclNvlsTreeSm100Tuning, which on Blackwell across nodes sets both by
  // NIC speed, GPUs per node and the GPU-NIC path (64 KiB on 2 x 8 B200 with NDR400 next to
  // the GPUs). collsim's network proxy (proxy_overhead: 3 us per Simple step on Intel hosts,
  // NCCL's own NCCL_NET_OVERHEAD x 3) bounds a GPU's 64 KiB chunks at about 22 GB/s, and the
  // 1 GiB allreduce on 2 x 8 B200 took twice as long (6211 against 3151 us); NVIDIA's choice
  // says the proxy is faster than that there (docs/library-defaults.md).
  // Neither variable set: min(128 KiB, 64 KiB from 4 nodes), default_nvls_tree_chunk(nodes).
  const std::uint64_t chunk = env.nvls_chunk_size.value_or(algorithms::nccl::kNvlsChunkBytes);
  const std::uint64_t tree_max = env.nvls_tree_max_chunk.value_or(
      in.nodes >= 4 ? algorithms::nccl::kNvlsTreeManyNodesChunk : chunk);
  return std::min(chunk, tree_max);
}

NcclModelInputs nccl_inputs(const core::TopologySpec& spec, const core::Topology& topology,
                            std::uint32_t ranks, ReleaseCode release) {
  NcclModelInputs in =
      inputs(topology, ranks, release, spec.kind == "system" ? &spec.system.node : nullptr);
  if (spec.kind == "system") {
    const std::string& s = spec.system.node.cpu.inter_socket;
    in.cpu = s == "infinity_fabric" ? NcclCpu::amd : s == "upi" ? NcclCpu::intel : NcclCpu::other;
  }
  return in;
}

NcclModelInputs nccl_inputs(const core::TopologySpec& spec, const core::NcclSpec& nccl,
                            const core::Topology& topology, std::uint32_t ranks) {
  NcclModelInputs in = nccl_inputs(spec, topology, ranks, parse_nccl_release(nccl));
  if (in.nodes > 1) {
    // search.cc: a graph that leaves the node takes its NIC's latency (net->net.latency, what the
    // plugin reports) as latencyInter; one node's graphs use no NIC and keep 0.
    const double us = nccl.net_latency.value * 1e6;
    for (NcclGraph* g : {&in.ring, &in.tree, &in.collnet_direct, &in.collnet_chain, &in.nvls}) {
      g->latency_inter = us;
    }
  }
  apply_nccl_env(in, parse_nccl_env(nccl));
  return in;
}

void apply_nccl_env(NcclModelInputs& in, const NcclEnv& env) {
  in.env = env;
  if (env.nvls_enable == false) {
    in.nvls_support = false;
    in.nvls_channels = 0;
  }
  if (env.collnet_enable) {
    in.collnet_enable = *env.collnet_enable;
  }
  if (env.min_channels > 0) {
    in.comm_channels = std::max(in.comm_channels, env.min_channels);
  }
  if (env.max_channels > 0) {
    in.comm_channels = std::min(in.comm_channels, env.max_channels);
  }
}

} // namespace collsim::stacks
