#pragma once
// Calibration: fitting a scenario's parameters to measured times (issue 6; docs/validation.md).
//
// The model is collsim itself: a parameter set (bandwidths and latencies of the topology's levels,
// LogGP o, reduce bandwidth) is applied to the scenario, every measured point is predicted, and the
// residuals log(predicted / measured) are minimised by Ceres Solver (Levenberg-Marquardt trust
// region) on the logarithms of the parameters, within bounds that keep each value physical: a
// bandwidth never above the link's nominal rate nor below 1/100 of it, a latency or overhead
// between 1/100 and 100 times its starting value. Relative residuals weight a 8 B and a 1 GiB
// point alike; a robust loss (Huber, Cauchy) keeps a few badly predicted rows from outvoting the
// many.

#include "collsim/analysis/validate.hpp"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace collsim::analysis {

struct FitParameter {
  std::string path; ///< scenario YAML path: "topology.node.nic_bandwidth"
  /// What the value is: bytes/s, seconds, or a dimensionless factor (nccl.*_factor).
  enum class Unit : std::uint8_t { bandwidth, seconds, factor } unit = Unit::bandwidth;
  double initial = 0.0; ///< the scenario's value
  double value = 0.0;   ///< fitted
  double lower = 0.0;
  double upper = 0.0;
  /// One standard deviation of the fitted value (Ceres' covariance at the optimum), relative:
  /// 0.05 = +/- 5 %; infinity where the logs do not determine it (rank-deficient covariance).
  double rel_sigma = 0.0;
};

/// How residuals are weighed: squared (least squares) or robust, where a residual beyond the
/// scale counts less than its square (Huber: linearly; Cauchy: logarithmically).
enum class FitLoss : std::uint8_t { squared, huber, cauchy };

/// "squared", "huber", "cauchy"; UnknownNameError otherwise.
FitLoss parse_fit_loss(const std::string& name);
std::string to_string(FitLoss loss);

struct CalibrateOptions {
  std::string algorithm = "auto";      ///< as in ValidateOptions
  std::vector<std::string> parameters; ///< YAML paths; empty: default_fit_parameters()
  unsigned threads = 0;
  int max_iterations = 50; ///< Ceres iterations (successful and unsuccessful steps)
  FitLoss loss = FitLoss::huber;
  /// Where a robust loss departs from the square, in residual units (log(predicted / measured)):
  /// 0.1 is about a 10 % error.
  double loss_scale = 0.1;
};

struct CalibrationResult {
  std::vector<FitParameter> parameters;
  ValidationSummary before;
  ValidationSummary after;
  std::optional<ValidationSummary> holdout_before;
  std::optional<ValidationSummary> holdout_after;
  /// The fitted scenario on every row it was measured against, fitted and held out (the
  /// accuracy: section of the written scenario).
  ValidationSummary measured;
  core::Scenario fitted; ///< the scenario with the fitted values
  int iterations = 0;
  std::size_t points = 0; ///< measured points used for the fit
  FitLoss loss = FitLoss::huber;
  double loss_scale = 0.0;
};

/// The parameters calibration fits by default: the links ranks use and the reduction rate
/// (docs/validation.md lists them per topology kind), and, when some of the points were measured
/// with NCCL, the call overhead and the LL, LL128 and Simple corrections (core::NcclSpec).
std::vector<std::string> default_fit_parameters(const core::TopologySpec& topology,
                                                bool nccl = false);

/// A fitted value as the scenario YAML writes it: "25 GB/s", "1.5 us" or "0.93".
std::string format_fit_value(FitParameter::Unit unit, double value);

/// A parameter as calibration starts it: its unit, the scenario's value (`initial`), the starting
/// value (`value`: the initial one, or a small default where the scenario has 0) and its bounds.
/// UsageError for a path the scenario's topology kind does not have or a value that cannot be
/// scaled (0 without a default).
FitParameter fit_parameter(const core::Scenario& scenario, const std::string& path);

/// Every path calibration can fit (for messages).
std::vector<std::string> fittable_parameters();

/// The value of a fittable parameter in the scenario's units (bytes/s, seconds or a factor), and
/// its unit. UsageError for a path that the scenario's topology kind does not have.
double get_parameter(const core::Scenario& scenario, const std::string& path);
FitParameter::Unit parameter_unit(const core::Scenario& scenario, const std::string& path);
/// Sets a fittable parameter (what-if studies, calibration).
void set_parameter(core::Scenario& scenario, const std::string& path, double value);

/// Fits the parameters to `fit` and reports errors before and after, also on `holdout` when it
/// is not empty. UsageError for an unknown parameter path or too few points.
CalibrationResult calibrate(const core::Scenario& scenario, std::span<const MeasuredPoint> fit,
                            std::span<const MeasuredPoint> holdout,
                            const algorithms::Registry& registry, const CalibrateOptions& options);

/// The points of one measured log (leave-one-out holds out one log at a time).
struct MeasuredLog {
  std::string name; ///< as the user gave it (a path)
  std::vector<MeasuredPoint> points;
};

/// One round of leave-one-log-out: the scenario fitted to all logs but `log`, then `log` predicted.
struct LeaveOneOutFold {
  std::string log;
  std::size_t fit_points = 0; ///< rows of the other logs the fit used
  std::vector<FitParameter> parameters;
  ValidationSummary before;        ///< the left-out log predicted by the scenario as given
  ValidationSummary after;         ///< ... by the scenario fitted without it
  std::vector<ValidationRow> rows; ///< the left-out log's rows, predicted after the fit
};

struct LeaveOneOutResult {
  std::vector<LeaveOneOutFold> folds; ///< one per log, in the logs' order
  ValidationSummary pooled_before;    ///< every left-out row, predicted by the scenario as given
  ValidationSummary pooled_after;     ///< every left-out row, predicted without its own log
};

/// Leave-one-log-out cross-validation: for each log in turn, calibrate on the others and predict
/// it. UsageError for fewer than 2 logs (and whatever calibrate() refuses).
LeaveOneOutResult leave_one_out(const core::Scenario& scenario, std::span<const MeasuredLog> logs,
                                const algorithms::Registry& registry,
                                const CalibrateOptions& options);

/// The fitted scenario as YAML that loads like any other: `base: <base>` (the scenario calibrated,
/// by preset name or path) plus the fitted values, with the fit's numbers in comments.
std::string calibrated_yaml(const CalibrationResult& result, const std::string& base,
                            const std::string& name);

} // namespace collsim::analysis
