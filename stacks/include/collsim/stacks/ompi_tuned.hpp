#pragma once
// Open MPI 4.1 coll/tuned's algorithm ids and the MCA parameters that force one
// (ompi/mca/coll/tuned, v4.1.x): with coll_tuned_use_dynamic_rules true, a communicator's
// collective runs coll_tuned_<coll>_algorithm N (N != 0) instead of the fixed decision rules
// (coll_tuned_module.c, COLL_TUNED_EXECUTE_IF_DYNAMIC; coll_tuned_decision_dynamic.c), with that
// collective's forced segment size and fanouts (coll_tuned_<coll>_algorithm_segmentsize, default
// 0; _tree_fanout and _chain_fanout, default 4: ompi_coll_tuned_init_tree_fanout and
// _chain_fanout). Without use_dynamic_rules the algorithm parameters are not even consulted. A
// rules file (coll_tuned_dynamic_rules_filename) would take precedence; collsim does not read one.
//
// A run sets them as mpirun's `--mca NAME VALUE` or as the environment variable OMPI_MCA_NAME;
// a scenario writes the latter in `mpi.env` (docs/scenario-format.md), a log's launch command
// either (io::LogInfo::mca). Values read as Open MPI's mca_base_var reads them
// (opal/mca/base/mca_base_var.c, mca_base_var_enum.c): use_dynamic_rules a boolean (an integer,
// or true/t/yes/y/enabled, false/f/no/n/disabled), an algorithm its id or its name in coll/tuned's
// list (ompi_info's, any case), the segment size and fanouts integers with an optional k, m or g
// suffix (powers of 1024).

#include "collsim/core/collective.hpp"
#include "collsim/core/scenario.hpp"

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>

namespace collsim::stacks {

/// One coll/tuned algorithm: its id and its name as 4.1.4's `ompi_info --all` lists them.
struct OmpiAlgorithmId {
  int id = 0;
  std::string_view name;
};

/// coll/tuned 4.1's algorithms of `collective` (coll_tuned_<coll>_algorithm's values but 0,
/// "ignore").
[[nodiscard]] std::span<const OmpiAlgorithmId> ompi41_algorithms(core::CollectiveKind collective);

/// coll/tuned's MCA name of a collective ("allreduce", "reduce_scatter").
[[nodiscard]] std::string_view ompi_mca_collective(core::CollectiveKind collective);

/// The forced algorithm of one collective and its forced parameters.
struct OmpiForced {
  int id = 0;                    ///< coll_tuned_<coll>_algorithm; 0: the fixed rules
  std::uint64_t segsize = 0;     ///< coll_tuned_<coll>_algorithm_segmentsize, bytes; 0: unsegmented
  std::uint32_t tree_fanout = 4; ///< coll_tuned_<coll>_algorithm_tree_fanout
  std::uint32_t chain_fanout = 4; ///< coll_tuned_<coll>_algorithm_chain_fanout
  /// Where the algorithm was set, for reports: "coll_tuned_allreduce_algorithm 4 (file:3:21)".
  std::string source;
  bool operator==(const OmpiForced&) const = default;
};

/// What a run sets for coll/tuned.
struct OmpiTuning {
  bool dynamic_rules = false; ///< coll_tuned_use_dynamic_rules
  /// Per collective whose algorithm or forced parameters the run sets.
  std::map<core::CollectiveKind, OmpiForced> forced;
  /// coll_tuned_dynamic_rules_filename as the run sets it ("": none). Open MPI consults such a
  /// file before the forced algorithms; collsim does not read it, and its choices say so.
  std::string rules_file;
  /// The forced algorithm of `collective`, as coll/tuned applies it: only with dynamic rules on
  /// and an id other than 0; nullptr otherwise.
  [[nodiscard]] const OmpiForced* forced_for(core::CollectiveKind collective) const;
  bool operator==(const OmpiTuning&) const = default;
};

/// coll/tuned's settings among `mpi`'s environment variables (OMPI_MCA_coll_tuned_*; null: none).
/// A bad value, or an algorithm id 4.1 does not have, throws ScenarioError at the value
/// (`mpi.env.OMPI_MCA_...`), or UsageError where the map has no position.
[[nodiscard]] OmpiTuning read_ompi_tuning(const core::MpiSpec* mpi);

/// Whether read_ompi_tuning reads environment variable `name` (for mpi.env's unread list).
[[nodiscard]] bool is_ompi_tuning_variable(std::string_view name);

} // namespace collsim::stacks
