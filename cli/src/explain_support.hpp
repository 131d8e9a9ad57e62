#pragma once
// Internal to `collsim explain` (command_explain.cpp): what it found for one call, and how that is
// printed as a table or JSON (command_explain_format.cpp).

#include "collsim/analysis/library_choice.hpp"
#include "collsim/analysis/nccl_defaults.hpp"
#include "collsim/core/result.hpp"
#include "collsim/core/scenario.hpp"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace collsim::cli::explain_detail {

/// Which library's default is explained.
enum class LibraryKind { ompi, nccl, ucc, hcoll, han, mpich };

inline std::string_view key(LibraryKind l) {
  switch (l) {
  case LibraryKind::nccl: return "nccl";
  case LibraryKind::ucc: return "ucc";
  case LibraryKind::hcoll: return "hcoll";
  case LibraryKind::han: return "ompi5";
  case LibraryKind::mpich: return "mpich";
  case LibraryKind::ompi: break;
  }
  return "ompi";
}

/// The stack that runs `l`'s choices on the library's own data path (docs/stacks.md); NCCL's
/// algorithms carry NCCL's mechanics without one.
inline std::string_view stack_of(LibraryKind l) {
  switch (l) {
  case LibraryKind::nccl: return "nccl";
  case LibraryKind::ucc: return "openmpi-4.1+ucc";
  case LibraryKind::hcoll: return "hpcx";
  case LibraryKind::han: return "openmpi-5.0";
  case LibraryKind::mpich: return "mpich-4";
  case LibraryKind::ompi: break;
  }
  return "openmpi-4.1";
}

/// One simulated candidate.
struct Timed {
  std::string algorithm;
  algorithms::RawParams params; ///< as users write them (only those the call sets)
  core::ResultRow row;
  bool is_default = false;
  std::optional<double> nccl_estimate_us; ///< NCCL's own cost-table time for the same pair
};

/// Everything `explain` found for one library.
struct Explanation {
  LibraryKind library = LibraryKind::ompi;
  analysis::LibraryChoice choice;
  std::optional<analysis::NcclChoice> nccl;        ///< NCCL's full decision
  std::optional<analysis::NcclModelInputs> inputs; ///< what NCCL's model read
  std::string considered;                          ///< which algorithms competed, in words
  /// Set when an MPI library's choice is priced without a stack (the scenario names none): its
  /// data path is then collsim's direct one, not the library's (a --stack that adds it).
  std::string stack_note;
  std::vector<Timed> ranking;       ///< every accepted candidate, fastest first
  std::vector<std::string> refused; ///< "algorithm params: reason"
  std::size_t default_rank = 0;     ///< 1-based place of the default
  double regret_pct = 0.0;          ///< 100 (t_default - t_best) / t_best
  double speedup = 1.0;             ///< t_default / t_best

  [[nodiscard]] const Timed& fastest() const { return ranking.front(); }
  [[nodiscard]] const Timed& library_default() const { return ranking.at(default_rank - 1); }
};

struct Call {
  core::CollectiveKind collective = core::CollectiveKind::allreduce;
  std::uint32_t ranks = 1;
  core::Bytes bytes{0};
  bool commutative = true;
  /// The v-variant's per-rank counts (empty: uniform; `bytes` is then their total) and the ranks'
  /// arrival times (empty: all at once), from --counts and --skew (docs/imbalance.md).
  std::vector<std::uint64_t> counts;
  std::vector<double> arrivals;
  std::string counts_text; ///< the --counts spec as given ("zipf:1.2"), for the title and JSON
  std::string skew_text;
};

std::string label(const std::string& algorithm, const algorithms::RawParams& params);
/// "1 MiB (1048576 B)", or "1000 B" when there is no larger unit: S as explain prints it.
std::string bytes_text(core::Bytes b);
/// The table for people; `top` rows of the ranking (the default's always).
std::string format_table(const Explanation& e, std::size_t top);
/// The JSON object of one library's explanation.
nlohmann::json to_json(const Explanation& e, const Call& call, const core::Scenario& scenario,
                       const std::string& engine, std::size_t top);

} // namespace collsim::cli::explain_detail
