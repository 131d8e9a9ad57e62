// Open MPI 4.1 coll/tuned fixed decision rules, re-implemented (see ompi_defaults.hpp for the
// version pin and docs/library-defaults.md for the mapping and gaps).
//
// Sources (Open MPI v4.1.x; facts transcribed, no code copied):
// - ompi/mca/coll/tuned/coll_tuned_decision_fixed.c: the tables below, one function per
//   collective, evaluated as if/else chains with strict `<` on p and on the message size, and the
//   call `*_intra_do_this(..., alg, 0, 0)`: faninout 0 and segsize 0 for every collective.
// - ompi/mca/coll/base/coll_base_allreduce.c: ring with count < p runs recursive doubling;
//   ring_segmented with count < p * segcount (always, when segsize is 0) runs the plain ring;
//   redscat_allgather (rabenseifner) with count < 2^floor(lg p) runs basic_linear; nonoverlapping
//   calls the communicator's (coll/tuned's) reduce to rank 0, then its bcast.
// - coll_base_reduce.c: redscat_gather with 2^floor(lg p) < 2 or count < 2^floor(lg p) runs
//   basic_linear. coll_base_topo.c: build_chain forces fanout 0 to 1 ("pipeline").
// - coll_base_bcast.c: scatter_allgather with count < p runs basic_linear; split_bintree with a
//   half of 0 elements runs chain with fanout 1; knomial uses coll_tuned_bcast_knomial_radix
//   (default 4, as `ompi_info --all` of 4.1.4 reports).
// - coll_base_allgather.c: recursive doubling on non-power-of-two p runs Bruck (radix 2 in
//   4.1); neighbor exchange on odd p runs the ring.
// - coll_tuned_module.c: coll/tuned declines communicators of fewer than 2 ranks.

#include "collsim/analysis/ompi_defaults.hpp"

#include "ompi_rule_table.hpp"

#include "collsim/core/errors.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <initializer_list>
#include <string_view>
#include <vector>

namespace collsim::analysis {

namespace {

using core::CollectiveKind;

constexpr std::uint64_t kKiB = 1024;
constexpr std::uint64_t kMiB = 1024 * kKiB;

constexpr std::string_view kLibrary = "Open MPI 4.1.x coll/tuned (fixed rules)";
constexpr std::string_view kForcedLibrary = "Open MPI 4.1.x coll/tuned (forced algorithm)";

using detail::p_below;
using detail::p_equals;
using detail::p_rest;
using detail::Row;

// ---- The 4.1 tables, in the source's order (ompi_coll_tuned_<coll>_intra_dec_fixed). ----

std::vector<Row> allreduce_commutative() {
  return {
      p_below(
          4,
          {{8, 4}, {4 * kKiB, 3}, {8 * kKiB, 4}, {16 * kKiB, 3}, {64 * kKiB, 4}, {256 * kKiB, 5}},
          6),
      p_below(8, {{16, 4}, {8 * kKiB, 3}}, 6),
      p_below(16, {{8 * kKiB, 3}}, 6),
      p_below(32, {{64, 5}, {4 * kKiB, 3}}, 6),
      p_below(64, {{128, 5}}, 6),
      p_below(128, {{256 * kKiB, 3}}, 6),
      p_below(256, {{128 * kKiB, 2}, {256 * kKiB, 3}}, 6),
      p_below(512, {{4 * kKiB, 2}}, 6),
      p_below(2048, {{2 * kKiB, 2}, {16 * kKiB, 3}}, 6),
      p_below(4096, {{2 * kKiB, 2}, {4 * kKiB, 5}, {16 * kKiB, 3}}, 6),
      p_rest({{2 * kKiB, 2}, {16 * kKiB, 5}, {32 * kKiB, 3}}, 6),
  };
}

// "Currently, ring, segmented ring, and rabenseifner do not support non-commutative operations."
std::vector<Row> allreduce_noncommutative() {
  return {
      p_below(4, {{128 * kKiB, 3}}, 1),
      p_below(8, {}, 3),
      p_below(16, {{kMiB, 3}}, 2),
      p_below(128, {}, 3),
      p_below(256, {{128 * kKiB, 2}, {512 * kKiB, 3}}, 2),
      p_below(512, {{4 * kKiB, 2}, {512 * kKiB, 3}}, 2),
      p_rest({{2 * kKiB, 2}}, 3),
  };
}

std::vector<Row> bcast_rows() {
  return {
      p_below(4,
              {{32, 3},
               {256, 5},
               {512, 3},
               {kKiB, 7},
               {32 * kKiB, 1},
               {128 * kKiB, 5},
               {256 * kKiB, 2},
               {512 * kKiB, 1},
               {kMiB, 6}},
              5),
      p_below(8, {{64, 5}, {128, 6}, {2 * kKiB, 5}, {8 * kKiB, 6}, {kMiB, 1}}, 2),
      p_below(16, {{8, 7}, {64, 5}, {4 * kKiB, 7}, {16 * kKiB, 5}, {32 * kKiB, 6}}, 1),
      p_below(32, {{4 * kKiB, 7}, {kMiB, 6}}, 8),
      p_below(64, {{2 * kKiB, 6}}, 7),
      p_below(128, {}, 7),
      p_below(256, {{2, 6}, {16 * kKiB, 5}, {32 * kKiB, 1}, {64 * kKiB, 5}}, 7),
      p_below(1024, {{16 * kKiB, 7}, {32 * kKiB, 4}}, 7),
      p_below(2048, {{512 * kKiB, 7}}, 8),
      p_below(4096, {{256 * kKiB, 7}}, 8),
      p_rest({{8 * kKiB, 7}, {16 * kKiB, 5}, {256 * kKiB, 7}}, 8),
  };
}

// "Currently, only linear and in-order binary tree algorithms are capable of non commutative ops."
std::vector<Row> reduce_noncommutative() {
  return {
      p_below(4, {{8, 6}}, 1),
      p_below(8, {}, 1),
      p_below(16, {{kKiB, 6}, {8 * kKiB, 1}, {16 * kKiB, 6}, {256 * kKiB, 1}}, 6),
      p_below(128, {}, 6),
      p_below(256, {{512, 6}, {kKiB, 1}}, 6),
      p_rest({}, 6),
  };
}

std::vector<Row> reduce_commutative() {
  return {
      p_below(4, {{8, 7}, {16, 4}, {32, 3}, {256 * kKiB, 1}, {512 * kKiB, 3}, {kMiB, 2}}, 3),
      p_below(8, {{4 * kKiB, 4}, {64 * kKiB, 2}, {256 * kKiB, 5}, {512 * kKiB, 1}, {kMiB, 5}}, 1),
      p_below(16, {{8 * kKiB, 4}}, 5),
      p_below(32, {{4 * kKiB, 4}}, 5),
      p_below(256, {}, 5),
      p_below(512, {{8 * kKiB, 5}, {16 * kKiB, 6}}, 5),
      p_below(2048, {}, 5),
      p_below(4096, {{512, 5}, {kKiB, 6}, {8 * kKiB, 5}, {16 * kKiB, 6}}, 5),
      p_rest({{16, 5}, {32, 6}, {kKiB, 5}, {2 * kKiB, 6}, {8 * kKiB, 5}, {16 * kKiB, 6}}, 5),
  };
}

std::vector<Row> allgather_rows() {
  return {
      p_equals(2, {}, 6),
      p_below(32, {}, 3),
      p_below(64, {{kKiB, 3}, {64 * kKiB, 5}}, 4),
      p_below(128, {{512, 3}, {64 * kKiB, 5}}, 4),
      p_below(256, {{512, 3}, {128 * kKiB, 5}, {512 * kKiB, 4}, {kMiB, 5}}, 4),
      p_below(512, {{32, 3}, {128, 2}, {kKiB, 3}, {128 * kKiB, 5}, {512 * kKiB, 4}, {kMiB, 5}}, 4),
      p_below(1024, {{64, 3}, {256, 2}, {2 * kKiB, 3}}, 5),
      p_below(2048, {{4, 3}, {8, 2}, {16, 3}, {32, 2}, {256, 3}, {512, 2}, {4 * kKiB, 3}}, 5),
      p_below(4096, {{32, 2}, {128, 3}, {512, 2}, {4 * kKiB, 3}}, 5),
      p_rest({{2, 3}, {8, 2}, {16, 3}, {512, 2}, {4 * kKiB, 3}}, 5),
  };
}

// "Non commutative algorithm capability needs re-investigation. Defaulting to non overlapping
// for non commutative ops."
std::vector<Row> reduce_scatter_commutative() {
  return {
      p_below(4, {{64 * kKiB, 3}, {128 * kKiB, 4}}, 3),
      p_below(8, {{8, 1}, {256 * kKiB, 2}}, 3),
      p_below(32, {{256 * kKiB, 2}}, 3),
      p_below(64, {{64, 1}, {2 * kKiB, 2}, {512 * kKiB, 4}}, 3),
      p_below(128, {{256, 1}, {512, 2}, {2 * kKiB, 4}, {4 * kKiB, 2}}, 4),
      p_below(256, {{256, 1}, {512, 2}}, 4),
      p_below(512, {{256, 1}, {kKiB, 2}}, 4),
      p_below(1024, {{512, 1}, {2 * kKiB, 2}, {8 * kKiB, 4}, {16 * kKiB, 2}}, 4),
      p_below(2048, {{512, 1}, {4 * kKiB, 2}, {16 * kKiB, 4}, {32 * kKiB, 2}}, 4),
      p_below(4096, {{512, 1}, {4 * kKiB, 2}}, 4),
      p_rest({{kKiB, 1}, {8 * kKiB, 2}}, 4),
  };
}

std::vector<Row> alltoall_rows() {
  return {
      p_equals(2,
               {{2, 2},
                {4, 5},
                {16, 2},
                {64, 5},
                {256, 2},
                {4 * kKiB, 5},
                {32 * kKiB, 2},
                {256 * kKiB, 4},
                {kMiB, 5}},
               2),
      p_below(8, {{8 * kKiB, 4}, {16 * kKiB, 1}, {64 * kKiB, 4}, {512 * kKiB, 1}, {kMiB, 2}}, 1),
      p_below(16, {{256 * kKiB, 4}}, 1),
      p_below(32,
              {{4, 4}, {512, 3}, {8 * kKiB, 4}, {32 * kKiB, 1}, {256 * kKiB, 4}, {512 * kKiB, 1}},
              4),
      p_below(64, {{512, 3}, {512 * kKiB, 1}}, 4),
      p_below(128, {{kKiB, 3}, {2 * kKiB, 1}, {4 * kKiB, 4}, {256 * kKiB, 1}}, 2),
      p_below(256, {{kKiB, 3}, {2 * kKiB, 4}, {256 * kKiB, 1}}, 2),
      p_below(512, {{kKiB, 3}, {8 * kKiB, 4}, {32 * kKiB, 1}}, 2),
      p_below(1024, {{512, 3}, {8 * kKiB, 4}, {16 * kKiB, 1}, {128 * kKiB, 4}, {256 * kKiB, 1}}, 2),
      p_below(2048, {{512, 3}, {kKiB, 4}, {2 * kKiB, 1}, {16 * kKiB, 4}, {256 * kKiB, 1}}, 4),
      p_below(4096, {{kKiB, 3}, {4 * kKiB, 4}, {8 * kKiB, 1}, {128 * kKiB, 4}}, 1),
      p_rest({{2 * kKiB, 3}, {8 * kKiB, 4}, {16 * kKiB, 1}, {32 * kKiB, 4}, {64 * kKiB, 1}}, 4),
  };
}

std::vector<Row> gather_rows() {
  return {
      p_below(4, {{2, 3}, {4, 1}, {32 * kKiB, 2}, {64 * kKiB, 1}, {128 * kKiB, 2}}, 3),
      p_below(8, {{kKiB, 2}, {8 * kKiB, 1}, {32 * kKiB, 2}, {256 * kKiB, 1}}, 3),
      p_below(256, {}, 2),
      p_below(512, {{2 * kKiB, 2}, {8 * kKiB, 1}}, 2),
      p_rest({}, 2),
  };
}

std::vector<Row> scatter_rows() {
  return {
      p_below(4, {{2, 3}, {128 * kKiB, 1}, {256 * kKiB, 3}}, 1),
      p_below(8, {{2 * kKiB, 2}, {4 * kKiB, 1}, {8 * kKiB, 2}, {32 * kKiB, 1}, {kMiB, 3}}, 1),
      p_below(16, {{16 * kKiB, 2}, {kMiB, 3}}, 1),
      p_below(32, {{16 * kKiB, 2}, {32 * kKiB, 1}}, 3),
      p_below(64, {{512, 2}, {8 * kKiB, 3}, {16 * kKiB, 2}}, 3),
      p_rest({{512, 2}}, 3),
  };
}

// "We can only optimize based on com size."
std::vector<Row> barrier_rows() {
  return {
      p_below(4, {}, 3),   p_below(8, {}, 1),    p_below(64, {}, 3),   p_below(256, {}, 4),
      p_below(512, {}, 6), p_below(1024, {}, 4), p_below(4096, {}, 6), p_rest({}, 4),
  };
}

bool reduces(CollectiveKind c) {
  return c == CollectiveKind::allreduce || c == CollectiveKind::reduce ||
         c == CollectiveKind::reduce_scatter;
}

std::vector<Row> rows_for(CollectiveKind c, bool commutative) {
  switch (c) {
  case CollectiveKind::allreduce:
    return commutative ? allreduce_commutative() : allreduce_noncommutative();
  case CollectiveKind::bcast: return bcast_rows();
  case CollectiveKind::reduce: return commutative ? reduce_commutative() : reduce_noncommutative();
  case CollectiveKind::allgather: return allgather_rows();
  case CollectiveKind::reduce_scatter:
    return commutative ? reduce_scatter_commutative() : std::vector<Row>{p_rest({}, 1)};
  case CollectiveKind::alltoall: return alltoall_rows();
  case CollectiveKind::gather: return gather_rows();
  case CollectiveKind::scatter: return scatter_rows();
  case CollectiveKind::barrier: return barrier_rows();
  }
  throw core::InternalError("ompi41_fixed_rule: unhandled collective");
}

std::string label(CollectiveKind c, int id) {
  return fmt::format("ompi:{} {}", id, ompi41_algorithm_name(c, id));
}

/// What coll/base actually executes for the id the rules chose: the id after internal fallbacks,
/// the parameters that reproduce fixed mode (faninout 0, segsize 0) or the forced ones, and notes
/// for the reason.
struct Execution {
  int id = 0;
  algorithms::RawParams params;
  std::vector<std::string> notes;
};

/// The bytes of one segment coll/base cuts a vector of `count` elements of `e` bytes into for a
/// segment size of `segsize` bytes (COLL_BASE_COMPUTED_SEGCOUNT: whole elements, the rest rounded
/// to the nearer; no segmentation, 0 here, when segsize is below one element or not below the
/// vector).
std::uint64_t segment_bytes(std::uint64_t segsize, std::uint32_t e, std::uint64_t count) {
  if (segsize < e || segsize >= std::uint64_t{e} * count) {
    return 0;
  }
  std::uint64_t segcount = segsize / e;
  if (segsize - segcount * e > e / 2U) {
    ++segcount;
  }
  return segcount * e;
}

/// The chain fanout coll/base builds (ompi_coll_base_topo_build_chain: below 1 forced to 1,
/// above MAXTREEFANOUT, 32, to 32): fixed mode passes 0.
std::uint32_t chain_fanout(const stacks::OmpiForced* forced) {
  return forced == nullptr ? 1U : std::clamp<std::uint32_t>(forced->chain_fanout, 1, 32);
}

Execution execute(const OmpiCall& call, int chosen, const stacks::OmpiForced* forced) {
  const std::uint32_t p = call.ranks;
  const std::uint64_t count = call.bytes.value / call.element_bytes; // whole-vector elements
  const std::uint64_t pof2 = std::bit_floor(std::uint64_t{p});
  // The segment size coll/base receives: the forced one, else the fixed rules' 0.
  const std::uint64_t segsize = forced != nullptr ? forced->segsize : 0;
  const std::uint64_t seg = segment_bytes(segsize, call.element_bytes, count);
  const std::string segment = std::to_string(seg);
  Execution e{chosen, {}, {}};
  switch (call.collective) {
  case CollectiveKind::allreduce:
    if (e.id == 6 && count < pof2) {
      e.notes.push_back(fmt::format(
          "rabenseifner with count {} < 2^floor(lg p) = {} runs basic_linear", count, pof2));
      e.id = 1;
    }
    if (e.id == 5) {
      const std::uint64_t segcount = seg == 0 ? count : seg / call.element_bytes;
      if (count < std::uint64_t{p} * segcount) {
        e.notes.push_back(segsize == 0
                              ? std::string("segsize 0: segmented_ring runs the plain ring")
                              : fmt::format("segmented_ring with count {} < p x segcount "
                                            "= {} x {} runs the plain ring",
                                            count, p, segcount));
        e.id = 4;
      } else {
        e.params = {{"segment_size", segment}};
      }
    }
    if (e.id == 4 && count < p) {
      e.notes.push_back(
          fmt::format("ring with count {} < p = {} runs recursive_doubling", count, p));
      e.id = 3;
    }
    break;
  case CollectiveKind::bcast:
    if (e.id == 8 && count < p) {
      e.notes.push_back(
          fmt::format("scatter_allgather with count {} < p = {} runs basic_linear", count, p));
      e.id = 1;
    }
    if (e.id == 4 && count < 2) {
      e.notes.push_back("split_binary_tree with a half of 0 elements runs chain with fanout 1");
      e.id = 2;
      forced = nullptr; // split_bintree passes fanout 1 itself
    }
    if (e.id == 2) {
      if (forced == nullptr) {
        e.notes.emplace_back("faninout 0: build_chain forces fanout 1");
      }
      e.params = {{"chains", std::to_string(chain_fanout(forced))}, {"segment_size", segment}};
    } else if (e.id == 3 || e.id == 4 || e.id == 5) {
      e.params = {{"segment_size", segment}};
    } else if (e.id == 7) {
      e.params = {{"radix", "4"}}; // coll_tuned_bcast_knomial_radix
    }
    if ((e.id == 6 || e.id == 7) && seg != 0) {
      e.notes.push_back(fmt::format("collsim's {} does not segment: the forced {} B segments are "
                                    "not modelled",
                                    ompi41_algorithm_name(CollectiveKind::bcast, e.id), segsize));
    }
    break;
  case CollectiveKind::reduce:
    if (e.id == 7 && (pof2 < 2 || count < pof2)) {
      e.notes.push_back(
          fmt::format("rabenseifner with count {} < 2^floor(lg p) = {} runs linear", count, pof2));
      e.id = 1;
    }
    if (e.id == 2) {
      if (forced == nullptr) {
        e.notes.emplace_back("faninout 0: build_chain forces fanout 1");
      }
      e.params = {{"chains", std::to_string(chain_fanout(forced))}, {"segment_size", segment}};
    } else if (e.id == 3 || e.id == 4) {
      e.params = {{"segment_size", segment}};
    } else if ((e.id == 5 || e.id == 6) && seg != 0) {
      e.notes.push_back(fmt::format("collsim's {} does not segment: the forced {} B segments are "
                                    "not modelled",
                                    ompi41_algorithm_name(CollectiveKind::reduce, e.id), segsize));
    }
    break;
  case CollectiveKind::allgather:
    if (e.id == 3 && !std::has_single_bit(p)) {
      e.notes.push_back(fmt::format("recursive_doubling on non-power-of-two p = {} runs bruck", p));
      e.id = 2;
    }
    if (e.id == 5 && p % 2 != 0) {
      e.notes.push_back(fmt::format("neighbor exchange on odd p = {} runs the ring", p));
      e.id = 4;
    }
    if (e.id == 2) {
      e.params = {{"radix", "2"}}; // 4.1's Bruck has no radix parameter: classic radix 2
    }
    break;
  case CollectiveKind::reduce_scatter:
    if (e.id == 1) {
      const int r =
          ompi41_fixed_rule(CollectiveKind::reduce, p, call.bytes.value, call.commutative).id;
      e.notes.push_back(fmt::format(
          "Open MPI reduces with {} (its own reduce rules) then scatters linearly; collsim's "
          "non_overlapping reduces binomially{}",
          label(CollectiveKind::reduce, r), r == 5 ? ", the same" : ", the nearest collsim has"));
    }
    break;
  case CollectiveKind::alltoall:
    if (e.id == 3) {
      e.params = {{"radix", "2"}};
    } else if (e.id == 4) {
      // coll_tuned_alltoall_max_requests defaults to 0: every request posted at once.
      e.params = {{"max_outstanding", "0"}};
    }
    break;
  case CollectiveKind::gather:
    if (e.id == 3) {
      // The first segment's size is the segment size (fixed mode: 0, the whole block at once).
      e.params = {{"first_segment", std::to_string(segment_bytes(segsize, call.element_bytes,
                                                                 count / std::max(p, 1U)))}};
    }
    break;
  case CollectiveKind::scatter: break;
  case CollectiveKind::barrier:
    if (e.id == 4) {
      e.params = {{"radix", "2"}};
    }
    break;
  }
  return e;
}

const algorithms::AlgorithmInfo& find_ompi(const algorithms::Registry& registry, CollectiveKind c,
                                           int id) {
  const auto* info = registry.try_find(c, fmt::format("ompi:{}", id));
  if (info == nullptr) {
    throw core::InternalError(
        fmt::format("ompi41_default: the registry has no {} algorithm with alias ompi:{} ({})",
                    core::to_string(c), id, ompi41_algorithm_name(c, id)));
  }
  return *info;
}

} // namespace

std::uint64_t ompi41_metric(const OmpiCall& call) {
  const std::uint64_t s = call.bytes.value;
  const std::uint64_t p = call.ranks == 0 ? 1 : call.ranks;
  switch (call.collective) {
  case CollectiveKind::allreduce:
  case CollectiveKind::bcast:
  case CollectiveKind::reduce:
  case CollectiveKind::reduce_scatter: // dsize * sum(rcounts): the whole vector
    return s;
  case CollectiveKind::allgather: // sdtype_size * scount: one rank's block
  case CollectiveKind::alltoall:  // dsize * scount: the block for one peer
  case CollectiveKind::gather:    // rcount at the root, scount elsewhere: one rank's block
  case CollectiveKind::scatter: return s / p;
  case CollectiveKind::barrier: return 0;
  }
  return s;
}

OmpiRule ompi41_fixed_rule(CollectiveKind collective, std::uint32_t ranks, std::uint64_t m,
                           bool commutative) {
  std::string suffix;
  if (reduces(collective)) {
    suffix = commutative ? ", commutative" : ", non-commutative";
  }
  return detail::evaluate_rows(rows_for(collective, commutative), ranks, m, suffix,
                               collective != CollectiveKind::barrier);
}

std::string ompi41_algorithm_name(CollectiveKind collective, int id) {
  for (const auto& entry : stacks::ompi41_algorithms(collective)) {
    if (entry.id == id) {
      return std::string{entry.name};
    }
  }
  return {};
}

algorithms::RawParams ompi41_nonoverlapping_halves(const OmpiCall& call,
                                                   const algorithms::Registry& registry,
                                                   std::vector<std::string>* notes) {
  // nonoverlapping calls the communicator's reduce and bcast (coll_base_allreduce.c:
  // comm->c_coll->coll_reduce, coll_bcast), i.e. coll/tuned's own rules for the same call, each
  // run as those rules run it (with its own fall-backs, execute()).
  algorithms::RawParams out;
  std::vector<int> rules;
  std::vector<std::string> fallbacks;
  for (const CollectiveKind half : {CollectiveKind::reduce, CollectiveKind::bcast}) {
    OmpiCall sub = call;
    sub.collective = half;
    sub.varying = false;
    const std::uint64_t m = ompi41_metric(sub);
    const stacks::OmpiForced* forced = call.tuning.forced_for(half);
    rules.push_back(forced != nullptr
                        ? forced->id
                        : ompi41_fixed_rule(half, call.ranks, m, call.commutative).id);
    const Execution e = execute(sub, rules.back(), forced);
    out[half == CollectiveKind::reduce ? "reduce" : "bcast"] = find_ompi(registry, half, e.id).name;
    fallbacks.insert(fallbacks.end(), e.notes.begin(), e.notes.end());
  }
  if (notes != nullptr) {
    notes->push_back(fmt::format("nonoverlapping reduces with {} then broadcasts with {} (Open "
                                 "MPI's own reduce and bcast rules for the same call)",
                                 label(CollectiveKind::reduce, rules[0]),
                                 label(CollectiveKind::bcast, rules[1])));
    notes->insert(notes->end(), fallbacks.begin(), fallbacks.end());
  }
  return out;
}

std::optional<LibraryChoice> ompi41_default(const OmpiCall& call,
                                            const algorithms::Registry& registry) {
  if (call.element_bytes == 0) {
    throw core::UsageError("ompi41_default: element_bytes must be at least 1");
  }
  if (call.ranks == 0) {
    return std::nullopt;
  }
  const CollectiveKind c = call.collective;
  if (c == CollectiveKind::alltoall && !call.varying && call.bytes.value % call.ranks != 0) {
    // MPI_Alltoall sends the same count to every peer; collsim's alltoall algorithms need it too.
    return std::nullopt;
  }

  if (call.varying) {
    return ompi41_v_default(call, registry);
  }
  LibraryChoice choice;
  if (call.ranks == 1) {
    // coll/tuned's comm_query returns no module for fewer than 2 ranks; coll/self runs a local
    // copy. collsim's linear algorithm of each collective has no messages at p = 1.
    const auto& algo = find_ompi(registry, c, 1);
    choice.library = "Open MPI 4.1.x coll/self (single rank)";
    choice.algorithm = algo.name;
    choice.library_name = "self";
    choice.reason = fmt::format("p == 1: coll/tuned declines single-rank communicators; coll/self "
                                "copies locally (collsim: {}, no messages at p = 1)",
                                algo.name);
    return choice;
  }

  const std::uint64_t m = ompi41_metric(call);
  const stacks::OmpiForced* forced = call.tuning.forced_for(c);
  const OmpiRule rule =
      forced != nullptr
          ? OmpiRule{forced->id, fmt::format("forced by {} with coll_tuned_use_dynamic_rules on",
                                             forced->source)}
          : ompi41_fixed_rule(c, call.ranks, m, call.commutative);
  Execution run = execute(call, rule.id, forced);
  const auto& algo = find_ompi(registry, c, run.id);
  if (c == CollectiveKind::allreduce && run.id == 2) {
    run.params = ompi41_nonoverlapping_halves(call, registry, &run.notes);
  }

  choice.library = forced != nullptr ? std::string{kForcedLibrary} : std::string{kLibrary};
  choice.algorithm = algo.name;
  choice.params = std::move(run.params);
  choice.library_name = label(c, rule.id);
  choice.reason = rule.reason;
  if (const auto it = call.tuning.forced.find(c);
      forced == nullptr && it != call.tuning.forced.end() && it->second.id != 0) {
    choice.reason += fmt::format("; {} is set, but not coll_tuned_use_dynamic_rules: Open MPI "
                                 "ignores it",
                                 it->second.source);
  }
  if (call.tuning.dynamic_rules && !call.tuning.rules_file.empty()) {
    choice.reason += fmt::format("; Open MPI consults the rules file {} first, which collsim "
                                 "does not read",
                                 call.tuning.rules_file);
  }
  for (const auto& note : run.notes) {
    choice.reason += "; " + note;
  }
  const bool per_rank_metric =
      c == CollectiveKind::allgather || c == CollectiveKind::gather || c == CollectiveKind::scatter;
  if (per_rank_metric && call.bytes.value % call.ranks != 0) {
    choice.reason +=
        fmt::format("; S = {} B is not a multiple of p: m = floor(S/p)", call.bytes.value);
  }
  return choice;
}

} // namespace collsim::analysis
