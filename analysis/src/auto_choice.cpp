#include "collsim/analysis/auto_choice.hpp"

#include "collsim/analysis/nccl_defaults.hpp"
#include "collsim/analysis/ompi_defaults.hpp"
#include "collsim/analysis/simulate.hpp"
#include "collsim/core/layout.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace collsim::analysis {

bool ranks_on_gpus(const core::Topology& topo) {
  if (topo.is_full_mesh() || topo.rank_count() == 0) {
    return false;
  }
  for (core::Rank r = 0; r < topo.rank_count(); ++r) {
    if (topo.devices()[topo.device_of(r)].kind != core::DeviceKind::gpu) {
      return false;
    }
  }
  return true;
}

AutoLibrary auto_library(const core::Topology& topo, core::CollectiveKind collective) {
  return ranks_on_gpus(topo) && collective != core::CollectiveKind::barrier ? AutoLibrary::nccl
                                                                            : AutoLibrary::ompi;
}

UccTeam ucc_team(const core::Scenario& scenario, const core::Topology& topo, std::uint32_t ranks) {
  UccTeam team;
  team.ranks = ranks;
  const bool gpus = ranks_on_gpus(topo) && ranks <= topo.rank_count();
  team.device_buffers = scenario.buffers.empty() ? gpus : scenario.buffers == "device" && gpus;
  team.one_node = ranks > 0 && ranks <= topo.rank_count() && !topo.is_full_mesh();
  for (core::Rank r = 1; team.one_node && r < ranks; ++r) {
    team.one_node =
        topo.devices()[topo.device_of(r)].node == topo.devices()[topo.device_of(0)].node;
  }
  return team;
}

namespace {

/// UCC_TL_CUDA_MAX_PEERS (src/components/tl/cuda/tl_cuda.h, v1.1.0).
constexpr std::uint32_t kTlCudaMaxPeers = 8;
/// The k-nomial radices of tl/ucp (UCC_TL_UCP_*_KN_RADIX, src/components/tl/ucp/tl_ucp.c).
constexpr std::uint32_t kUccRadix = 4;

LibraryChoice ucc_choice(std::string algorithm, std::string library_name, std::string reason) {
  LibraryChoice c;
  c.library = "UCC 1.1 tl/ucp (default selection)";
  c.algorithm = std::move(algorithm);
  c.library_name = std::move(library_name);
  c.reason = std::move(reason);
  return c;
}

/// The knomial bcast, reduce, gather and barrier take min(radix, team size) (bcast.c, reduce.c,
/// gather.c, barrier_knomial.c); collsim's generators take at least 2. (sag_knomial lowers its own,
/// as UCC's ucc_knomial_pattern_get_min_radix does.)
std::string tree_radix(const UccTeam& team) {
  return std::to_string(std::max<std::uint32_t>(2, std::min(kUccRadix, team.ranks)));
}

} // namespace

std::optional<LibraryChoice> ucc11_default(core::CollectiveKind collective, core::Bytes bytes,
                                           const UccTeam& team, std::string* why) {
  using core::CollectiveKind;
  const auto none = [why](std::string reason) -> std::optional<LibraryChoice> {
    if (why != nullptr) {
      *why = std::move(reason);
    }
    return std::nullopt;
  };
  const bool tl_cuda =
      team.device_buffers && team.one_node && team.ranks >= 2 && team.ranks <= kTlCudaMaxPeers;
  if (tl_cuda &&
      (collective == CollectiveKind::allgather || collective == CollectiveKind::alltoall ||
       collective == CollectiveKind::reduce_scatter)) {
    return none(fmt::format("UCC's tl/cuda (score 40 over tl/ucp's 10) runs {} of GPU buffers on "
                            "one node, which collsim does not model: Open MPI 4.1's rules stand in",
                            core::to_string(collective)));
  }
  switch (collective) {
  case CollectiveKind::allreduce: {
    // UCC_TL_UCP_ALLREDUCE_DEFAULT_ALG_SELECT_STR "allreduce:0-4k:@0#allreduce:4k-inf:@1" with
    // UCC_TL_UCP_ALLREDUCE_KN_RADIX and ALLREDUCE_SRA_KN_RADIX both 4 (tl/ucp/allreduce/
    // allreduce.h and tl_ucp.c in UCC v1.1.0).
    LibraryChoice c = bytes.value < 4096
                          ? ucc_choice("recursive_knomial", "allreduce knomial (radix 4)",
                                       "allreduce:0-4k:@0 (knomial)")
                          : ucc_choice("sra_knomial", "allreduce sra_knomial (radix 4)",
                                       "allreduce:4k-inf:@1 (sra_knomial)");
    c.params = {{"radix", std::to_string(kUccRadix)}};
    return c;
  }
  case CollectiveKind::allgather:
    // allgather.c: ucc_tl_ucp_allgather_init runs the ring (no selection string in v1.1.0).
    return ucc_choice("ring", "allgather ring", "tl/ucp's only allgather (ring)");
  case CollectiveKind::alltoall:
    // UCC_TL_UCP_ALLTOALL_DEFAULT_ALG_SELECT_STR "alltoall:0-inf:@0": pairwise, with
    // ALLTOALL_PAIRWISE_NUM_POSTS 1 (one send and one receive in flight).
    return ucc_choice("pairwise", "alltoall pairwise (1 post)", "alltoall:0-inf:@0 (pairwise)");
  case CollectiveKind::bcast: {
    // UCC_TL_UCP_BCAST_DEFAULT_ALG_SELECT_STR "bcast:0-32k:@0#bcast:32k-inf:@1": the knomial
    // tree, then the scatter-allgather knomial (BCAST_KN_RADIX and BCAST_SAG_KN_RADIX 4).
    LibraryChoice c = bytes.value < 32768 ? ucc_choice("knomial", "bcast knomial (radix 4)",
                                                       "bcast:0-32k:@0 (knomial)")
                                          : ucc_choice("sag_knomial", "bcast sag_knomial (radix 4)",
                                                       "bcast:32k-inf:@1 (sag_knomial)");
    c.params = {{"radix", bytes.value < 32768 ? tree_radix(team) : std::to_string(kUccRadix)}};
    return c;
  }
  case CollectiveKind::reduce: {
    LibraryChoice c =
        ucc_choice("knomial", "reduce knomial (radix 4)", "tl/ucp's reduce (knomial)");
    c.params = {{"radix", tree_radix(team)}};
    return c;
  }
  case CollectiveKind::barrier: {
    // barrier_knomial.c: a recursive k-nomial exchange of empty messages among the largest
    // power of the radix; the other ranks check in with a proxy before and are released after
    // (collsim's recexch: the same exchange, MPICH's choice of proxies).
    LibraryChoice c =
        ucc_choice("recexch", "barrier knomial (radix 4)", "tl/ucp's barrier (knomial)");
    c.params = {{"radix", tree_radix(team)}};
    return c;
  }
  case CollectiveKind::reduce_scatter:
    // UCC_TL_UCP_REDUCE_SCATTER_DEFAULT_ALG_SELECT_STR "reduce_scatter:@ring", two inverted rings
    // at once (REDUCE_SCATTER_RING_BIDIRECTIONAL y, tl_ucp.c).
    return ucc_choice("ring_bidirectional", "reduce_scatter ring (bidirectional)",
                      "reduce_scatter:@ring (two inverted rings)");
  case CollectiveKind::gather: {
    // gather.c: the knomial tree, its only gather (GATHER_KN_RADIX 4, lowered to the team size).
    LibraryChoice c =
        ucc_choice("knomial", "gather knomial (radix 4)", "tl/ucp's gather (knomial)");
    c.params = {{"radix", tree_radix(team)}};
    return c;
  }
  default:
    // UCC_TL_UCP_SUPPORTED_COLLS (tl_ucp.h): coll/ucc passes anything else to the next
    // component, coll/tuned.
    return none(fmt::format("UCC 1.1 has no {}: coll/ucc passes it to coll/tuned",
                            core::to_string(collective)));
  }
}

std::optional<LibraryChoice> hcoll_default(core::CollectiveKind collective) {
  if (collective != core::CollectiveKind::allreduce) {
    return std::nullopt;
  }
  // coll/hcoll (priority 90) takes MPI_Allreduce; HCOLL runs its hierarchical allreduce at
  // every size (allreduce_hcoll.cpp: coll/ml's fragment pipeline at its defaults).
  LibraryChoice c;
  c.library = "HCOLL (HPC-X, coll/hcoll)";
  c.algorithm = "hcoll";
  c.library_name = "hcoll allreduce (basesmuma fan-in, ptpcoll recursive doubling, fan-out)";
  c.reason = "coll/hcoll priority 90 over coll/tuned";
  return c;
}

std::string nccl_v_refusal(core::CollectiveKind collective) {
  if (collective != core::CollectiveKind::allgather &&
      collective != core::CollectiveKind::reduce_scatter) {
    return {};
  }
  // Uneven shards are padded, or sent as grouped point-to-point, by the framework above NCCL.
  return fmt::format("NCCL has no {} (its {} takes one count for every rank)",
                     core::collective_display_name(collective, true), core::to_string(collective));
}

std::optional<LibraryChoice> mpich4_default(core::CollectiveKind collective, bool varying) {
  if (varying && collective == core::CollectiveKind::alltoall) {
    // MPICH maint/tuning/coll/mpir/generic.json: an alltoallv not in place runs
    // MPIR_Alltoallv_intra_scattered (ch4's composition alpha calls MPIR's selection).
    LibraryChoice c;
    c.library = "MPICH 4 (ch4)";
    c.algorithm = "scattered";
    c.library_name = "MPIR_Alltoallv_intra_scattered";
    c.reason = "mpir generic.json: alltoallv, is_sendbuf_inplace=no (batches of "
               "MPIR_CVAR_ALLTOALL_THROTTLE = 32 peers)";
    return c;
  }
  if (varying || collective != core::CollectiveKind::allreduce) {
    return std::nullopt;
  }
  // MPICH v4.2.3 maint/tuning/coll/ch4/generic.json: composition alpha on a communicator
  // spanning nodes, gamma inside one node (commutative operations); allreduce_mpich_ch4.cpp
  // takes both and MPIR's choice among the node roots.
  LibraryChoice c;
  c.library = "MPICH 4 (ch4)";
  c.algorithm = "mpich_ch4";
  c.library_name = "MPIDI_Allreduce_intra_composition_alpha (gamma on one node)";
  c.reason = "ch4 generic.json: commutative operation on the parent communicator";
  return c;
}

std::optional<LibraryChoice> han_default(const core::Topology& topo,
                                         core::CollectiveKind collective, std::uint32_t ranks,
                                         core::Bytes bytes, const algorithms::Registry& registry) {
  if (collective != core::CollectiveKind::allreduce || topo.is_full_mesh() || ranks < 2) {
    return std::nullopt;
  }
  std::map<std::uint32_t, std::uint32_t> per_node;
  for (core::Rank r = 0; r < ranks; ++r) {
    ++per_node[topo.devices()[topo.device_of(r)].node];
  }
  const std::uint32_t ppn = per_node.begin()->second;
  const bool uniform = std::all_of(per_node.begin(), per_node.end(),
                                   [ppn](const auto& kv) { return kv.second == ppn; });
  if (per_node.size() < 2 || !uniform) {
    return std::nullopt; // coll_han_module.c: no HAN on one node; uneven nodes fall back
  }
  // Inside a node coll/tuned's fixed rules for the node's ranks and one 64 KiB segment
  // (coll_han allreduce_segsize; the low module is tuned).
  const auto low = [&](core::CollectiveKind c, const char* fallback) {
    OmpiCall call;
    call.collective = c;
    call.ranks = ppn;
    call.bytes = core::Bytes{std::min<std::uint64_t>(bytes.value, 65536)};
    const auto choice = ompi41_default(call, registry);
    if (!choice) {
      return std::string(fallback);
    }
    for (const auto& p : registry.find(core::CollectiveKind::allreduce, "han").params) {
      if (p.name == (c == core::CollectiveKind::reduce ? "low_reduce" : "low_bcast") &&
          std::find(p.choices.begin(), p.choices.end(), choice->algorithm) != p.choices.end()) {
        return choice->algorithm;
      }
    }
    return std::string(fallback);
  };
  LibraryChoice c;
  c.library = "Open MPI 5.0 coll/han";
  c.algorithm = "han";
  c.params = {{"low_reduce", low(core::CollectiveKind::reduce, "binomial")},
              {"low_bcast", low(core::CollectiveKind::bcast, "binomial")}};
  c.library_name = "han allreduce (tuned inside nodes, libnbc between them)";
  c.reason = fmt::format("coll/han priority 35 over coll/tuned on {} nodes of {} ranks",
                         per_node.size(), ppn);
  return c;
}

std::optional<LibraryChoice> auto_choice(const core::Scenario& scenario, const core::Topology& topo,
                                         core::CollectiveKind collective, std::uint32_t ranks,
                                         core::Bytes bytes, const algorithms::Registry& registry,
                                         std::string* why, std::uint32_t element_bytes,
                                         bool varying) {
  stacks::Chooser chooser = stacks::Chooser::machine;
  if (!scenario.stack.empty()) {
    chooser = stacks().find(scenario.stack).info().chooser;
  }
  std::string stand_in;
  std::string stand_in_why;
  if (chooser == stacks::Chooser::ucc) {
    if (varying) {
      stand_in_why = fmt::format("UCC's {}v is not modelled: Open MPI 4.1's rules stand in",
                                 core::to_string(collective));
    } else if (auto c = ucc11_default(collective, bytes, ucc_team(scenario, topo, ranks),
                                      &stand_in_why)) {
      return c;
    }
    // Where UCC runs what collsim does not model, Open MPI's rules stand in.
    chooser = stacks::Chooser::ompi41;
    stand_in = "UCC";
  } else if (chooser == stacks::Chooser::hcoll) {
    if (auto c = hcoll_default(collective)) {
      return c;
    }
    chooser = stacks::Chooser::ompi41;
    stand_in = "HCOLL";
  } else if (chooser == stacks::Chooser::mpich4) {
    if (auto c = mpich4_default(collective, varying)) {
      if (!varying) {
        // MPIR's choice among the node roots compares the element count with their number.
        c->params["element_bytes"] = std::to_string(element_bytes);
      }
      return c;
    }
    chooser = stacks::Chooser::ompi41;
    stand_in = "MPICH";
  } else if (chooser == stacks::Chooser::ompi50) {
    if (auto c = han_default(topo, collective, ranks, bytes, registry)) {
      return c;
    }
    // Across nodes HAN runs the other collectives too; on one node (or uneven nodes) coll/tuned's
    // rules are right, and v5.0.9's are 4.1's.
    chooser = stacks::Chooser::ompi41;
    if (collective != core::CollectiveKind::allreduce) {
      stand_in = "coll/han";
    }
  }
  const bool nccl =
      chooser == stacks::Chooser::nccl ||
      (chooser == stacks::Chooser::machine && auto_library(topo, collective) == AutoLibrary::nccl);
  if (nccl) {
    if (std::string refusal = varying ? nccl_v_refusal(collective) : ""; !refusal.empty()) {
      if (why != nullptr) {
        *why = std::move(refusal);
      }
      return std::nullopt;
    }
    const auto choice = nccl_default(collective, ranks, bytes,
                                     nccl_inputs(scenario.topology, scenario.nccl, topo, ranks));
    if (choice) {
      return nccl_library_choice(*choice);
    }
    if (why != nullptr) {
      *why = fmt::format("NCCL has no {}", core::to_string(collective));
    }
    return std::nullopt;
  }
  OmpiCall call;
  call.collective = collective;
  call.ranks = ranks;
  call.bytes = bytes;
  call.element_bytes = element_bytes;
  call.varying = varying;
  call.tuning = stacks::read_ompi_tuning(&scenario.mpi);
  auto choice = ompi41_default(call, registry);
  if (choice && !stand_in.empty()) {
    choice->reason +=
        stand_in_why.empty()
            ? fmt::format(" ({}'s own selection for {} is not modelled; Open MPI 4.1's rules "
                          "stand in)",
                          stand_in, core::to_string(collective))
            : fmt::format(" ({})", stand_in_why);
  }
  if (!choice && why != nullptr) {
    *why = fmt::format("Open MPI's {} of {} B over {} ranks has no uniform form collsim can "
                       "generate (the size must be a multiple of the ranks)",
                       core::to_string(collective), bytes.value, ranks);
  }
  return choice;
}

} // namespace collsim::analysis
