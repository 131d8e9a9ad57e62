#pragma once
// Open MPI 4.1's default algorithm choice: a re-implementation of coll/tuned's fixed decision
// rules (ompi/mca/coll/tuned/coll_tuned_decision_fixed.c, v4.1.x, the tables "generated based
// off of results that were gathered using the ompi-collectives-tuning package"), followed by
// the internal fallbacks of the coll/base algorithms the rules lead to (coll_base_*.c, v4.1.x).
// docs/library-defaults.md has the id -> algorithm table and the known gaps.
//
// Version pinned: v4.1.x. The tables were read from a stored copy of the v4.1-era
// coll_tuned_decision_fixed.c (no sparbit/direct allgather, no knomial reduce, no
// allgather_reduce allreduce, no disjoint tables) and checked against Debian 12's Open MPI 4.1.4:
// `ompi_info --all` lists exactly the algorithm ids used here, mca_coll_tuned.so exports no
// *_disjoint_dec_fixed function, and the running library picked the tables' id at every
// threshold T and T - 1 tried for p = 2..128 (docs/library-defaults.md, "Verification").
//
// Open MPI main (6.x) differs: bcast and allreduce switch to separate tables on communicators
// with at most one rank per node ("disjoint"), allreduce has id 7 (allgather_reduce), allgather
// ids 7 (sparbit) and 8 (direct-messaging), reduce id 8 (knomial), and the fixed path passes
// faninout 2 to reduce and allgather. In 4.1 every fixed decision passes faninout 0 and segsize 0.

#include "collsim/algorithms/registry.hpp"
#include "collsim/analysis/library_choice.hpp"
#include "collsim/core/collective.hpp"
#include "collsim/core/units.hpp"
#include "collsim/stacks/ompi_tuned.hpp"

#include <cstdint>
#include <optional>
#include <string>

namespace collsim::analysis {

/// One collective call as Open MPI sees it. `bytes` is collsim's S (nccl-tests' convention, see
/// algorithms::make_header); ompi41_metric converts it to the size Open MPI's rules compare.
struct OmpiCall {
  core::CollectiveKind collective = core::CollectiveKind::allreduce;
  std::uint32_t ranks = 1;
  core::Bytes bytes{0};
  bool commutative = true; ///< MPI_SUM on floats is commutative; user ops may not be
  /// Size of one datatype element in bytes (4: MPI_FLOAT, as nccl-tests and OSU's reductions).
  /// Some coll/base algorithms fall back on the element count (e.g. ring allreduce with
  /// count < p runs recursive doubling), so the same S can run different algorithms.
  std::uint32_t element_bytes = 4;
  /// The call is the v-variant (MPI_Alltoallv, MPI_Allgatherv, MPI_Gatherv, MPI_Scatterv,
  /// MPI_Reduce_scatter with per-rank counts): coll/tuned decides it with other rules
  /// (ompi41_v_default); `bytes` is then the counts' total (alltoall: the largest row).
  bool varying = false;
  /// What the run sets for coll/tuned (stacks::read_ompi_tuning: a scenario's `mpi.env`, a log's
  /// launch command): with coll_tuned_use_dynamic_rules on, a forced algorithm of the collective
  /// replaces the fixed rules (its forced segment size and chain fanout with it).
  stacks::OmpiTuning tuning{};
};

/// The message size m (bytes) that coll/tuned's fixed rules compare for this call:
/// the whole vector for allreduce, bcast, reduce and reduce_scatter (S); the per-rank block for
/// allgather, gather and scatter (S / p); the per-peer block for alltoall (S / p); 0 for barrier.
[[nodiscard]] std::uint64_t ompi41_metric(const OmpiCall& call);

/// The coll/tuned algorithm id the 4.1 fixed rules select (before any fallback inside coll/base),
/// and the rule as text. For ranks >= 2.
struct OmpiRule {
  int id = 0;
  std::string reason; ///< e.g. "p < 8, commutative: 16 B <= m < 8 KiB -> 3"

  friend bool operator==(const OmpiRule&, const OmpiRule&) = default;
};
[[nodiscard]] OmpiRule ompi41_fixed_rule(core::CollectiveKind collective, std::uint32_t ranks,
                                         std::uint64_t m, bool commutative = true);

/// Open MPI 4.1's name for coll/tuned algorithm `id` of `collective` ("rabenseifner"), or "" if
/// 4.1 has no such id.
[[nodiscard]] std::string ompi41_algorithm_name(core::CollectiveKind collective, int id);

/// The reduce and the bcast that Open MPI 4.1's nonoverlapping allreduce (coll/tuned algorithm 2)
/// runs for `call` (an allreduce): it calls the communicator's own reduce and bcast
/// (coll_base_allreduce.c), i.e. coll/tuned's fixed rules for the same count and datatype, with
/// their fall-backs; as reduce_bcast's parameters {"reduce", name}, {"bcast", name}. Notes on the
/// fall-backs taken are appended to `notes` (optional).
[[nodiscard]] algorithms::RawParams
ompi41_nonoverlapping_halves(const OmpiCall& call, const algorithms::Registry& registry,
                             std::vector<std::string>* notes = nullptr);

/// What Open MPI 4.1 (coll/tuned: its fixed rules, or the algorithm `call.tuning` forces) runs for
/// `call`, as a collsim algorithm accepted by `registry` for that request. nullopt when the call
/// has no uniform MPI form collsim can generate (ranks 0; alltoall with S not a multiple of p).
/// Throws UsageError for element_bytes 0, and InternalError if `registry` lacks an algorithm the
/// model needs. ranks == 1: coll/tuned declines single-rank communicators (coll/self copies
/// locally), so the choice is collsim's linear algorithm of the collective, which has no messages
/// at p = 1.
[[nodiscard]] std::optional<LibraryChoice> ompi41_default(const OmpiCall& call,
                                                          const algorithms::Registry& registry);

/// ompi41_default for a v-collective (`call.varying`; ranks >= 2): coll/tuned 4.1's
/// alltoallv rules (communicator size only), its allgatherv rules (the average block
/// total / p), MPI_Reduce_scatter's (the reduce_scatter rules, whose m is already the counts'
/// total), and coll/basic's linear gatherv and scatterv (coll/tuned has none). The choice is an
/// algorithm that takes counts wherever collsim has one; otherwise the registry refuses it with
/// its reason when the point runs.
[[nodiscard]] std::optional<LibraryChoice> ompi41_v_default(const OmpiCall& call,
                                                            const algorithms::Registry& registry);

} // namespace collsim::analysis
