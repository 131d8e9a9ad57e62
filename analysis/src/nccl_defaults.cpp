// NCCL's default algorithm and protocol choice (algorithms.md sections 2.4 and 3, NCCL v2.30.7-1).
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

#include "collsim/analysis/nccl_defaults.hpp"

#include "collsim/core/errors.hpp"
#include "collsim/core/scenario.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <span>

namespace collsim::analysis {
namespace {

using algorithms::nccl::Algo;
using algorithms::nccl::Hw;
using algorithms::nccl::Proto;
using core::CollectiveKind;

// ---- tuner constants (algorithms.md 3.1, ncclTunerConstantsDefaults) ---------------------------
// Rows: compCap index (Volta, Ampere, Hopper, Blackwell); columns: N1, N2, N4+.
using PerArch = std::array<std::array<double, 3>, 4>;
// llMaxBws[index1][index2]: index1 = compCap index on one node, else 0 Intel / 1 AMD or mixed.
constexpr PerArch kLlMaxBw{
    {{39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0}, {2 * 141.0, 90.0, 70.0}}};
constexpr PerArch kPerChMaxRingLl128Bw{
    {{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 36.7}, {40.0, 40.0, 40.0}}};
constexpr PerArch kPerChMaxTreeLl128Bw{
    {{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 29.0}, {55.6, 31.67, 20.0}}};
constexpr PerArch kPerChMaxTreeBw{
    {{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}, {70.0, 42.8, 24.0}}};
constexpr PerArch kPerChMaxNvlsTreeBw{
    {{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {0.0, 57.7, 45.5}, {0.0, 96.0, 80.0}}};
constexpr std::array<double, 4> kNvlsEfficiency{0.0, 0.0, 0.85, 0.74};
// treeCorrectionFactor[proto][log2(nBytes/64)], protocols LL, LL128, Simple; 64 B .. 256 MiB.
constexpr std::array<std::array<double, 24>, 3> kTreeCorrection{{
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7,  .7,  .7,  .6,  .5,
     .4,  .4,  .5,  .6,  .7, .8, .9, 1.0, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7,  .6,  .6,
     .6,  .6,  .6,  .6,  .8,  .9, .9, .9, .9, 1.0, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5,
     .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9, .9},
}};

// ---- topology constants (src/graph/topo.h, algorithms.md 3.1 "Other constants") --------------
constexpr double kLocBw = 5000.0;
// NCCL charges each NVLink a calibrated constant, not its signalling rate: SM70/SM80 20 GB/s,
// SM90 20.6 GB/s, SM100 40.1 GB/s per link. The collsim topology carries the signalling rate
// (25 GB/s per NVLink 2-4 link, 50 GB/s per NVLink 5 link), so a GPU's NVLink rate is scaled by
// NCCL's constant over the generation's nominal per-link rate (A100: 12 x 25 -> 12 x 20 = 240).
constexpr double nvlink_scale(std::uint32_t cc) {
  return cc >= 100 ? 40.1 / 50.0 : cc >= 90 ? 20.6 / 25.0 : 20.0 / 25.0;
}
// NCCL's PCI link bandwidth is width x gen speed / 80 (topo.cc): Gen3 x16 = 12 GB/s (PCI_BW),
// doubling per generation. collsim's PCIe rates are after line coding (Gen3 x16 = 15.75 GB/s), so
// the ratio 12 / 15.75 converts every generation.
constexpr double kPciScale = 12.0 / 15.75;
// NCCL_NET_OVERHEAD default (us): Intel x86 1.0, AMD x86 2.0, otherwise 1.0.
constexpr double net_overhead_us(NcclCpu cpu) {
  return cpu == NcclCpu::amd ? 2.0 : 1.0;
}

// ---- search.cc speed arrays (GB/s per channel) -------------------------------------------------
constexpr std::array<double, 13> kSpeedIntra{40.0, 30.0, 20.0, 18.0, 15.0, 12.0, 10.0,
                                             9.0,  7.0,  6.0,  5.0,  4.0,  3.0};
constexpr std::array<double, 19> kSpeedInter{48.0, 30.0, 28.0, 24.0, 20.0, 18.0, 15.0,
                                             12.0, 10.0, 9.0,  7.0,  6.0,  5.0,  4.0,
                                             3.0,  2.4,  1.2,  0.24, 0.12};
constexpr std::array<double, 11> kSm90SpeedIntra{60.0, 50.0, 40.0, 30.0, 24.0, 20.0,
                                                 15.0, 12.0, 11.0, 6.0,  3.0};
constexpr std::array<double, 17> kSm90SpeedInter{48.0, 45.0, 42.0, 40.0, 30.0, 24.0,
                                                 22.0, 20.0, 17.5, 15.0, 12.0, 6.0,
                                                 3.0,  2.4,  1.2,  0.24, 0.12};
constexpr std::array<double, 12> kSm100SpeedIntra{90.0, 80.0, 70.0, 60.0, 50.0, 45.0,
                                                  40.0, 30.0, 24.0, 20.0, 19.0, 18.0};
constexpr std::array<double, 20> kSm100SpeedInter{96.0, 86.0, 80.0, 48.0, 45.1, 42.0, 40.0,
                                                  30.0, 24.0, 22.0, 20.0, 17.5, 15.0, 12.0,
                                                  6.0,  3.0,  2.4,  1.2,  0.24, 0.12};

std::span<const double> speed_array(std::uint32_t cc, bool inter) {
  if (cc >= 100) {
    return inter ? std::span<const double>(kSm100SpeedInter) : kSm100SpeedIntra;
  }
  if (cc >= 90) {
    return inter ? std::span<const double>(kSm90SpeedInter) : kSm90SpeedIntra;
  }
  return inter ? std::span<const double>(kSpeedInter) : kSpeedIntra;
}

// ---- device and thread constants (src/include/device.h, comm.h) --------------------------------
constexpr std::uint32_t kMaxChannels = 64;       // MAXCHANNELS
constexpr std::uint32_t kMaxNvlsArity = 32;      // NCCL_MAX_NVLS_ARITY
constexpr std::uint32_t kMaxDirectArity = 7;     // NCCL_MAX_DIRECT_ARITY
constexpr std::uint32_t kNvlsChannels = 16;      // NCCL_NVLS_NCHANNELS default
constexpr std::uint32_t kWarp = 32;              // WARP_SIZE
constexpr std::uint32_t kMaxThreads = 640;       // NCCL_MAX_NTHREADS
constexpr std::uint32_t kSimpleMaxThreads = 512; // NCCL_SIMPLE_MAX_NTHREADS
constexpr std::uint32_t kLlMaxThreads = 512;     // NCCL_LL_MAX_NTHREADS
constexpr std::uint32_t kLl128MaxThreads = 640;  // NCCL_LL128_MAX_NTHREADS
constexpr double kPciBw = 12.0;                  // PCI_BW, for the Simple ring's thread count

std::size_t cc_index(std::uint32_t cc) {
  return cc >= 100 ? 3 : cc >= 90 ? 2 : cc >= 80 ? 1 : 0;
}
/// NCCL's tables index protocols LL, LL128, Simple.
std::size_t proto_index(Proto p) {
  return p == Proto::ll ? 0 : p == Proto::ll128 ? 1 : 2;
}
std::uint32_t log2i(std::uint64_t n) {
  return n == 0 ? 0 : static_cast<std::uint32_t>(std::bit_width(n) - 1);
}

// ---- from the collsim topology -----------------------------------------------------------------

/// NCCL's bandwidth of one collsim link (GB/s).
double ncclbw(const core::Link& l, std::uint32_t cc) {
  const double gbs = l.bandwidth.gbps();
  switch (l.kind) {
  case core::LinkKind::nvlink: return gbs * nvlink_scale(cc);
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

/// What the channel search needs to know about one node.
struct SearchNode {
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
  constexpr std::uint32_t kGraphMaxChannels = kMaxChannels / 2; // ring/tree graphs
  const std::span<const double> speeds = speed_array(n.cc, n.inter);
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
    const std::uint32_t ch = capacity(n, speeds[i], kGraphMaxChannels);
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
  // sm90+ with bwIntra < 50 and more than 4 channels.
  if (g.bw_intra >= 25.0 && !(n.cc > 80 && g.bw_intra < 50.0 && g.channels > 4)) {
    const std::uint32_t dup = std::min(g.channels * 2, kGraphMaxChannels);
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
      if (capacity(n, s, kGraphMaxChannels) < g.channels) {
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

NcclModelInputs nccl_inputs(const core::Topology& t, std::uint32_t ranks) {
  if (ranks == 0 || ranks > t.rank_count()) {
    throw core::UsageError(fmt::format("NCCL's model needs 1 to {} ranks on this topology, got {}",
                                       t.rank_count(), ranks));
  }
  NcclModelInputs in;
  in.ranks = ranks;
  in.nodes = count_nodes(t, ranks, in.local_ranks);
  SearchNode node;
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
    const auto [cc, why] = infer_cc(nvlink_rate, sharp);
    in.compute_capability = cc;
    in.compute_capability_from = why;
    in.nvlink = nvlink_rate > 0.0;
    in.gpu_nvlink_bw = nvlink_rate * nvlink_scale(cc);
    node.intra_total = std::max(in.gpu_nvlink_bw, in.gpu_pci_bw);
    node.intra_max = in.nvlink ? nvlink_widest * nvlink_scale(cc) : in.gpu_pci_bw;
    in.nvls_support = sharp && cc >= 90 && in.local_ranks > 2;
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
          bw = std::min(bw, ncclbw(t.links()[id], cc));
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
    const std::span<const double> speeds = speed_array(node.cc, node.inter);
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
  std::uint32_t nc = std::min(kMaxChannels, 2 * std::min(in.ring.channels, in.tree.channels));
  in.comm_channels = nc;
  in.nvls_channels = in.nvls_support ? kNvlsChannels : 0;
  in.tree_pattern_tree = false;
  return in;
}

NcclModelInputs nccl_inputs(const core::TopologySpec& spec, const core::Topology& topology,
                            std::uint32_t ranks) {
  NcclModelInputs in = nccl_inputs(topology, ranks);
  if (spec.kind == "system") {
    const std::string& s = spec.system.node.cpu.inter_socket;
    in.cpu = s == "infinity_fabric" ? NcclCpu::amd : s == "upi" ? NcclCpu::intel : NcclCpu::other;
  }
  return in;
}

namespace {

/// The comm->nChannels adjustments that depend on enable flags set after nccl_inputs.
std::uint32_t comm_channels(const NcclModelInputs& in) {
  std::uint32_t nc = in.comm_channels;
  if (in.collnet_enable && in.collnet_support &&
      in.collnet_chain.bw_intra > in.collnet_chain.bw_inter && in.ranks > in.nodes) {
    nc = std::min(kMaxChannels, nc + nc / 2);
  }
  if (in.compute_capability >= 90 && in.nodes > 1 && in.ring.bw_intra > 45.0 &&
      2 * nc <= kMaxChannels) {
    nc *= 2;
  }
  return nc;
}

const NcclGraph& graph_of(const NcclModelInputs& in, Algo a) {
  switch (a) {
  case Algo::tree: return in.tree;
  case Algo::collnet_direct: return in.collnet_direct;
  case Algo::collnet_chain: return in.collnet_chain;
  case Algo::nvls:
  case Algo::nvls_tree: return in.nvls;
  case Algo::ring:
  case Algo::pat: return in.ring; // PAT searches no graph of its own: the ring's channels
  }
  return in.ring;
}

std::vector<Algo> legal_algos(CollectiveKind c) {
  switch (c) {
  case CollectiveKind::bcast:
  case CollectiveKind::reduce: return {Algo::ring};
  case CollectiveKind::allgather:
  case CollectiveKind::reduce_scatter:
    return {Algo::ring, Algo::collnet_direct, Algo::nvls, Algo::pat};
  default:
    return {Algo::tree,          Algo::ring, Algo::collnet_direct,
            Algo::collnet_chain, Algo::nvls, Algo::nvls_tree};
  }
}

/// The protocols the tuning loop prices for `a`: NVLS, NVLSTree, PAT and CollNet run Simple only
/// (CollNet's other protocols get busBw = 0, "not used"; they are left out of the table).
std::vector<Proto> protocols(Algo a) {
  if (a == Algo::tree || a == Algo::ring) {
    return {Proto::ll, Proto::ll128, Proto::simple};
  }
  return {Proto::simple};
}

/// One entry of comm->bandwidths / comm->latencies (3.3, 3.4), with the enable rules of
/// ncclTopoTuneModel and updateCollCostTable; `disabled` says why bandwidth is 0.
NcclCost model_entry(CollectiveKind c, Algo a, Proto p, const NcclModelInputs& in) {
  NcclCost e;
  e.algo = a;
  e.proto = p;
  const std::uint32_t n = in.ranks;
  const std::uint32_t nodes = in.nodes;
  const double ppn = static_cast<double>(n) / nodes;
  const std::uint32_t ippn = n / nodes;
  const std::size_t cci = cc_index(in.compute_capability);
  const std::size_t idx2 = nodes <= 2 ? nodes - 1 : 2;
  const std::size_t idx1 = nodes == 1 ? cci : (in.cpu == NcclCpu::amd ? 1 : 0);
  const double ll_max_bw = kLlMaxBw[idx1][idx2];
  const NcclGraph& g = graph_of(in, a);
  const bool ar = c == CollectiveKind::allreduce;
  const bool agrs = c == CollectiveKind::allgather || c == CollectiveKind::reduce_scatter;
  const std::uint32_t nsteps = ar ? 2 * (n - 1) : agrs ? n - 1 : n;
  const bool collnet = a == Algo::collnet_direct || a == Algo::collnet_chain;
  const bool nvls = a == Algo::nvls || a == Algo::nvls_tree;

  // updateCollCostTable's skips and ncclTopoTuneModel's disables.
  if (nvls && !in.nvls_support) {
    e.disabled = "no NVLS (needs an NVSwitch with NVLink SHARP, sm90+, more than 2 GPUs)";
  } else if (nvls && !ar && in.local_ranks > kMaxNvlsArity) {
    e.disabled = "more local ranks than NCCL_MAX_NVLS_ARITY (32)";
  } else if (a == Algo::nvls_tree && nodes == 1) {
    e.disabled = "NVLSTree is disabled on a single node";
  } else if (a == Algo::nvls && nodes > 1 && !(in.collnet_support && in.collnet_enable)) {
    e.disabled = "multi-node NVLS needs CollNet (SHARP, NCCL_COLLNET_ENABLE=1)";
  } else if (collnet && !in.collnet_support) {
    e.disabled = "no CollNet (needs a reducing network switch and more than one node)";
  } else if (collnet && !in.collnet_enable) {
    e.disabled = "CollNet is off by default (NCCL_COLLNET_ENABLE=0)";
  } else if (collnet && in.local_ranks > kMaxDirectArity + 1) {
    e.disabled = "more than NCCL_MAX_DIRECT_ARITY+1 (8) local ranks";
  } else if (a == Algo::collnet_direct && !in.nvswitch) {
    e.disabled = "CollNetDirect needs an NVSwitch";
  } else if (a == Algo::pat && (nodes != n || in.compute_capability < 60)) {
    e.disabled = "PAT runs with one GPU per node only";
  } else if (nvls && g.channels < 2) {
    e.disabled = "NVLS needs at least 2 channels";
  }
  if (!e.disabled.empty()) {
    e.time_us = -1.0;
    return e;
  }

  // Bandwidth (3.3).
  double bw = (nodes <= 2 || collnet) ? g.bw_intra : g.bw_inter;
  if (nvls) {
    double intra = g.bw_intra * kNvlsEfficiency[cci] * (g.channels - 1) / g.channels;
    intra *= ar ? 2.0 : (ppn - 1) / ppn; // "AllReduce pipelines two operations"
    const double inter = g.bw_inter * ((nodes <= 2 && a == Algo::nvls_tree) ? 2 : 1);
    bw = std::min({intra, inter,
                   a == Algo::nvls_tree ? kPerChMaxNvlsTreeBw[cci][idx2]
                                        : std::numeric_limits<double>::infinity()});
  }
  double bus = g.channels * bw;
  if (a == Algo::ring && p == Proto::ll) {
    bus = std::min(ll_max_bw, bus * 0.5);
  }
  if (a == Algo::ring && p == Proto::ll128) {
    bus = std::min(bus * 0.92, g.channels * kPerChMaxRingLl128Bw[cci][idx2]);
  }
  if (a == Algo::tree && ar) {
    bus = std::min(bus * 0.92, g.channels * kPerChMaxTreeBw[cci][idx2]);
  }
  if (a == Algo::tree && p == Proto::ll) {
    bus = std::min(bus / 3.8, ll_max_bw);
  }
  if (a == Algo::tree && p == Proto::ll128) {
    bus = std::min(bus * (nodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0),
                   g.channels * kPerChMaxTreeLl128Bw[cci][idx2]);
  }
  if (a == Algo::tree && in.tree_pattern_tree) {
    bus *= 0.85;
  }
  if (a == Algo::pat) {
    bus *= 0.75;
  }
  if (a == Algo::collnet_direct) {
    if (agrs) {
      bus = ppn * std::min(g.bw_intra, 0.9 * g.bw_inter);
    } else {
      double factor = ppn / g.channels; // GPU:NIC ratio
      factor -= (factor - 1) / 2;
      bus /= factor;
      if (in.compute_capability >= 90) {
        bus *= 0.85;
      }
    }
  }
  if ((a == Algo::nvls || a == Algo::collnet_direct) && agrs && nodes > 1 &&
      in.local_ranks > in.collnet_direct.channels) {
    // AllGather/ReduceScatter over CollNet need every node's ranks to be heads (1:1 GPU:NIC);
    // the SHARP plugin is assumed to support iallgather/ireducescatter.
    e.disabled = "multi-node NVLS/CollNet allgather/reduce_scatter needs a head per local rank";
    e.time_us = -1.0;
    return e;
  }
  if (!(a != Algo::ring && agrs)) {
    bus *= (a == Algo::ring || nvls) ? static_cast<double>(n) / nsteps : 0.5;
  }
  e.bandwidth = bus;

  // Latency (3.4).
  const Hw intra_hw = g.type_intra == NcclPath::nvl ? Hw::nvlink : Hw::pci;
  double lat = algorithms::nccl::base_latency_us(a, p);
  double intra_lat = algorithms::nccl::hw_latency_us(intra_hw, a, p);
  double inter_lat = (ppn == 1.0 ? algorithms::nccl::hw_latency_us(Hw::net, Algo::tree, p)
                                 : algorithms::nccl::hw_latency_us(Hw::net, a, p)) +
                     g.latency_inter;
  if (p == Proto::simple) {
    inter_lat += g.latency_inter; // flush
  }
  switch (a) {
  case Algo::ring:
    if (c == CollectiveKind::reduce || c == CollectiveKind::bcast) {
      const Hw hw = nodes == 1 ? intra_hw : Hw::net;
      double step = algorithms::nccl::hw_latency_us(hw, Algo::ring, p);
      if (g.same_channels) {
        lat += step;
      } else {
        if (p == Proto::simple) {
          step = algorithms::nccl::hw_latency_us(hw, Algo::tree, p);
        }
        lat += nsteps * step;
      }
    } else {
      double overhead = 0.0;
      if (nodes > 1) {
        overhead = net_overhead_us(in.cpu) * (p == Proto::simple ? 3 : 1);
      }
      intra_lat = std::max(intra_lat, overhead);
      const std::uint32_t inter_steps = nodes == 1 ? 0 : ar ? 2 * (nodes - 1) : nodes - 1;
      lat += (nsteps - inter_steps) * intra_lat + inter_steps * inter_lat;
    }
    break;
  case Algo::tree:
    if (ar) {
      lat += 2 * ((ippn - 1) * intra_lat + log2i(nodes) * inter_lat);
    }
    break;
  case Algo::collnet_direct:
    lat += 2 * (std::min<std::uint32_t>(1, ippn - 1) * intra_lat + (ippn - 1) * 0.4) + inter_lat;
    break;
  case Algo::collnet_chain: lat += 2 * (ippn - 1) * intra_lat + inter_lat; break;
  case Algo::nvls:
    lat = intra_lat;
    if (nodes > 1) {
      lat += inter_lat;
    }
    break;
  case Algo::nvls_tree: lat += intra_lat + 2 * log2i(nodes) * inter_lat; break;
  case Algo::pat:
    if (agrs) {
      lat += log2i(nodes) * (inter_lat / 3.5) + n * 2.8;
    }
    break;
  }
  e.latency_us = lat;

  // Protocol enables: LL128 by default only on NVLink-class paths (2.4).
  if (p == Proto::ll128) {
    bool on =
        in.compute_capability >= 90 ? g.type_inter <= NcclPath::pxn : g.type_inter <= NcclPath::pxb;
    on = on && g.type_intra <= NcclPath::nvb && in.compute_capability >= 70;
    if (!on) {
      e.disabled = "LL128 is off by default on this path (needs NVLink inside the node and a "
                   "PCIe-switch path to the NIC)";
      e.bandwidth = 0.0;
      e.time_us = -1.0;
    }
  }
  return e;
}

/// ncclTopoGetAlgoTime for one entry at `bytes` (numPipeOps = 1).
void price(NcclCost& e, CollectiveKind c, std::uint64_t bytes, const NcclModelInputs& in,
           std::uint32_t nc) {
  if (!e.disabled.empty() || e.bandwidth <= 0.0) {
    e.time_us = -1.0;
    return;
  }
  double bw = e.bandwidth;
  double lat = e.latency_us;
  const std::uint32_t log_size = log2i(bytes >> 6);
  const std::size_t pi = proto_index(e.proto);
  const bool ar = c == CollectiveKind::allreduce;
  if (e.algo == Algo::tree && ar && log_size < 23) {
    bw *= kTreeCorrection[pi][log_size];
  }
  if (e.algo == Algo::nvls_tree && ar && log_size < 24 && in.compute_capability >= 100 &&
      in.cpu != NcclCpu::other) {
    bw *= kTreeCorrection[pi][log_size];
  }
  if (e.algo == Algo::ring && e.proto == Proto::simple && in.nodes > 1 && ar &&
      bytes / (static_cast<std::uint64_t>(nc) * in.ranks) >= 64) {
    lat *= in.compute_capability < 80 ? 1.9 : 1.4; // "Plateau effect of ring"
  }
  e.bandwidth = bw;
  e.latency_us = lat;
  e.time_us = lat + static_cast<double>(bytes) / (1000.0 * bw);
}

std::string_view proto_param(Proto p) {
  switch (p) {
  case Proto::simple: return "simple";
  case Proto::ll: return "ll";
  case Proto::ll128: return "ll128";
  }
  return "simple";
}

} // namespace

std::optional<NcclChoice> nccl_default(CollectiveKind collective, std::uint32_t ranks,
                                       core::Bytes bytes, const NcclModelInputs& in) {
  if (ranks != in.ranks) {
    throw core::UsageError(fmt::format(
        "NCCL's model inputs were derived for {} ranks, asked for {}", in.ranks, ranks));
  }
  if (collective == CollectiveKind::barrier) {
    return std::nullopt; // NCCL has no barrier
  }
  NcclChoice out;
  out.collective = collective;
  out.ranks = ranks;
  out.bytes = bytes;
  if (collective == CollectiveKind::alltoall || collective == CollectiveKind::gather ||
      collective == CollectiveKind::scatter) {
    // Since 2.28 NCCL expands these into grouped ncclSend/ncclRecv (section 2.4): every transfer
    // posted at once, which is collsim's "linear" for each of them.
    out.modelled = false;
    out.algorithm = "linear";
    out.channels = 0;
    return out;
  }

  const std::uint32_t nc_comm = comm_channels(in);
  if (ranks == 1) {
    // updateCollCostTable: with one rank only Ring/Simple is priced, at 0.
    NcclCost e;
    e.time_us = 0.0;
    out.table.push_back(e);
  } else {
    for (const Algo a : legal_algos(collective)) {
      for (const Proto p : protocols(a)) {
        NcclCost e = model_entry(collective, a, p, in);
        price(e, collective, bytes.value, in, nc_comm);
        out.table.push_back(std::move(e));
      }
    }
  }
  const NcclCost* best = nullptr;
  for (const NcclCost& e : out.table) {
    if (e.time_us >= 0.0 && (best == nullptr || e.time_us < best->time_us)) {
      best = &e;
    }
  }
  if (best == nullptr) {
    throw core::InternalError("NCCL's model left no eligible algorithm (Ring/Simple always is)");
  }
  out.algo = best->algo;
  out.proto = best->proto;
  out.time_us = best->time_us;

  // topoGetAlgoInfo: channels and threads (3.5).
  const Algo a = out.algo;
  const Proto p = out.proto;
  std::uint32_t nt = 0;
  std::uint64_t threshold = p == Proto::simple ? 64 : 8; // NCCL_*_THREAD_THRESHOLD
  if (a == Algo::ring && p == Proto::ll) {
    threshold *= ranks;
  }
  if ((a == Algo::collnet_direct || a == Algo::collnet_chain) && p == Proto::simple) {
    threshold = 512;
  }
  switch (p) {
  case Proto::ll: nt = kLlMaxThreads; break;
  case Proto::ll128: nt = kLl128MaxThreads; break;
  case Proto::simple:
    nt = (a == Algo::ring)
             ? (in.ring.bw_intra * in.ring.channels <= kPciBw ? 256 : kSimpleMaxThreads)
         : (a == Algo::tree || a == Algo::pat) ? kSimpleMaxThreads
                                               : kMaxThreads;
    break;
  }
  std::uint32_t nc = (a == Algo::nvls || a == Algo::nvls_tree) ? in.nvls_channels : nc_comm;
  if (a != Algo::nvls && a != Algo::nvls_tree) {
    while (bytes.value < static_cast<std::uint64_t>(nc) * nt * threshold && nc >= 2) {
      --nc;
    }
  }
  if (a != Algo::nvls && a != Algo::nvls_tree && a != Algo::collnet_direct) {
    while (bytes.value < static_cast<std::uint64_t>(nc) * nt * threshold && nt % 128 == 0) {
      nt /= 2;
    }
  }
  if (p == Proto::simple) {
    if (a == Algo::ring) {
      nt += kWarp; // Simple ring: +1 warp (3.5)
    }
    if (a == Algo::tree) {
      nt += 4 * kWarp;
    }
  }
  nt = std::max(nt, 3 * kWarp);
  if (a == Algo::tree || a == Algo::pat) {
    nt = kMaxThreads; // "Tree now uses all threads always"
  }
  out.channels = std::clamp<std::uint32_t>(nc, 1, kMaxChannels);
  out.threads = nt;

  // The collsim algorithm that simulates it.
  const std::string channels = std::to_string(out.channels);
  switch (a) {
  case Algo::ring:
    out.algorithm = "nccl_ring";
    out.params = {{"protocol", std::string(proto_param(p))}, {"channels", channels}};
    break;
  case Algo::tree:
    out.algorithm = "nccl_tree";
    out.params = {{"protocol", std::string(proto_param(p))}, {"channels", channels}};
    break;
  case Algo::nvls_tree:
    out.algorithm = "nvls_tree";
    out.params = {{"protocol", "simple"}, {"channels", channels}};
    break;
  case Algo::pat:
    out.algorithm = "pat";
    out.params = {{"protocol", "simple"}, {"channels", channels}};
    break;
  case Algo::nvls: out.algorithm = "nvls"; break;
  case Algo::collnet_direct: out.algorithm = "collnet_direct"; break;
  case Algo::collnet_chain: out.algorithm = "collnet_chain"; break;
  }
  return out;
}

std::string params_text(const algorithms::RawParams& params) {
  std::string out;
  for (const auto& [name, value] : params) {
    if (!out.empty()) {
      out += ',';
    }
    out += name + "=" + value;
  }
  return out;
}

std::optional<LibraryChoice> nccl_library_choice(core::CollectiveKind collective,
                                                 std::uint32_t ranks, core::Bytes bytes,
                                                 const NcclModelInputs& in) {
  const auto choice = nccl_default(collective, ranks, bytes, in);
  if (!choice) {
    return std::nullopt;
  }
  LibraryChoice c;
  c.library = "NCCL 2.30.7 tuning model";
  c.algorithm = choice->algorithm;
  c.params = choice->params;
  if (choice->modelled) {
    c.library_name = fmt::format("{}/{}", algorithms::nccl::algo_name(choice->algo),
                                 algorithms::nccl::protocol_name(choice->proto));
    c.reason = fmt::format("{} is the cheapest in NCCL's cost table ({:.2f} us, {} channels)",
                           c.library_name, choice->time_us, choice->channels);
  } else {
    c.library_name = "send/recv";
    c.reason = "grouped point-to-point transfers";
  }
  return c;
}

bool nccl_can_run(std::string_view name, const NcclModelInputs& in) {
  if (name == "collnet_direct" || name == "collnet_chain") {
    return in.collnet_support;
  }
  if (name == "nvls" || name == "nvls_tree") {
    return in.nvls_support;
  }
  return true;
}

} // namespace collsim::analysis
