// MPICH's collective selection JSON (MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE) from a tuning
// table (tuning_formats.hpp, format_mpich_json): formats.md e, and what MPICH 4.0.2 did with such
// files where formats.md is silent or wrong, noted at each piece. Split from tuning_formats.cpp.

#include "collsim/io/tuning_formats.hpp"

#include "tuning_formats_support.hpp"

#include "collsim/core/errors.hpp"

#include <cctype>
#include <fmt/format.h>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace collsim::io {
namespace {

using core::CollectiveKind;
using detail::group_blocks;
using detail::named_rules;

using OJson = nlohmann::ordered_json; // csel tries sibling keys in file order (formats.md e)

OJson mpich_leaf(const std::string& function) {
  OJson j = OJson::object();
  j["algorithm=" + function] = OJson::object();
  return j;
}

/// "Allreduce", "Reduce_scatter": the collective's part of MPICH's function names.
std::string mpich_coll(CollectiveKind c) {
  std::string s(core::to_string(c));
  s[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(s[0])));
  return s;
}

/// What MPICH runs where a collective is not tuned, or a tuned one's winner does not apply: per
/// collective MPICH looks up, an intra-communicator algorithm that takes any operation, count
/// and communicator size, one for MPI_IN_PLACE where the first cannot take it, and the
/// inter-communicator one ("" where the collective has one "allcomm" function). The names are
/// those of MPICH 4.0.2's built-in tree (maint/tuning/coll/mpir/generic.json as compiled into
/// Debian 12's libmpich12): a file without a collective MPICH looks up fails MPICH's assertion
/// "cnt" at the call, so every one is written.
struct MpichFallback {
  std::string_view collective;
  std::string_view intra;
  std::string_view inplace; ///< "" : intra takes MPI_IN_PLACE too
  /// "" : no comm_type split: `intra` is an allcomm function, or the collective exists on
  /// intra-communicators only (scan, exscan)
  std::string_view inter;
};
constexpr MpichFallback kMpichFallbacks[] = {
    {"allgather", "MPIR_Allgather_intra_ring", "",
     "MPIR_Allgather_inter_local_gather_remote_bcast"},
    {"allgatherv", "MPIR_Allgatherv_intra_ring", "",
     "MPIR_Allgatherv_inter_remote_gather_local_bcast"},
    {"allreduce", "MPIR_Allreduce_intra_recursive_doubling", "",
     "MPIR_Allreduce_inter_reduce_exchange_bcast"},
    {"alltoall", "MPIR_Alltoall_intra_pairwise", "MPIR_Alltoall_intra_pairwise_sendrecv_replace",
     "MPIR_Alltoall_inter_pairwise_exchange"},
    {"alltoallv", "MPIR_Alltoallv_intra_scattered",
     "MPIR_Alltoallv_intra_pairwise_sendrecv_replace", "MPIR_Alltoallv_inter_pairwise_exchange"},
    {"alltoallw", "MPIR_Alltoallw_intra_scattered",
     "MPIR_Alltoallw_intra_pairwise_sendrecv_replace", "MPIR_Alltoallw_inter_pairwise_exchange"},
    {"barrier", "MPIR_Barrier_intra_dissemination", "", "MPIR_Barrier_inter_bcast"},
    {"bcast", "MPIR_Bcast_intra_binomial", "", "MPIR_Bcast_inter_remote_send_local_bcast"},
    {"exscan", "MPIR_Exscan_intra_recursive_doubling", "", ""},
    {"gather", "MPIR_Gather_intra_binomial", "", "MPIR_Gather_inter_linear"},
    {"gatherv", "MPIR_Gatherv_allcomm_linear", "", ""},
    {"reduce", "MPIR_Reduce_intra_binomial", "", "MPIR_Reduce_inter_local_reduce_remote_send"},
    {"reduce_scatter", "MPIR_Reduce_scatter_intra_recursive_doubling", "",
     "MPIR_Reduce_scatter_inter_remote_reduce_local_scatter"},
    {"reduce_scatter_block", "MPIR_Reduce_scatter_block_intra_recursive_doubling", "",
     "MPIR_Reduce_scatter_block_inter_remote_reduce_local_scatter"},
    {"scan", "MPIR_Scan_intra_recursive_doubling", "", ""},
    {"scatter", "MPIR_Scatter_intra_binomial", "", "MPIR_Scatter_inter_linear"},
    {"scatterv", "MPIR_Scatterv_allcomm_linear", "", ""},
    {"neighbor_allgather", "MPIR_Neighbor_allgather_allcomm_nb", "", ""},
    {"neighbor_allgatherv", "MPIR_Neighbor_allgatherv_allcomm_nb", "", ""},
    {"neighbor_alltoall", "MPIR_Neighbor_alltoall_allcomm_nb", "", ""},
    {"neighbor_alltoallv", "MPIR_Neighbor_alltoallv_allcomm_nb", "", ""},
    {"neighbor_alltoallw", "MPIR_Neighbor_alltoallw_allcomm_nb", "", ""},
    {"ibarrier", "MPIR_Ibarrier_intra_sched_recursive_doubling", "",
     "MPIR_Ibarrier_inter_sched_bcast"},
    {"iallreduce", "MPIR_Iallreduce_intra_sched_recursive_doubling", "",
     "MPIR_Iallreduce_inter_sched_remote_reduce_local_bcast"},
    {"iallgather", "MPIR_Iallgather_intra_sched_ring", "",
     "MPIR_Iallgather_inter_sched_local_gather_remote_bcast"},
    {"iallgatherv", "MPIR_Iallgatherv_intra_sched_ring", "",
     "MPIR_Iallgatherv_inter_sched_remote_gather_local_bcast"},
    {"ibcast", "MPIR_Ibcast_intra_sched_binomial", "", "MPIR_Ibcast_inter_sched_flat"},
    {"ireduce", "MPIR_Ireduce_intra_sched_binomial", "",
     "MPIR_Ireduce_inter_sched_local_reduce_remote_send"},
    {"ireduce_scatter", "MPIR_Ireduce_scatter_intra_sched_recursive_doubling", "",
     "MPIR_Ireduce_scatter_inter_sched_remote_reduce_local_scatterv"},
    {"ireduce_scatter_block", "MPIR_Ireduce_scatter_block_intra_sched_recursive_doubling", "",
     "MPIR_Ireduce_scatter_block_inter_sched_remote_reduce_local_scatterv"},
    {"igather", "MPIR_Igather_intra_sched_binomial", "", "MPIR_Igather_inter_sched_long"},
    {"iscatter", "MPIR_Iscatter_intra_sched_binomial", "", "MPIR_Iscatter_inter_sched_linear"},
    {"igatherv", "MPIR_Igatherv_allcomm_sched_linear", "", ""},
    {"iscatterv", "MPIR_Iscatterv_allcomm_sched_linear", "", ""},
    {"iexscan", "MPIR_Iexscan_intra_sched_recursive_doubling", "", ""},
    {"ialltoall", "MPIR_Ialltoall_intra_sched_pairwise", "MPIR_Ialltoall_intra_sched_inplace",
     "MPIR_Ialltoall_inter_sched_pairwise_exchange"},
    {"ialltoallv", "MPIR_Ialltoallv_intra_sched_blocked", "MPIR_Ialltoallv_intra_sched_inplace",
     "MPIR_Ialltoallv_inter_sched_pairwise_exchange"},
    {"ialltoallw", "MPIR_Ialltoallw_intra_sched_blocked", "MPIR_Ialltoallw_intra_sched_inplace",
     "MPIR_Ialltoallw_inter_sched_pairwise_exchange"},
    {"iscan", "MPIR_Iscan_intra_sched_recursive_doubling", "", ""},
    {"ineighbor_allgather", "MPIR_Ineighbor_allgather_allcomm_sched_linear", "", ""},
    {"ineighbor_allgatherv", "MPIR_Ineighbor_allgatherv_allcomm_sched_linear", "", ""},
    {"ineighbor_alltoall", "MPIR_Ineighbor_alltoall_allcomm_sched_linear", "", ""},
    {"ineighbor_alltoallv", "MPIR_Ineighbor_alltoallv_allcomm_sched_linear", "", ""},
    {"ineighbor_alltoallw", "MPIR_Ineighbor_alltoallw_allcomm_sched_linear", "", ""},
};

/// MPICH after 4.0 renamed the barrier's dissemination to k_dissemination (algorithms.md 2.2).
MpichFallback versioned(MpichFallback f, core::MpichVersion version) {
  if (f.collective == "barrier" && version != core::MpichVersion::v4_0) {
    f.intra = "MPIR_Barrier_intra_k_dissemination";
  }
  return f;
}

MpichFallback mpich_fallback(std::string_view collective, core::MpichVersion version) {
  for (const auto& f : kMpichFallbacks) {
    if (f.collective == collective) {
      return versioned(f, version);
    }
  }
  throw core::InternalError(fmt::format("no MPICH fallback for {}", collective));
}

/// `tuned` under MPI_IN_PLACE's guard where the fallback has one.
OJson mpich_intra(const MpichFallback& f, OJson tuned) {
  if (f.inplace.empty()) {
    return tuned;
  }
  OJson j = OJson::object();
  j["is_sendbuf_inplace=yes"] = mpich_leaf(std::string(f.inplace));
  j["is_sendbuf_inplace=no"] = std::move(tuned);
  return j;
}

OJson mpich_fallback_tree(const MpichFallback& f) {
  const OJson intra = mpich_intra(f, mpich_leaf(std::string(f.intra)));
  if (f.inter.empty()) {
    return intra;
  }
  OJson j = OJson::object();
  j["comm_type=intra"] = intra;
  j["comm_type=inter"] = mpich_leaf(std::string(f.inter));
  return j;
}

/// The algorithm's leaf, guarded where MPICH's algorithm has a precondition its built-in tree
/// checks: reduce_scatter_allgather (allreduce) and reduce_scatter_gather (reduce) need
/// count >= the largest power of two not above p (algorithms.md 2.2); below, recursive
/// doubling and binomial run, as MPICH's tree says.
OJson mpich_algorithm(CollectiveKind c, const std::string& name, core::MpichVersion version) {
  const std::string function = fmt::format("MPIR_{}_intra_{}", mpich_coll(c), name);
  const bool needs_pow2_count =
      (c == CollectiveKind::allreduce && name == "reduce_scatter_allgather") ||
      (c == CollectiveKind::reduce && name == "reduce_scatter_gather");
  if (!needs_pow2_count) {
    return mpich_leaf(function);
  }
  OJson j = OJson::object();
  j["count<pow2"] = mpich_leaf(std::string(mpich_fallback(core::to_string(c), version).intra));
  j["count=any"] = mpich_leaf(function);
  return j;
}

/// One rank count's size chain. csel's message sizes (formats.md e): avg_msg_size is dtype
/// size x count for allreduce, bcast and reduce (S) and x sendcount for alltoall (S / p);
/// total_msg_size, summed over ranks, for the others (S).
OJson mpich_block(CollectiveKind c, const core::TuneBlock& b, core::MpichVersion version) {
  const auto rules = named_rules(b, "mpich", {});
  if (rules.size() == 1 || c == CollectiveKind::barrier) {
    return mpich_algorithm(c, rules.front().name,
                           version); // barrier: no size, the first range decides
  }
  const bool avg = c == CollectiveKind::allreduce || c == CollectiveKind::bcast ||
                   c == CollectiveKind::reduce || c == CollectiveKind::alltoall;
  const std::string key = avg ? "avg_msg_size" : "total_msg_size";
  OJson j = OJson::object();
  std::uint64_t last = 0;
  for (std::size_t i = 0; i + 1 < rules.size(); ++i) {
    std::uint64_t next = rules[i + 1].bytes;
    if (c == CollectiveKind::alltoall) {
      next /= b.ranks;
    }
    if (next <= last) {
      continue; // two boundaries within one per-rank byte: the later rule decides
    }
    j[fmt::format("{}<{}", key, next)] = mpich_algorithm(c, rules[i].name, version);
    last = next;
  }
  j[key + "=any"] = mpich_algorithm(c, rules.back().name, version);
  return j;
}

/// A tuned collective's tree (yes/no conditions are written as pairs: MPICH 4.0.2 takes "=any"
/// only after size, count and hierarchy keys, and aborts with "unknown key is_op_built_in=any"):
/// operations MPICH's tuned algorithms cannot take go to the
/// fallback first (non-built-in operations for allreduce and reduce, non-commutative ones for
/// reduce_scatter, as MPICH's own tree does), then the comm_size chain: the block of the largest
/// swept rank count not above the communicator's size, the first block below it.
OJson mpich_tuned(CollectiveKind c, const std::vector<const core::TuneBlock*>& blocks,
                  core::MpichVersion version) {
  const MpichFallback f = mpich_fallback(core::to_string(c), version);
  OJson sizes = OJson::object();
  if (blocks.size() == 1) {
    sizes = mpich_block(c, *blocks.front(), version);
  } else {
    for (std::size_t i = 0; i + 1 < blocks.size(); ++i) {
      sizes[fmt::format("comm_size<{}", blocks[i + 1]->ranks)] =
          mpich_block(c, *blocks[i], version);
    }
    sizes["comm_size=any"] = mpich_block(c, *blocks.back(), version);
  }
  OJson guarded = OJson::object();
  if (c == CollectiveKind::allreduce || c == CollectiveKind::reduce) {
    guarded["is_op_built_in=no"] = mpich_leaf(std::string(f.intra));
    guarded["is_op_built_in=yes"] = std::move(sizes);
  } else if (c == CollectiveKind::reduce_scatter) {
    guarded["is_commutative=no"] = mpich_leaf(std::string(f.intra));
    guarded["is_commutative=yes"] = std::move(sizes);
  } else {
    guarded = std::move(sizes);
  }
  OJson j = OJson::object();
  j["comm_type=intra"] = mpich_intra(f, std::move(guarded));
  j["comm_type=inter"] = mpich_leaf(std::string(f.inter));
  return j;
}

} // namespace

std::string format_mpich_json(const core::TuneTable& table, core::MpichVersion version) {
  const auto groups = group_blocks(table);
  std::map<std::string_view, OJson> tuned;
  for (const auto& [collective, blocks] : groups) {
    tuned[core::to_string(collective)] = mpich_tuned(collective, blocks, version);
  }
  OJson out = OJson::object();
  // Tuned collectives first, in the table's order, then the rest in MPICH's own order.
  for (const auto& [collective, blocks] : groups) {
    out["collective=" + std::string(core::to_string(collective))] =
        tuned.at(core::to_string(collective));
  }
  for (const auto& f : kMpichFallbacks) {
    if (tuned.find(f.collective) == tuned.end()) {
      out["collective=" + std::string(f.collective)] = mpich_fallback_tree(versioned(f, version));
    }
  }
  return out.dump(2) + "\n";
}

} // namespace collsim::io
