#pragma once
// `collsim tune`'s sweep: the candidate algorithms of a collective (and a small set of segment
// sizes for those that segment) over rank counts and sizes; the fastest per point; neighbouring
// sizes with the same winner merged into ranges (core::TuneTable); each range compared with what
// Open MPI 4.1's fixed rules run (ompi_defaults.hpp). io/tuning_formats.hpp writes the table;
// docs/tuning.md describes both.

#include "collsim/algorithms/registry.hpp"
#include "collsim/analysis/simulate.hpp"
#include "collsim/core/collective.hpp"
#include "collsim/core/imbalance.hpp"
#include "collsim/core/scenario.hpp"
#include "collsim/core/tuning.hpp"
#include "collsim/core/units.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace collsim::analysis {

/// "4.1" or "5.0"; throws UnknownNameError listing both for anything else.
core::OmpiVersion ompi_version_from_name(std::string_view name);
std::string_view to_string(core::OmpiVersion v);

/// "MPICH", "SimGrid SMPI", "NCCL" or "UCC" for "mpich", "smpi", "nccl", "ucc"; throws
/// UnknownNameError listing them for anything else.
std::string library_title(std::string_view library);

/// Whether coll/tuned of `version` has algorithm `id` for `c` (formats.md d.3, from the source
/// enums: 4.1 as ompi41_algorithm_name; 5.0 adds allgather 7 sparbit. allreduce 7, allgather 8
/// and reduce 8 exist only on main/6.0, whatever 5.0's documentation lists).
bool ompi_has_algorithm(core::OmpiVersion version, core::CollectiveKind c, int id);

/// The Open MPI id of `algo` (its "ompi:<id>" alias) if `version` has it, else nullopt.
std::optional<int> ompi_algorithm_id(const algorithms::AlgorithmInfo& algo,
                                     core::OmpiVersion version);

/// "4.0" or "latest"; throws UnknownNameError listing both for anything else.
core::MpichVersion mpich_version_from_name(std::string_view name);

/// Whether MPICH `version` has MPIR_<Coll>_intra_<name> for `c`: 4.0 as Debian 12's
/// libmpich12 4.0.2 exports them, latest as algorithms.md 2.2 lists them.
bool mpich_has_algorithm(core::MpichVersion version, core::CollectiveKind c, std::string_view name);

/// Which algorithms a sweep may choose from.
struct CandidateFilter {
  /// Names or aliases; empty: every registered algorithm of the collective.
  std::vector<std::string> algorithms;
  /// Only algorithms Open MPI `*ompi` implements (an "ompi:<id>" alias valid for that series):
  /// what an Open MPI rules file can name.
  std::optional<core::OmpiVersion> ompi;
  /// Only algorithms with a "<library>:" alias ("mpich", "smpi", "nccl", "ucc"): what that
  /// library's tuning file can name. For "nccl", every protocol of an algorithm that has a
  /// `protocol` parameter is a candidate of its own (the tuner's CSV names one per range).
  std::optional<std::string> library;
  /// With library "mpich": only "mpich:" names this MPICH release has (the others are dropped
  /// from the candidates' aliases, so that writers pick a name MPICH knows).
  core::MpichVersion mpich = core::MpichVersion::latest;
};

/// The candidates a library's tuning file can name: "all" (no restriction), "ompi" (Open MPI
/// `ompi`'s), or "mpich" (of MPICH `mpich`), "smpi", "nccl", "ucc".
CandidateFilter library_candidates(std::string_view library, core::OmpiVersion ompi,
                                   core::MpichVersion mpich);

struct TuneOptions {
  std::vector<core::CollectiveKind> collectives{core::CollectiveKind::allreduce};
  std::vector<std::uint32_t> ranks{8};
  std::vector<core::Bytes> sizes; ///< S, nccl-tests' convention; sorted and deduplicated
  std::string engine = "loggp";
  CandidateFilter candidates;
  /// Values tried for an algorithm's `segment_size` parameter, where it has one (Open MPI rules
  /// carry a segment size per rule). Empty: only the algorithm's default.
  std::vector<core::Bytes> segment_sizes{core::Bytes{0}, core::Bytes{8192}, core::Bytes{65536}};
  std::uint32_t root = 0;
  /// Per-rank counts of the v-variants (scaled to each size: a distribution or a weights file)
  /// and the ranks' arrival times; none: uniform and all at once (docs/imbalance.md).
  core::CountsSpec counts;
  core::SkewSpec skew;
  unsigned threads = 0;   ///< 0: all hardware threads
  Progress progress = {}; ///< (done, total) over the whole sweep; thread-safe
  /// Where the points run (analysis/executor.hpp); null: `threads` threads of this process.
  const Executor* executor = nullptr;
};

/// One timed point of a sweep: the input of the merging rule.
struct TunePoint {
  core::Bytes bytes{0};
  std::size_t candidate = 0; ///< index into the candidate list
  core::Seconds time;
};

/// The merging rule, on the points of one (collective, ranks): per size the fastest candidate
/// (ties: the lower index), then neighbouring sizes with the same winner form one range, with
/// the smallest margin over any other candidate and the runner-up where it is smallest. A winner
/// that changes at exactly one size gives exactly two ranges. library_default and regret_pct
/// are left empty (tune() fills them).
std::vector<core::TuneRange> merge_ranges(const std::vector<TunePoint>& points,
                                          const std::vector<core::TuneCandidate>& candidates);

/// The candidates of `collective` (algorithm x segment size), in registry order, or in the
/// filter's order when it names algorithms. Throws UnknownNameError for a name the registry
/// does not know, UsageError when the filter leaves none.
std::vector<core::TuneCandidate> tune_candidates(const algorithms::Registry& registry,
                                                 core::CollectiveKind collective,
                                                 const TuneOptions& options);

/// Runs the sweep and builds the table. Points a candidate refuses (constraints such as a power
/// of two) are listed in `skipped`; sizes no candidate runs are left out of the ranges.
core::TuneTable tune(const core::Scenario& scenario, const TuneOptions& options,
                     const algorithms::Registry& registry);

} // namespace collsim::analysis
