#pragma once
// Validation: collsim's predictions against measured times (issue 6; docs/validation.md). The
// measured points come from logs (io::parse_log), converted by the caller into MeasuredPoint, so
// that analysis does not depend on the log formats.

#include "collsim/algorithms/registry.hpp"
#include "collsim/analysis/simulate.hpp"
#include "collsim/core/scenario.hpp"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace collsim::analysis {

/// One measured time of a collective, in collsim's conventions (bytes: nccl-tests' S).
struct MeasuredPoint {
  core::CollectiveKind collective = core::CollectiveKind::allreduce;
  std::uint32_t ranks = 0;
  core::Bytes bytes{0};
  core::Seconds time;
  bool in_place = false;
  std::string file; ///< where it was measured, for reports
  std::size_t line = 0;
};

struct ValidationRow {
  MeasuredPoint measured;
  std::string algorithm; ///< the algorithm whose prediction is compared
  core::Seconds predicted;
  double error_pct = 0.0; ///< 100 (predicted - measured) / measured
};

/// Median and 90th percentile of |error| over a set of rows.
struct ErrorStats {
  std::size_t points = 0;
  double median_abs_err_pct = 0.0;
  double p90_abs_err_pct = 0.0;
};

struct ValidationSummary {
  ErrorStats all;
  ErrorStats below_1MiB; ///< bytes < 1 MiB
  ErrorStats from_1MiB;  ///< bytes >= 1 MiB
};

struct ValidationResult {
  std::vector<ValidationRow> rows;  ///< in the order of the measured points
  std::vector<std::string> skipped; ///< "file:line: why"
  ValidationSummary summary;
};

struct ValidateOptions {
  /// An algorithm name or alias, or "auto": the fastest algorithm collsim has for the point (the
  /// libraries' own default choices arrive with the tuning issue).
  std::string algorithm = "auto";
  EngineChoice engine;
  unsigned threads = 0; ///< 0: all cores
};

/// Predicts every measured point on the scenario's topology and compares. Points the scenario
/// cannot run (more ranks than the machine has, no algorithm for the point) are skipped with the
/// reason; an unknown algorithm name is an UnknownNameError.
ValidationResult validate(const core::Scenario& scenario, std::span<const MeasuredPoint> points,
                          const algorithms::Registry& registry, const ValidateOptions& options);

/// The statistics of a set of rows (exposed for tests and calibration).
ValidationSummary summarize(const std::vector<ValidationRow>& rows);

} // namespace collsim::analysis
