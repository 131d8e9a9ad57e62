// Open MPI 4.1's choice for the v-collectives (issue 21), re-implemented from its sources (facts
// transcribed, no code copied; see ompi_defaults.cpp for the uniform collectives):
// - ompi/mca/coll/tuned/coll_tuned_decision_fixed.c (v4.1.6):
//   ompi_coll_tuned_alltoallv_intra_dec_fixed ("we can only optimize based on com size":
//   1 basic_linear, 2 pairwise); ompi_coll_tuned_allgatherv_intra_dec_fixed (on
//   per_rank_dsize = total_dsize / p: 1 default, 2 bruck, 3 ring, 4 neighbor, 5 two_proc);
//   ompi_coll_tuned_reduce_scatter_intra_dec_fixed (MPI_Reduce_scatter, on the counts' total).
// - coll/tuned implements neither MPI_Gatherv nor MPI_Scatterv: coll/basic's linear ones run
//   (ompi_coll_basic_gatherv_intra, ompi_coll_basic_scatterv_intra).
// - coll_base_allgatherv.c: allgatherv "default" is a gatherv to rank 0 then a broadcast of the
//   vector (collsim's linear allgather, whose broadcast is linear where Open MPI's uses its bcast
//   rules); neighbor exchange on odd p runs the ring.

#include "collsim/analysis/ompi_defaults.hpp"

#include "collsim/core/errors.hpp"
#include "ompi_rule_table.hpp"

#include <fmt/format.h>

#include <string_view>
#include <vector>

namespace collsim::analysis {
namespace {

using core::CollectiveKind;
using detail::p_below;
using detail::p_equals;
using detail::p_rest;
using detail::Row;

constexpr std::uint64_t kKiB = 1024;
constexpr std::uint64_t kMiB = 1024 * kKiB;

std::vector<Row> alltoallv_rows() {
  return {p_below(4, {}, 2),   p_below(64, {}, 1),   p_below(128, {}, 2),
          p_below(256, {}, 1), p_below(1024, {}, 2), p_rest({}, 1)};
}

std::vector<Row> allgatherv_rows() {
  return {
      p_equals(2, {{2 * kKiB, 3}, {4 * kKiB, 5}, {8 * kKiB, 3}}, 5),
      p_below(8, {{256, 1}, {4 * kKiB, 4}, {8 * kKiB, 3}, {16 * kKiB, 4}, {256 * kKiB, 2}}, 4),
      p_below(16, {{kKiB, 1}}, 2),
      p_below(32, {{128, 1}, {256 * kKiB, 2}}, 3),
      p_below(64, {{256, 1}, {8 * kKiB, 2}}, 3),
      p_below(128, {{256, 1}, {4 * kKiB, 2}}, 3),
      p_below(256, {{kKiB, 2}, {64 * kKiB, 4}}, 3),
      p_below(512, {{kKiB, 2}}, 3),
      p_below(1024, {{512, 2}, {kKiB, 1}, {4 * kKiB, 2}, {kMiB, 4}}, 3),
      p_rest({{4 * kKiB, 2}}, 4),
  };
}

struct VAlgorithm {
  int id;
  std::string_view ompi_name; ///< as `ompi_info --all` lists coll_tuned_<coll>v_algorithm
  std::string_view collsim;   ///< collsim's algorithm
};

std::vector<VAlgorithm> v_algorithms(CollectiveKind c) {
  switch (c) {
  case CollectiveKind::alltoall:
    return {{1, "basic_linear", "linear"}, {2, "pairwise", "pairwise"}};
  case CollectiveKind::allgather:
    return {{1, "default", "linear"},
            {2, "bruck", "bruck"},
            {3, "ring", "ring"},
            {4, "neighbor", "neighbor_exchange"},
            {5, "two_proc", "two_proc"}};
  case CollectiveKind::reduce_scatter:
    return {{1, "non-overlapping", "non_overlapping"},
            {2, "recursive_halving", "recursive_halving"},
            {3, "ring", "ring"},
            {4, "butterfly", "butterfly"}};
  default: return {};
  }
}

std::string_view v_name(CollectiveKind c) {
  switch (c) {
  case CollectiveKind::alltoall: return "alltoallv";
  case CollectiveKind::allgather: return "allgatherv";
  case CollectiveKind::gather: return "gatherv";
  case CollectiveKind::scatter: return "scatterv";
  case CollectiveKind::reduce_scatter: return "reduce_scatter";
  default: return "";
  }
}

} // namespace

std::optional<LibraryChoice> ompi41_v_default(const OmpiCall& call,
                                              const algorithms::Registry& registry) {
  const CollectiveKind c = call.collective;
  const std::uint32_t p = call.ranks;
  LibraryChoice choice;
  choice.library = "Open MPI 4.1.x coll/tuned (fixed rules)";
  if (c == CollectiveKind::gather || c == CollectiveKind::scatter) {
    choice.library = "Open MPI 4.1.x coll/basic";
    choice.algorithm = registry.find(c, "linear").name;
    choice.library_name = fmt::format("basic linear {}", v_name(c));
    choice.reason = fmt::format("coll/tuned has no {}: coll/basic's linear one runs", v_name(c));
    return choice;
  }
  const std::vector<VAlgorithm> table = v_algorithms(c);
  if (table.empty()) {
    throw core::InternalError(
        fmt::format("ompi41_v_default: {} has no v-variant", core::to_string(c)));
  }
  OmpiRule rule;
  if (p <= 1) {
    // coll/tuned declines single-rank communicators; coll/self copies locally. The ring has no
    // messages at p = 1 and takes counts in every v-collective collsim models.
    choice.library = "Open MPI 4.1.x coll/self (single rank)";
    choice.algorithm = c == CollectiveKind::alltoall ? "linear" : "ring";
    choice.library_name = "self";
    choice.reason = fmt::format("p == 1: coll/tuned declines single-rank communicators; coll/self "
                                "copies locally (collsim: {}, no messages at p = 1)",
                                choice.algorithm);
    return choice;
  }
  if (c == CollectiveKind::alltoall) {
    rule = detail::evaluate_rows(alltoallv_rows(), p, 0, "", false);
  } else if (c == CollectiveKind::allgather) {
    // "use the per-rank data size as basis, similar to allgather"
    rule = detail::evaluate_rows(allgatherv_rows(), p, call.bytes.value / p, "", true);
    rule.reason += fmt::format(" (m = total / p = {} B)", call.bytes.value / p);
  } else {
    rule = ompi41_fixed_rule(c, p, call.bytes.value, call.commutative);
  }
  int id = rule.id;
  std::string note;
  if (c == CollectiveKind::allgather && id == 4 && p % 2 != 0) {
    note = fmt::format("; neighbor exchange on odd p = {} runs the ring", p);
    id = 3;
  }
  for (const VAlgorithm& v : table) {
    if (v.id == rule.id) {
      choice.library_name = fmt::format("ompi:{} {}", v.id, v.ompi_name);
    }
    if (v.id == id) {
      choice.algorithm = registry.find(c, std::string(v.collsim)).name;
    }
  }
  if (choice.algorithm.empty()) {
    throw core::InternalError(
        fmt::format("ompi41_v_default: {} rule {} names no algorithm", v_name(c), rule.id));
  }
  if (c == CollectiveKind::allgather && id == 2) {
    choice.params = {{"radix", "2"}}; // 4.1's Bruck has no radix parameter: classic radix 2
  }
  choice.reason = fmt::format("{} rules: {}{}", v_name(c), rule.reason, note);
  return choice;
}

} // namespace collsim::analysis
