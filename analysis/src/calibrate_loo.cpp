// Leave-one-log-out cross-validation of calibration (calibrate.hpp, docs/validation.md): each log
// of a machine class is predicted by the scenario fitted to the other logs, so the error reported
// is the error on a run the fit never saw (a stronger test than --holdout-split, whose held-out
// rows come from the same run as the fitted ones).

#include "collsim/analysis/calibrate.hpp"

#include "collsim/core/errors.hpp"

#include <fmt/format.h>

namespace collsim::analysis {

LeaveOneOutResult leave_one_out(const core::Scenario& scenario, std::span<const MeasuredLog> logs,
                                const algorithms::Registry& registry,
                                const CalibrateOptions& options) {
  if (logs.size() < 2) {
    throw core::UsageError(fmt::format(
        "leave-one-out needs at least 2 logs (each is left out in turn), got {}", logs.size()));
  }
  ValidateOptions vopt;
  vopt.algorithm = options.algorithm;
  vopt.threads = options.threads;
  LeaveOneOutResult out;
  std::vector<ValidationRow> pooled_before;
  std::vector<ValidationRow> pooled_after;
  for (std::size_t left = 0; left < logs.size(); ++left) {
    std::vector<MeasuredPoint> fit;
    for (std::size_t i = 0; i < logs.size(); ++i) {
      if (i != left) {
        fit.insert(fit.end(), logs[i].points.begin(), logs[i].points.end());
      }
    }
    const CalibrationResult r = calibrate(scenario, fit, {}, registry, options);
    LeaveOneOutFold fold;
    fold.log = logs[left].name;
    fold.fit_points = r.points;
    fold.parameters = r.parameters;
    // The left-out log exactly as `collsim validate` predicts it, before and after.
    ValidationResult before = validate(scenario, logs[left].points, registry, vopt);
    ValidationResult after = validate(r.fitted, logs[left].points, registry, vopt);
    fold.before = before.summary;
    fold.after = after.summary;
    pooled_before.insert(pooled_before.end(), before.rows.begin(), before.rows.end());
    pooled_after.insert(pooled_after.end(), after.rows.begin(), after.rows.end());
    fold.rows = std::move(after.rows);
    out.folds.push_back(std::move(fold));
  }
  out.pooled_before = summarize(pooled_before);
  out.pooled_after = summarize(pooled_after);
  return out;
}

} // namespace collsim::analysis
