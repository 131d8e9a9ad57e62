#pragma once
// A tuning table as plain values: per collective and rank count, the size ranges with their
// fastest algorithm. analysis::tune (analysis/tune.hpp) fills it from a sweep; io's tuning
// writers (io/tuning_formats.hpp) print it as CSV, JSON or an Open MPI rules file. It lives in
// core, like ResultRow, so that io can write it without depending on analysis.

#include "collsim/core/collective.hpp"
#include "collsim/core/units.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace collsim::core {

/// The Open MPI release series a rules file is written for. They differ in the algorithm ids
/// coll/tuned knows (formats.md d.3: 5.0 adds allgather 7 sparbit) and in the file syntax (d.4:
/// the "rule-file-version-2" header and the fifth number per rule).
enum class OmpiVersion : std::uint8_t { v4_1, v5_0 };

/// The MPICH release whose algorithm names a selection file uses: 4.0 (Debian 12's 4.0.2: no
/// allreduce ring, tree or recexch; barrier "dissemination") or the current one (algorithms.md
/// 2.2's list, barrier "k_dissemination"). MPICH aborts at MPI_Init on a name it does not know.
enum class MpichVersion : std::uint8_t { v4_0, latest };

/// One algorithm with fixed parameter values: what a range's winner is.
struct TuneCandidate {
  std::string algorithm;                     ///< canonical collsim name
  std::map<std::string, std::string> params; ///< swept parameters as written ("8192")
  std::optional<int> ompi_id;    ///< Open MPI coll/tuned id (for the table's version), if any
  std::int64_t segment_size = 0; ///< bytes the algorithm segments by; 0: none (rules: SEGSIZE)
  std::int64_t fanout = 0;       ///< chain count of chain algorithms, else 0 (rules: FANINOUT)
  /// The algorithm's registry aliases ("mpich:ring", "smpi:lr"): its names in the libraries
  /// the other tuning files are written for.
  std::vector<std::string> aliases;
  bool operator==(const TuneCandidate&) const = default;
};

/// The candidate's name in `library` ("mpich", "smpi", "nccl", "ucc"): its first
/// "<library>:" alias, or nullopt when the library has no such algorithm.
inline std::optional<std::string> library_name(const TuneCandidate& c, std::string_view library) {
  for (const std::string& alias : c.aliases) {
    if (alias.size() > library.size() + 1 && alias.compare(0, library.size(), library) == 0 &&
        alias[library.size()] == ':') {
      return alias.substr(library.size() + 1);
    }
  }
  return std::nullopt;
}

/// "ring", or "segmented_ring segment_size=8192" with the swept parameters.
inline std::string label(const TuneCandidate& c) {
  std::string out = c.algorithm;
  for (const auto& [name, value] : c.params) {
    out += " " + name + "=" + value;
  }
  return out;
}

/// A contiguous run of swept sizes [from, to] (S, nccl-tests' convention) with one winner.
struct TuneRange {
  Bytes from{0};
  Bytes to{0};
  TuneCandidate winner;
  /// The closest other candidate: the one behind the winner where the margin is smallest.
  std::optional<TuneCandidate> runner_up;
  /// Smallest advantage over the best other candidate in the range, (t_other / t_win - 1) x 100;
  /// 0 when no other candidate ran.
  double margin_pct = 0.0;
  /// Open MPI 4.1's fixed-rule choice at the sizes of the range, distinct labels in order
  /// ("ompi:4 ring"); empty where it has none.
  std::vector<std::string> library_default;
  /// Largest (t_default / t_win - 1) x 100 over the range: what the library default loses.
  double regret_pct = 0.0;
  bool operator==(const TuneRange&) const = default;
};

/// The ranges of one collective at one rank count, ascending and without overlap.
struct TuneBlock {
  CollectiveKind collective = CollectiveKind::allreduce;
  std::uint32_t ranks = 0;
  std::vector<TuneRange> ranges;
  bool operator==(const TuneBlock&) const = default;
};

struct TuneTable {
  std::string scenario;
  std::string engine;
  /// The library stack the candidates ran under (docs/stacks.md); "" when none was named.
  std::string stack;
  std::vector<Bytes> sizes; ///< the swept sizes, ascending
  /// Set when the candidates were limited to what this Open MPI series implements: then every
  /// winner has an ompi_id valid for it, and a rules file can be written.
  std::optional<OmpiVersion> ompi;
  /// Set when the candidates were limited to one library's algorithms ("mpich", "smpi", "nccl",
  /// "ucc": those with a "<library>:" alias), so that its tuning file can name every winner.
  std::optional<std::string> library;
  /// Whose default choice `library_default` and `regret_pct` describe: "Open MPI 4.1" (coll/tuned's
  /// fixed rules) or, for NCCL's candidates, "NCCL 2.30.7" (its tuning model).
  std::string default_model = "Open MPI 4.1";
  /// The v-variant's counts spec ("zipf:1.2") and the arrival skew ("late:1ms") the sweep ran
  /// with (docs/imbalance.md); "" when uniform and all at once. Only the table, CSV and JSON
  /// formats carry counts: no library's tuning file keys a rule on a distribution of counts.
  std::string counts;
  std::string skew;
  std::vector<TuneBlock> blocks;    ///< collective-major (in the requested order), then ranks
  std::vector<std::string> skipped; ///< candidate points refused, with the reason
  bool operator==(const TuneTable&) const = default;
};

/// How people write a tuning library's name: "MPICH", "SimGrid SMPI", "NCCL", "UCC"; "" for a name
/// that is none of collsim's tuning libraries ("mpich", "smpi", "nccl", "ucc").
inline std::string_view tuning_library_title(std::string_view library) {
  if (library == "mpich") {
    return "MPICH";
  }
  if (library == "smpi") {
    return "SimGrid SMPI";
  }
  if (library == "nccl") {
    return "NCCL";
  }
  if (library == "ucc") {
    return "UCC";
  }
  return {};
}

/// Open MPI coll/tuned's COLLTYPE id of a collective, as rules files number them (formats.md d.2,
/// identical in 4.1 and 5.0).
inline int ompi_colltype(CollectiveKind c) {
  switch (c) {
  case CollectiveKind::allgather: return 0;
  case CollectiveKind::allreduce: return 2;
  case CollectiveKind::alltoall: return 3;
  case CollectiveKind::barrier: return 6;
  case CollectiveKind::bcast: return 7;
  case CollectiveKind::gather: return 9;
  case CollectiveKind::reduce: return 11;
  case CollectiveKind::reduce_scatter: return 12;
  case CollectiveKind::scatter: return 15;
  }
  return -1;
}

} // namespace collsim::core
