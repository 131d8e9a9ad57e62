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

#include "nccl_cost_model.hpp"
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
  const ReleaseCode r = in.release;
  std::uint32_t nc = in.comm_channels;
  if (in.collnet_enable && in.collnet_support &&
      in.collnet_chain.bw_intra > in.collnet_chain.bw_inter && in.ranks > in.nodes) {
    nc = std::min(max_channels(r), nc + nc / 2);
  }
  // connect.cc, "4 compute channels per search channel to reach peak BW on <8 PPN": from 2.18.1
  // on sm90 while 2 nc fit MAXCHANNELS, from 2.20.3 while nc < 16, from 2.25.1 on sm90 and later.
  const bool arch = r >= 22501 ? in.compute_capability >= 90 : in.compute_capability == 90;
  const bool room = r >= 22003 ? nc < 16 : 2 * nc <= max_channels(r);
  if (r >= 21801 && arch && in.nodes > 1 && in.ring.bw_intra > 45.0 && room) {
    nc *= 2;
  }
  return nc;
}

namespace {

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
  if ((a == Algo::tree && in.release >= 22203) || a == Algo::pat) {
    nt = kMaxThreads; // "Tree now uses all threads always" (2.22.3)
  }
  if (in.env.min_channels > 0) {
    nc = std::max(nc, in.env.min_channels); // NCCL_MIN_NCHANNELS
  }
  if (in.env.max_channels > 0) {
    nc = std::min(nc, in.env.max_channels); // NCCL_MAX_NCHANNELS
  }
  out.channels = std::clamp<std::uint32_t>(nc, 1, max_channels(in.release));
  out.threads = nt;
}

/// The collsim algorithm (and parameters) that simulates `out`'s NCCL algorithm and protocol.
void name_algorithm(NcclChoice& out, const NcclModelInputs& in) {
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
    if (const auto chunk = nvls_tree_chunk_param(in)) {
      out.params["max_chunk"] = std::to_string(*chunk);
    }
    break;
  case Algo::pat:
    out.algorithm = "pat";
    out.params = {{"protocol", "simple"}, {"channels", channels}};
    break;
  case Algo::nvls: out.algorithm = "nvls"; break;
  case Algo::collnet_direct: out.algorithm = "collnet_direct"; break;
  case Algo::collnet_chain: out.algorithm = "collnet_chain"; break;
  }
  if (a == Algo::ring || a == Algo::tree || a == Algo::pat) {
    if (const auto buffer = buffer_param(in, p)) { // NCCL_BUFFSIZE and its LL variants
      out.params["buffsize"] = std::to_string(*buffer);
    }
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
  out.release = in.release;
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
      if (const auto chunk = p2p_chunk_param(in)) { // NCCL_P2P_*_CHUNKSIZE
        out.params["chunk"] = std::to_string(*chunk);
      }
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

  name_algorithm(out, in);
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
  name_algorithm(*out, named);
  return out;
}

std::optional<std::uint64_t> p2p_chunk_param(const NcclModelInputs& in) {
  if (in.nodes > 1) {
    return in.env.p2p_net_chunk;
  }
  return in.nvlink ? in.env.p2p_nvl_chunk : in.env.p2p_pci_chunk;
}

std::optional<std::uint64_t> buffer_param(const NcclModelInputs& in, Proto p) {
  return in.env.buffer[static_cast<std::size_t>(p)];
}

std::optional<std::uint64_t> nvls_tree_chunk_param(const NcclModelInputs& in) {
  // nvls_tree's `max_chunk` of 0 is NCCL 2.21.5's default (algorithms/nccl_support.hpp).
  const std::uint64_t chunk = nvls_tree_chunk(in);
  if (chunk == 0 || chunk == algorithms::nccl::default_nvls_tree_chunk(in.nodes)) {
    return std::nullopt;
  }
  return chunk;
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
