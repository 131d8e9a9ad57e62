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

#include "collsim/stacks/nccl_model.hpp"

#include "nccl_model_constants.hpp"

#include "collsim/core/errors.hpp"
#include "collsim/core/scenario.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <span>

namespace collsim::stacks {
using namespace nccl_detail;
namespace {

using algorithms::nccl::Algo;
using algorithms::nccl::Hw;
using core::CollectiveKind;

} // namespace

/// The comm->nChannels adjustments that depend on enable flags set after nccl_inputs.
std::uint32_t nccl_comm_channels(const NcclModelInputs& in) {
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

namespace {

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

/// topoGetAlgoInfo's channel and thread tuning (3.5) for the chosen (algo, proto) of `out`.
void tune_channels(NcclChoice& out, const NcclModelInputs& in, std::uint32_t nc_comm) {
  const Algo a = out.algo;
  const Proto p = out.proto;
  const std::uint32_t ranks = out.ranks;
  const core::Bytes bytes = out.bytes;
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
  if (in.env.min_channels > 0) {
    nc = std::max(nc, in.env.min_channels); // NCCL_MIN_NCHANNELS
  }
  if (in.env.max_channels > 0) {
    nc = std::min(nc, in.env.max_channels); // NCCL_MAX_NCHANNELS
  }
  out.channels = std::clamp<std::uint32_t>(nc, 1, kMaxChannels);
  out.threads = nt;
}

/// The collsim algorithm (and parameters) that simulates `out`'s NCCL algorithm and protocol.
void name_algorithm(NcclChoice& out) {
  const Algo a = out.algo;
  const Proto p = out.proto;
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
    // Since 2.28 NCCL expands these into grouped ncclSend/ncclRecv (section 2.4; enqueue.cc):
    // collsim's nccl_p2p, each transfer split over channels as NCCL splits it.
    out.modelled = false;
    out.algorithm = "linear";
    out.channels = 0;
    if (ranks > 1) {
      const NcclP2pChoice p2p = nccl_p2p_choice(in, bytes.value / ranks);
      out.algorithm = "nccl_p2p";
      out.proto = p2p.proto;
      out.channels = p2p.channels;
      out.params = {{"protocol", std::string(proto_param(p2p.proto))},
                    {"channels", std::to_string(p2p.channels)}};
    }
    return out;
  }

  const std::uint32_t nc_comm = nccl_comm_channels(in);
  if (ranks == 1) {
    // updateCollCostTable: with one rank only Ring/Simple is priced, at 0.
    NcclCost e;
    e.time_us = 0.0;
    out.table.push_back(e);
  } else {
    for (const Algo a : legal_algos(collective)) {
      for (const Proto p : protocols(a)) {
        NcclCost e = model_entry(collective, a, p, in);
        if (e.disabled.empty() && !in.env.allows(a)) {
          e.disabled = "NCCL_ALGO excludes it";
        } else if (e.disabled.empty() && !in.env.allows(p)) {
          e.disabled = "NCCL_PROTO excludes it";
        }
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
  tune_channels(out, in, nc_comm);

  name_algorithm(out);
  return out;
}

std::optional<NcclChoice> nccl_algorithm_choice(CollectiveKind collective, std::uint32_t ranks,
                                                core::Bytes bytes, const NcclModelInputs& in,
                                                Algo algo, std::optional<Proto> proto) {
  // The user named the algorithm: NCCL_ALGO does not take it away (NCCL_PROTO still applies).
  NcclModelInputs named = in;
  named.env.algo_allowed.fill(true);
  std::optional<NcclChoice> out = nccl_default(collective, ranks, bytes, named);
  if (!out || !out->modelled) {
    return out;
  }
  const NcclCost* best = nullptr;
  bool runs = false; // some protocol of `algo` is eligible
  for (const NcclCost& e : out->table) {
    if (e.algo != algo || e.time_us < 0.0) {
      continue;
    }
    runs = true;
    if ((!proto || e.proto == *proto) && (best == nullptr || e.time_us < best->time_us)) {
      best = &e;
    }
  }
  if (!runs && ranks > 1) {
    return std::nullopt; // NCCL cannot run the algorithm here at all
  }
  if (best != nullptr) {
    out->proto = best->proto;
    out->time_us = best->time_us;
  } else {
    out->proto = proto.value_or(Proto::simple); // forced (NCCL_PROTO) though off by default
    out->time_us = -1.0;
  }
  out->algo = algo;
  tune_channels(*out, named, nccl_comm_channels(named));
  name_algorithm(*out);
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

bool nccl_can_run(std::string_view name, const NcclModelInputs& in) {
  if (name == "collnet_direct" || name == "collnet_chain") {
    return in.collnet_support;
  }
  if (name == "nvls" || name == "nvls_tree") {
    return in.nvls_support;
  }
  return true;
}

} // namespace collsim::stacks
