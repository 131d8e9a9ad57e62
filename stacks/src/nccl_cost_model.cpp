// NCCL's cost table: one (algorithm, protocol) entry of comm->bandwidths and comm->latencies as
// the release in NcclModelInputs::release priced it (src/graph/tuning.cc ncclTopoTuneModel and
// ncclTopoGetAlgoTime; algorithms.md 3.3 and 3.4; the release tables: nccl_release_tables.hpp).
// nccl_tuning.cpp chooses from these entries.

#include "nccl_cost_model.hpp"

#include "nccl_model_constants.hpp"
#include "nccl_release_tables.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace collsim::stacks::nccl_detail {
namespace {

using algorithms::nccl::Algo;
using algorithms::nccl::Hw;
using algorithms::nccl::Proto;
using algorithms::nccl::ReleaseCode;
using core::CollectiveKind;

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

/// NVLS's and NVLSTree's bandwidth per channel (3.3) as the release priced it: 2.17.1 on the
/// ring graph's bwIntra; 2.18 the NVLS graph's bwIntra (two nodes at most) or bwInter; 2.19.1 the
/// smaller of the two (NVLSTree half the network's past two nodes; allgather and reduce_scatter
/// the node's (ppn - 1) / ppn share or 0.9 of the network's from 2.27.3); from 2.28.3 the
/// efficiency model, bounded by NVLSTree's per-channel caps.
double nvls_bandwidth(Algo a, CollectiveKind c, const NcclModelInputs& in, std::size_t cci,
                      std::size_t idx2) {
  const ReleaseCode r = in.release;
  const NcclGraph& g = in.nvls;
  const double ppn = static_cast<double>(in.ranks) / in.nodes;
  const bool ar = c == CollectiveKind::allreduce;
  if (!has_nvls_graph(r)) {
    return in.ring.bw_intra;
  }
  if (r < 21901) {
    return in.nodes <= 2 ? g.bw_intra : g.bw_inter;
  }
  if (r < 22803) {
    if (a == Algo::nvls_tree) {
      return std::min(g.bw_intra, in.nodes <= 2 ? g.bw_inter : g.bw_inter / 2);
    }
    if (!ar && r >= 22703) {
      return std::min(g.bw_intra * (ppn - 1) / ppn, g.bw_inter * 0.9);
    }
    return std::min(g.bw_intra, g.bw_inter);
  }
  const NcclTunerTables& tb = nccl_tuner_tables(r);
  double intra = g.bw_intra * tb.nvls_efficiency[cci] * (g.channels - 1) / g.channels;
  intra *= ar ? 2.0 : (ppn - 1) / ppn; // "AllReduce pipelines two operations"
  const double inter = g.bw_inter * ((in.nodes <= 2 && a == Algo::nvls_tree) ? 2 : 1);
  return std::min({intra, inter,
                   a == Algo::nvls_tree ? tb.nvls_tree_bw[cci][idx2]
                                        : std::numeric_limits<double>::infinity()});
}

} // namespace

NcclCost model_entry(CollectiveKind c, Algo a, Proto p, const NcclModelInputs& in) {
  NcclCost e;
  e.algo = a;
  e.proto = p;
  const ReleaseCode r = in.release;
  const NcclTunerTables& tb = nccl_tuner_tables(r);
  const std::uint32_t n = in.ranks;
  const std::uint32_t nodes = in.nodes;
  const double ppn = static_cast<double>(n) / nodes;
  const std::uint32_t ippn = n / nodes;
  const std::size_t cci = cc_index(r, in.compute_capability);
  const std::size_t idx2 = nodes <= 2 ? nodes - 1 : 2;
  const std::size_t idx1 = nodes == 1 ? cci : (in.cpu == NcclCpu::amd ? 1 : 0);
  const double ll_max_bw = tb.ll_max_bw[idx1][idx2];
  const NcclGraph& g = graph_of(in, a);
  const bool ar = c == CollectiveKind::allreduce;
  const bool agrs = c == CollectiveKind::allgather || c == CollectiveKind::reduce_scatter;
  const std::uint32_t nsteps = ar ? 2 * (n - 1) : agrs ? n - 1 : n;
  const bool collnet = a == Algo::collnet_direct || a == Algo::collnet_chain;
  const bool nvls = a == Algo::nvls || a == Algo::nvls_tree;

  // updateCollCostTable's skips and ncclTopoTuneModel's disables.
  if (nvls && !has_nvls(r)) {
    e.disabled =
        fmt::format("NCCL {} has no NVLS (from 2.17.1)", algorithms::nccl::release_name(r));
  } else if (a == Algo::nvls_tree && !has_nvls_graph(r)) {
    e.disabled =
        fmt::format("NCCL {} has no NVLSTree (from 2.18.1)", algorithms::nccl::release_name(r));
  } else if (a == Algo::pat && !has_pat(r)) {
    e.disabled = fmt::format("NCCL {} has no PAT (from 2.23.4)", algorithms::nccl::release_name(r));
  } else if (a == Algo::collnet_chain && !has_collnet_chain(r)) {
    e.disabled =
        fmt::format("NCCL {} has no CollNetChain (from 2.14.3)", algorithms::nccl::release_name(r));
  } else if (nvls && !in.nvls_support) {
    e.disabled = "no NVLS (needs an NVSwitch with NVLink SHARP, sm90+, more than 2 GPUs)";
  } else if (nvls && agrs && r >= 21801 && r < 21901) {
    e.disabled = "NVLS runs allreduce only in NCCL 2.18";
  } else if (nvls && agrs && nodes > 1 && r < 22602) {
    e.disabled = "NVLS allgather/reduce_scatter on one node only before NCCL 2.26.2";
  } else if (nvls && !ar && in.local_ranks > kMaxNvlsArity) {
    e.disabled = "more local ranks than NCCL_MAX_NVLS_ARITY (32)";
  } else if (a == Algo::nvls_tree && nodes == 1) {
    e.disabled = "NVLSTree is disabled on a single node";
  } else if (a == Algo::nvls && nodes > 1 && !(in.collnet_support && in.collnet_enable)) {
    e.disabled = "multi-node NVLS needs CollNet (SHARP, NCCL_COLLNET_ENABLE=1)";
  } else if (collnet && agrs && r < 22003) {
    e.disabled = "CollNet runs allreduce only before NCCL 2.20.3";
  } else if (collnet && !in.collnet_support) {
    e.disabled = "no CollNet (needs a reducing network switch and more than one node)";
  } else if (collnet && !in.collnet_enable) {
    e.disabled = "CollNet is off by default (NCCL_COLLNET_ENABLE=0)";
  } else if (collnet && in.local_ranks > kMaxDirectArity + 1) {
    e.disabled = "more than NCCL_MAX_DIRECT_ARITY+1 (8) local ranks";
  } else if (a == Algo::collnet_direct && !in.nvswitch && has_collnet_chain(r)) {
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
  std::uint32_t channels = g.channels;
  if (nvls) {
    bw = nvls_bandwidth(a, c, in, cci, idx2);
    if (!has_nvls_graph(r)) {
      channels = in.ring.channels; // 2.17.1 priced NVLS on the ring graph
    }
  }
  double bus = channels * bw;
  if (r < 21801) {
    // Caps removed in 2.18.1: 235 GB/s on Ampere, 370 on Hopper (2.17.1).
    if (cci == 1) {
      bus = std::min(bus, 235.0);
    }
    if (cci == 2 && r >= 21701) {
      bus = std::min(bus, 370.0);
    }
  }
  if (a == Algo::ring && p == Proto::ll) {
    const bool quarter = nodes > 1 || ar || c == CollectiveKind::reduce;
    bus = std::min(ll_max_bw, bus * (ring_ll_half(r) ? 0.5 : quarter ? 0.25 : 1.0 / 3.0));
  }
  if (a == Algo::ring && p == Proto::ll128) {
    const double f = (!latency_2_23(r) && ppn < 2) ? 0.7 : 0.92;
    bus = std::min(bus * f, g.channels * tb.ring_ll128_bw[cci][idx2]);
  }
  if (a == Algo::tree && ar) {
    bus = std::min(bus * 0.92, g.channels * tb.tree_bw[cci][idx2]);
  }
  if (a == Algo::tree && p == Proto::ll) {
    bus = std::min(bus / 3.8, ll_max_bw);
  }
  if (a == Algo::tree && p == Proto::ll128) {
    bus = std::min(bus * (nodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0),
                   g.channels * tb.tree_ll128_bw[cci][idx2]);
  }
  if (a == Algo::tree && in.tree_pattern_tree && r >= 21803) {
    bus *= 0.85;
  }
  if (a == Algo::pat) {
    bus *= r >= 22403 ? 0.75 : 0.85;
  }
  if (a == Algo::collnet_direct) {
    if (agrs) {
      bus = ppn * std::min(g.bw_intra, 0.9 * g.bw_inter);
    } else {
      double factor = ppn / g.channels; // GPU:NIC ratio
      factor -= (factor - 1) / 2;
      bus /= factor;
      if (in.compute_capability >= 90 && r >= 21801) {
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
  // busBw -> algBw: the ring's n / nsteps, NVLS's 3/4 (2.17.1, 2.18.1), 5/6 (2.18.3 - 2.28.2),
  // n / nsteps (2.28.3); 0.5 for the rest; none for the non-ring allgather/reduce_scatter (2.23.4;
  // before, they took the algorithm's factor too).
  if (!(a != Algo::ring && agrs && latency_2_23(r))) {
    double ratio = 0.5;
    if (a == Algo::ring || (nvls && r >= 22803)) {
      ratio = static_cast<double>(n) / nsteps;
    } else if (nvls) {
      ratio = r >= 21803 ? 5.0 / 6.0 : 0.75;
    }
    bus *= ratio;
  }
  e.bandwidth = bus;

  // Latency (3.4).
  const std::size_t ai = static_cast<std::size_t>(a);
  const std::size_t pi = proto_index(p);
  const auto hw_lat = [&](Hw hw, Algo algo) {
    return tb.hw_lat[static_cast<std::size_t>(hw)][static_cast<std::size_t>(algo)][pi];
  };
  const Hw intra_hw = g.type_intra == NcclPath::nvl ? Hw::nvlink : Hw::pci;
  double lat = tb.base_lat[ai][pi];
  double intra_lat = hw_lat(intra_hw, a);
  double inter_lat = 0.0;
  if (latency_2_18(r)) {
    inter_lat = hw_lat(Hw::net, (ppn == 1.0 && latency_2_23(r)) ? Algo::tree : a) + g.latency_inter;
    if (p == Proto::simple) {
      inter_lat += g.latency_inter; // flush
    }
  } else {
    // Before 2.18.1 the plugin's latency replaced the table's, and LL paid 1.8 x inside the node.
    inter_lat = g.latency_inter > 0.0 ? g.latency_inter : hw_lat(Hw::net, a);
    if (nodes > 1 && p == Proto::ll) {
      intra_lat *= 1.8;
    }
  }
  switch (a) {
  case Algo::ring:
    if (c == CollectiveKind::reduce || c == CollectiveKind::bcast) {
      const Hw hw = nodes == 1 ? intra_hw : Hw::net;
      double step = hw_lat(hw, Algo::ring);
      if (g.same_channels) {
        lat += step;
      } else {
        if (p == Proto::simple) {
          step = hw_lat(hw, Algo::tree);
        }
        lat += nsteps * step;
      }
    } else {
      double overhead = 0.0;
      if (nodes > 1 && latency_2_18(r)) {
        overhead = net_overhead_us(in.cpu, in.env.net_overhead_us) * (p == Proto::simple ? 3 : 1);
      }
      intra_lat = std::max(intra_lat, overhead);
      std::uint32_t inter_steps = 0;
      if (nodes > 1) {
        inter_steps = !ar ? nodes - 1 : latency_2_23(r) ? 2 * (nodes - 1) : 2 * nodes;
      }
      lat += (nsteps - std::min(nsteps, inter_steps)) * intra_lat + inter_steps * inter_lat;
    }
    break;
  case Algo::tree:
    if (ar) {
      lat += 2 * ((ippn - 1) * intra_lat + log2i(nodes) * inter_lat);
    }
    break;
  case Algo::collnet_direct:
    lat += 2 * (std::min<std::uint32_t>(1, ippn - 1) * intra_lat +
                (ippn - 1) * (r >= 21901 ? 0.4 : 0.5)) +
           inter_lat;
    break;
  case Algo::collnet_chain:
    lat += 2 * (ippn - 1) * intra_lat + (latency_2_18(r) ? inter_lat : 0.0);
    break;
  case Algo::nvls:
    if (r >= 21901) {
      lat = intra_lat + (nodes > 1 ? inter_lat : 0.0);
    } else if (nodes > 1) {
      lat += hw_lat(Hw::net, a); // 2.18: the base 23 us, plus the network row across nodes
    }
    break;
  case Algo::nvls_tree:
    if (r >= 21901) {
      lat += intra_lat + 2 * log2i(nodes) * inter_lat;
    } else {
      lat += 2 * (nodes - 1) * hw_lat(Hw::net, a);
    }
    break;
  case Algo::pat:
    if (agrs) {
      lat = 8.0 + log2i(nodes) * (inter_lat / 3.5) + n * 2.8;
    }
    break;
  }
  e.latency_us = lat;

  // Protocol enables: LL128 by default only on the architectures the release lists and on
  // NVLink-class paths (2.4): the NIC behind a PCIe switch (PXN from 2.17.1 on sm90+), the GPUs
  // over NVLink (NVLink through a GPU, NVB, from 2.18.3).
  if (p == Proto::ll128) {
    const std::uint32_t cc = in.compute_capability;
    bool on =
        (cc >= 90 && r >= 21701) ? g.type_inter <= NcclPath::pxn : g.type_inter <= NcclPath::pxb;
    on = on && g.type_intra <= (r >= 21803 ? NcclPath::nvb : NcclPath::nvl);
    on = on && ll128_arch_enabled(r, cc);
    if (!on) {
      e.disabled = ll128_arch_enabled(r, cc)
                       ? "LL128 is off by default on this path (needs NVLink inside the node and "
                         "a PCIe-switch path to the NIC)"
                       : fmt::format("LL128 is off by default on sm{} in NCCL {}", cc,
                                     algorithms::nccl::release_name(r));
      e.bandwidth = 0.0;
      e.time_us = -1.0;
    }
  }
  return e;
}

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
      in.cpu != NcclCpu::other && in.release >= 22902) {
    bw *= kTreeCorrection[pi][log_size];
  }
  // "Plateau effect of ring": from 2.18.1 past 64 B per channel and rank, x 1.9 before sm80
  // and 1.4 after; before, past nRanks / 16 x 64 KiB, x 1.9 (2.17.1: 1.5 on sm90).
  if (e.algo == Algo::ring && e.proto == Proto::simple && in.nodes > 1 && ar) {
    if (latency_2_18(in.release)) {
      if (bytes / (static_cast<std::uint64_t>(nc) * in.ranks) >= 64) {
        lat *= in.compute_capability < 80 ? 1.9 : 1.4;
      }
    } else if (bytes >= static_cast<std::uint64_t>(in.ranks) / 16 * 65536) {
      lat *= (in.release >= 21701 && in.compute_capability >= 90) ? 1.5 : 1.9;
    }
  }
  e.bandwidth = bw;
  e.latency_us = lat;
  e.time_us = lat + static_cast<double>(bytes) / (1000.0 * bw);
}

} // namespace collsim::stacks::nccl_detail
