// The algorithm registry (ARCHITECTURE.md, "Extending"): a plain object that a session builds with
// make_default_registry() and owns. No static registration: adding an algorithm is one file that
// exports describe_<name>() and one line in make_default_registry() below.

#include "collsim/algorithms/registry.hpp"

#include "allgather/allgather_algorithms.hpp"
#include "allreduce/allreduce_algorithms.hpp"
#include "alltoall/alltoall_algorithms.hpp"
#include "barrier/barrier_algorithms.hpp"
#include "bcast/bcast_algorithms.hpp"
#include "collsim/core/errors.hpp"
#include "collsim/core/layout.hpp"
#include "gather/gather_algorithms.hpp"
#include "reduce/reduce_algorithms.hpp"
#include "reduce_scatter/reduce_scatter_algorithms.hpp"
#include "scatter/scatter_algorithms.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <fmt/ranges.h>

namespace collsim::algorithms {
namespace {

/// The canonical name and every alias: they share one namespace within a collective.
std::vector<std::string_view> all_names(const AlgorithmInfo& info) {
  std::vector<std::string_view> names{info.name};
  names.insert(names.end(), info.aliases.begin(), info.aliases.end());
  return names;
}

bool answers_to(const AlgorithmInfo& info, std::string_view name) {
  return info.name == name ||
         std::find(info.aliases.begin(), info.aliases.end(), name) != info.aliases.end();
}

std::string unknown_parameter(const AlgorithmInfo& algo, const std::string& name) {
  if (algo.params.empty()) {
    return fmt::format("unknown parameter '{}': {} takes no parameters", name, algo.name);
  }
  std::vector<std::string> valid;
  valid.reserve(algo.params.size());
  for (const auto& p : algo.params) {
    valid.push_back(p.name);
  }
  std::string msg = fmt::format("unknown parameter '{}'", name);
  const std::string close = core::closest_match(name, valid);
  if (!close.empty()) {
    msg += fmt::format(" (did you mean '{}'?)", close);
  }
  msg += fmt::format("; valid parameters are: {}", fmt::join(valid, ", "));
  return msg;
}

} // namespace

void Registry::add(AlgorithmInfo info) {
  if (info.name.empty() || !info.generate) {
    throw core::InternalError(
        fmt::format("algorithm '{}' needs a name and a generator", info.name));
  }
  for (const auto& p : info.params) {
    if (!p.choices.empty() &&
        (p.min != 0 || p.max != static_cast<std::int64_t>(p.choices.size()) - 1)) {
      throw core::InternalError(
          fmt::format("algorithm '{}': parameter '{}' has {} choices but range [{}, {}]", info.name,
                      p.name, p.choices.size(), p.min, p.max));
    }
    if (p.min > p.max || p.default_value < p.min || p.default_value > p.max) {
      throw core::InternalError(
          fmt::format("algorithm '{}': parameter '{}' has default {} outside its range [{}, {}]",
                      info.name, p.name, p.default_value, p.min, p.max));
    }
  }
  const auto names = all_names(info);
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (std::find(names.begin(), names.begin() + static_cast<std::ptrdiff_t>(i), names[i]) !=
        names.begin() + static_cast<std::ptrdiff_t>(i)) {
      throw core::InternalError(
          fmt::format("algorithm '{}' lists the name '{}' twice", info.name, names[i]));
    }
  }
  for (const auto& existing : algorithms_) {
    if (existing.collective != info.collective) {
      continue;
    }
    for (std::string_view n : names) {
      if (answers_to(existing, n)) {
        throw core::InternalError(fmt::format("duplicate {} algorithm name '{}' ('{}' and '{}')",
                                              core::to_string(info.collective), n, existing.name,
                                              info.name));
      }
    }
  }
  algorithms_.push_back(std::move(info));
}

const AlgorithmInfo* Registry::try_find(core::CollectiveKind c, std::string_view name) const {
  for (const auto& a : algorithms_) {
    if (a.collective == c && answers_to(a, name)) {
      return &a;
    }
  }
  return nullptr;
}

const AlgorithmInfo& Registry::find(core::CollectiveKind c, std::string_view name) const {
  if (const AlgorithmInfo* a = try_find(c, name)) {
    return *a;
  }
  std::vector<std::string> valid;
  for (const auto& a : algorithms_) {
    if (a.collective == c) {
      valid.push_back(a.name);
    }
  }
  if (valid.empty()) {
    throw core::UsageError(fmt::format("no {} algorithms are available yet (collsim has: {})",
                                       core::to_string(c),
                                       fmt::join(collectives_with_algorithms(), ", ")));
  }
  throw core::UnknownNameError(fmt::format("{} algorithm", core::to_string(c)), name,
                               std::move(valid));
}

std::vector<std::string> Registry::collectives_with_algorithms() const {
  std::vector<std::string> out;
  for (auto c : core::kAllCollectives) {
    if (std::any_of(algorithms_.begin(), algorithms_.end(),
                    [c](const AlgorithmInfo& a) { return a.collective == c; })) {
      out.emplace_back(core::to_string(c));
    }
  }
  return out;
}

std::vector<const AlgorithmInfo*> Registry::list(std::optional<core::CollectiveKind> c) const {
  std::vector<const AlgorithmInfo*> out;
  for (const auto& a : algorithms_) {
    if (!c || a.collective == *c) {
      out.push_back(&a);
    }
  }
  return out;
}

std::string Registry::refusal(const AlgorithmInfo& algo, Request& request) const {
  if (request.collective != algo.collective) {
    return fmt::format("'{}' is an {} algorithm; the request is for {}", algo.name,
                       core::to_string(algo.collective), core::to_string(request.collective));
  }
  // Unknown names first, so a typo is reported as a typo rather than as a missing default.
  for (const auto& entry : request.params) {
    const std::string& name = entry.first;
    const bool known = std::any_of(algo.params.begin(), algo.params.end(),
                                   [&](const ParamSpec& p) { return p.name == name; });
    if (!known) {
      return unknown_parameter(algo, name);
    }
  }
  for (const auto& p : algo.params) {
    const auto it = request.params.try_emplace(p.name, p.default_value).first;
    if (it->second < p.min || it->second > p.max) {
      if (!p.choices.empty()) {
        return fmt::format("parameter '{}' = {} is not a choice index (choices: {})", p.name,
                           it->second, fmt::join(p.choices, ", "));
      }
      return fmt::format("parameter '{}' = {} is out of range [{}, {}]", p.name, it->second, p.min,
                         p.max);
    }
  }
  if (request.ranks < 1) {
    return fmt::format("ranks must be at least 1 (got {})", request.ranks);
  }
  if (request.root >= request.ranks) {
    return fmt::format("root {} is not a rank: ranks are 0..{}", request.root, request.ranks - 1);
  }
  if (!request.counts.empty()) {
    if (!algo.counts) {
      return fmt::format("{} takes no per-rank counts (it has no {} variant)", algo.name,
                         core::collective_display_name(algo.collective, true));
    }
    if (std::string why = core::counts_problem(request.collective, request.ranks,
                                               request.bytes.value, request.counts);
        !why.empty()) {
      return why;
    }
  }
  if (request.collapse_to != 0) {
    // Internal: analysis::collapse_programs asks only for what the algorithm declares.
    const Symmetry sym = algo.symmetry ? algo.symmetry(request) : Symmetry{};
    request.symmetry = sym.kind;
    const std::uint32_t k = request.collapse_to;
    if (request.symmetry == core::SymmetryKind::none || request.ranks % k != 0 ||
        k % sym.period != 0 ||
        (request.symmetry == core::SymmetryKind::xor_blocks && (k & (k - 1)) != 0)) {
      throw core::InternalError(
          fmt::format("{} does not collapse {} ranks to {} programs", algo.name, request.ranks, k));
    }
  }
  if (algo.check) {
    return algo.check(request);
  }
  return {};
}

core::Schedule Registry::generate(const AlgorithmInfo& algo, Request request) const {
  if (std::string why = refusal(algo, request); !why.empty()) {
    throw core::UsageError(fmt::format("{}: {}", algo.name, why));
  }
  core::Schedule s = algo.generate(request);
  s.finish();
  const core::ScheduleHeader& h = s.header();
  // A generator that disagrees with its request is a collsim bug, never the user's.
  const std::uint32_t programs = request.collapse_to != 0 ? request.collapse_to : request.ranks;
  if (h.algorithm != algo.name || h.collective != request.collective || h.ranks != programs ||
      h.bytes != request.bytes || h.root != request.root || h.counts != request.counts) {
    throw core::InternalError(fmt::format(
        "generator '{}' returned a schedule for '{}' ({} ranks, {} bytes, root {}) instead of "
        "({} ranks, {} bytes, root {})",
        algo.name, h.algorithm, h.ranks, h.bytes.value, h.root, request.ranks, request.bytes.value,
        request.root));
  }
  return s;
}

std::optional<CostTerms> Registry::cost(const AlgorithmInfo& algo, Request request) const {
  if (std::string why = refusal(algo, request); !why.empty()) {
    throw core::UsageError(fmt::format("{}: {}", algo.name, why));
  }
  if (!algo.cost) {
    return std::nullopt;
  }
  return algo.cost(request);
}

core::ScheduleHeader make_header(const Request& r, std::uint64_t tmp_bytes, std::string algorithm) {
  core::ScheduleHeader h;
  h.collective = r.collective;
  h.ranks = r.ranks;
  if (r.collapse_to != 0) {
    h.ranks = r.collapse_to;
    h.collapse = {r.symmetry, r.ranks};
  }
  h.bytes = r.bytes;
  h.root = r.root;
  h.counts = r.counts;
  // In place: the user buffer is the whole vector, except alltoall, which needs its input and its
  // output side by side (the symbolic checker reads the output from data[bytes]).
  h.data_bytes = core::BlockLayout(h).data_bytes();
  h.tmp_bytes = tmp_bytes;
  h.algorithm = std::move(algorithm);
  h.meter = r.meter;
  return h;
}

Registry make_default_registry() {
  Registry r;
  // allreduce, in Open MPI coll/tuned id order (2, 3, 4, 6)
  r.add(describe_reduce_bcast());
  r.add(describe_recursive_doubling());
  r.add(describe_ring());
  r.add(describe_rabenseifner());
  // block D: allreduce (MPI)
  r.add(describe_allreduce_basic_linear());
  r.add(describe_allreduce_segmented_ring());
  r.add(describe_allreduce_allgather_reduce());
  r.add(describe_allreduce_rab2());
  r.add(describe_allreduce_recursive_multiplying());
  r.add(describe_allreduce_recexch());
  r.add(describe_allreduce_k_reduce_scatter_allgather());
  r.add(describe_allreduce_tree());
  r.add(describe_allreduce_sra_knomial());
  r.add(describe_allreduce_hcoll());
  r.add(describe_allreduce_han());
  r.add(describe_allreduce_mpich_ch4());
  r.add(describe_allreduce_recursive_knomial());
  r.add(describe_allreduce_arrival_tree()); // issue 21: imbalance-aware
  // end of block D
  // reduce, bcast (block A)
  r.add(describe_reduce_linear());
  r.add(describe_reduce_chain());
  r.add(describe_reduce_pipeline());
  r.add(describe_reduce_binary());
  r.add(describe_reduce_binomial());
  r.add(describe_reduce_in_order_binary());
  r.add(describe_reduce_rabenseifner());
  r.add(describe_reduce_knomial());
  r.add(describe_reduce_release_gather());
  r.add(describe_bcast_linear());
  r.add(describe_bcast_chain());
  r.add(describe_bcast_pipeline());
  r.add(describe_bcast_split_binary_tree());
  r.add(describe_bcast_binary_tree());
  r.add(describe_bcast_binomial());
  r.add(describe_bcast_knomial());
  r.add(describe_bcast_scatter_allgather());
  r.add(describe_bcast_scatter_ring_allgather());
  // end of block A
  // allgather, reduce_scatter (block B)
  // allgather, in Open MPI coll/tuned id order (1-8), then SMPI's pair
  r.add(describe_allgather_linear());
  r.add(describe_allgather_bruck());
  r.add(describe_allgather_recursive_doubling());
  r.add(describe_allgather_ring());
  r.add(describe_allgather_neighbor_exchange());
  r.add(describe_allgather_two_proc());
  r.add(describe_allgather_sparbit());
  r.add(describe_allgather_direct());
  r.add(describe_allgather_pair());
  // reduce_scatter, in Open MPI coll/tuned id order (1-4), then MPICH's pairwise,
  // recursive_doubling and noncommutative
  r.add(describe_reduce_scatter_non_overlapping());
  r.add(describe_reduce_scatter_recursive_halving());
  r.add(describe_reduce_scatter_ring());
  r.add(describe_reduce_scatter_butterfly());
  r.add(describe_reduce_scatter_pairwise());
  r.add(describe_reduce_scatter_recursive_doubling());
  r.add(describe_reduce_scatter_noncommutative());
  // end of block B
  // alltoall, gather, scatter, barrier (block C), each in Open MPI coll/tuned id order
  r.add(describe_alltoall_linear());
  r.add(describe_alltoall_pairwise());
  r.add(describe_alltoall_bruck());
  r.add(describe_alltoall_linear_sync());
  r.add(describe_alltoall_two_proc());
  r.add(describe_alltoall_scattered());
  r.add(describe_gather_linear());
  r.add(describe_gather_binomial());
  r.add(describe_gather_linear_sync());
  r.add(describe_scatter_linear());
  r.add(describe_scatter_binomial());
  r.add(describe_scatter_linear_nb());
  r.add(describe_barrier_linear());
  r.add(describe_barrier_double_ring());
  r.add(describe_barrier_recursive_doubling());
  r.add(describe_barrier_dissemination());
  r.add(describe_barrier_two_proc());
  r.add(describe_barrier_tree());
  // end of block C
  // block F: MPI/SMPI extras
  r.add(describe_allgather_recexch_doubling());
  r.add(describe_allgather_recexch_halving());
  r.add(describe_allgather_2dmesh());
  r.add(describe_allgather_3dmesh());
  r.add(describe_alltoall_pairwise_sendrecv_replace());
  r.add(describe_alltoall_recursive_doubling());
  r.add(describe_alltoall_2dmesh());
  r.add(describe_alltoall_node_aware()); // issue 21: neighborhood exchanges
  r.add(describe_barrier_recexch());
  r.add(describe_bcast_pipelined_tree());
  // end of block F
  // block E: research
  r.add(describe_allreduce_swing_latency());
  r.add(describe_allreduce_swing_bandwidth());
  r.add(describe_allreduce_ring_reordered());
  r.add(describe_reduce_scatter_swing());
  r.add(describe_allgather_swing());
  r.add(describe_bcast_bine());
  // end of block E
  // block H: in-network
  r.add(describe_allreduce_collnet_direct());
  r.add(describe_allreduce_collnet_chain());
  r.add(describe_allreduce_nvls());
  r.add(describe_allreduce_sharp());
  r.add(describe_allgather_nvls());
  r.add(describe_reduce_scatter_nvls());
  // end of block H
  // block I: hierarchical
  r.add(describe_allreduce_two_level());
  r.add(describe_allreduce_hierarchical_ring());
  r.add(describe_allreduce_torus());
  r.add(describe_bcast_two_level());
  r.add(describe_reduce_two_level());
  r.add(describe_reduce_arrival_tree()); // issue 21: imbalance-aware
  r.add(describe_allgather_two_level());
  r.add(describe_gather_two_level());
  r.add(describe_scatter_two_level());
  // end of block I
  // block G: NCCL
  r.add(describe_allreduce_nccl_ring());
  r.add(describe_allreduce_nccl_tree());
  r.add(describe_allreduce_nvls_tree());
  r.add(describe_allgather_nccl_ring());
  r.add(describe_reduce_scatter_nccl_ring());
  r.add(describe_bcast_nccl_ring());
  r.add(describe_reduce_nccl_ring());
  r.add(describe_allgather_pat());
  r.add(describe_reduce_scatter_pat());
  r.add(describe_alltoall_nccl_p2p());
  r.add(describe_gather_nccl_p2p());
  r.add(describe_scatter_nccl_p2p());
  // end of block G
  // block J: MPICH circ_graph and smp
  r.add(describe_bcast_circ_graph());
  r.add(describe_allgather_circ_graph());
  r.add(describe_reduce_circ_graph());
  r.add(describe_barrier_smp());
  // end of block J
  // block K: MPICH tree
  r.add(describe_bcast_tree());
  // end of block K
  // block L: UCC's scatter-allgather k-nomial bcast, bidirectional reduce_scatter ring and
  // k-nomial gather
  r.add(describe_bcast_sag_knomial());
  r.add(describe_reduce_scatter_ring_bidirectional());
  r.add(describe_gather_knomial());
  // end of block L
  return r;
}

} // namespace collsim::algorithms
