#pragma once
// The health check (issue 19; docs/health-check.md): is a measured run as fast as the scenario
// says it should be, within what the scenario's predictions were measured to miss by? And the
// expectation itself, as thresholds other tools load (a busbw floor per size).

#include "collsim/analysis/validate.hpp"
#include "collsim/core/scenario.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace collsim::analysis {

/// The `accuracy:` section of a scenario (core::AccuracySpec, docs/scenario-format.md) for a
/// validation's statistics, with `measured_on` saying which rows: what calibrate writes into the
/// profiles it fits and `validate --format accuracy` prints for a preset. The extremes are
/// rounded up to 0.1 %, so that the rows they come from stay within the band. A size range of
/// fewer than 3 rows is left out (no band there): one or two rows say nothing about the spread.
std::string accuracy_yaml(const ValidationSummary& summary, const std::string& measured_on);

/// A measured row against its expectation.
enum class Verdict : std::uint8_t {
  ok,      ///< within the band
  slow,    ///< slower than expected by more than the band: the run is not healthy
  fast,    ///< faster than expected by more than the band: the model misses, the run is fine
  unjudged ///< no band for the row's size (the scenario's accuracy has no row there)
};
std::string_view to_string(Verdict v);

/// How far a healthy run may be from the prediction, in validate's error (100 (predicted -
/// measured) / measured): down to -slower_pct, up to +faster_pct.
struct Band {
  double slower_pct = 0.0;
  double faster_pct = 0.0;
  bool operator==(const Band&) const = default;
};

/// The band of a row of `bytes`: `fixed_pct` both ways when it is >= 0 (--tolerance PCT), else
/// the extremes the scenario's accuracy records for the row's size range (below or from 1 MiB:
/// the most a measured run was slower and faster than predicted); none when that range has no
/// measured rows.
std::optional<Band> band_of(const core::AccuracySpec& accuracy, core::Bytes bytes,
                            double fixed_pct);

/// The verdict on a row whose error is `error_pct` under `band`: slow below -slower_pct (the
/// measured time above predicted / (1 - slower_pct)), fast above +faster_pct, else ok.
Verdict verdict(double error_pct, const std::optional<Band>& band);

/// The longest a healthy run may take for a predicted time under a band: predicted / (1 - band)
/// (the error at -band); infinite for a band of 100 % or more.
double slowest_healthy(double predicted, double band_pct);

struct HealthRow {
  ValidationRow row;
  std::optional<Band> band;
  Verdict verdict = Verdict::unjudged;
};

struct HealthResult {
  std::vector<HealthRow> rows;
  std::vector<std::string> skipped; ///< rows validate could not predict, "file:line: why"
  std::size_t ok = 0;
  std::size_t slow = 0;
  std::size_t fast = 0;
  std::size_t unjudged = 0;
  /// No slow row among at least one judged row.
  [[nodiscard]] bool healthy() const { return slow == 0 && ok + fast > 0; }
};

/// Judges every row of a validation against the scenario's accuracy (or `fixed_pct`, >= 0).
HealthResult judge(const ValidationResult& validation, const core::AccuracySpec& accuracy,
                   double fixed_pct);

/// What collsim expects a library to take for one collective at each size (`collsim expect`):
/// validate's prediction of a point that was not measured, under the library that would run it
/// (NCCL's choice for Library::nccl, the stack's or Open MPI's for Library::mpi).
struct Expectation {
  ValidationRow row; ///< measured.time is 0; predicted, algorithm and chosen_by are set
  std::optional<Band> band;
};
struct ExpectRequest {
  core::CollectiveKind collective = core::CollectiveKind::allreduce;
  std::uint32_t ranks = 0;
  std::vector<core::Bytes> sizes;
  Library library = Library::nccl;
  double fixed_pct = -1.0; ///< --tolerance PCT, or < 0 for the scenario's accuracy
};
struct ExpectResult {
  std::vector<Expectation> rows;
  std::vector<std::string> skipped; ///< sizes collsim cannot predict, with the reason
};
ExpectResult expect(const core::Scenario& scenario, const ExpectRequest& request,
                    const algorithms::Registry& registry, const ValidateOptions& options);

} // namespace collsim::analysis
