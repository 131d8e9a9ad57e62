// Calibration's fit: nonlinear least squares with Ceres Solver over collsim's own predictions
// (calibrate.hpp, docs/validation.md). The parameters and the YAML are in calibrate_parameters.cpp,
// leave-one-log-out in calibrate_loo.cpp.
//
// Why this shape:
// - Parameters are fitted as their logarithms, with Ceres bounds on the logarithms of the natural
//   bounds. The values span 15 orders of magnitude (1e-6 s latencies, 1e11 B/s bandwidths); in log
//   space one step size and one trust region fit them all, a step is a relative change (as the
//   residuals are relative errors), a value can never reach 0 or go negative, and the covariance
//   of a log-parameter is directly the relative uncertainty reported.
// - Residuals are log(predicted / measured), one Ceres residual block per measured row, so that
//   the robust loss (Huber, Cauchy) acts on each row: a loss on a block acts on the block's whole
//   squared norm, which for one block of all rows would only rescale the sum.
// - The residuals come from running the simulator, so derivatives are numeric: central differences
//   with a step of 1e-4 in log space (0.01 % of the value), one-sided inwards at a bound so that
//   every probe stays within the physical bounds. One simulator run predicts all rows; a small
//   cache keyed by the parameter values lets the n one-row blocks share it (and the 2k runs of a
//   Jacobian), instead of n runs per evaluation.

#include "collsim/analysis/calibrate.hpp"

#include "calibrate_determined.hpp"
#include "collsim/core/errors.hpp"

#include <Eigen/SVD>
#include <algorithm>
#include <ceres/ceres.h>
#include <cmath>
#include <deque>
#include <exception>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <limits>
#include <memory>
#include <mutex>

namespace collsim::analysis {
namespace {

constexpr double kStep = 1e-4; // central-difference step in log space
constexpr std::size_t kCachedPoints = 4;
/// How well a row is known when the loss has no scale (least squares): about 10 %, the default
/// robust scale.
constexpr double kNominalResidual = 0.1;

/// The simulator as Ceres sees it: residuals log(predicted / measured) of every predicted row at
/// log-parameters x, and their Jacobian (column j: d r / d x_j), each cached for recent x. Errors
/// thrown by the simulator are kept (the first one) and reported as a failed evaluation, so that
/// no exception crosses Ceres; calibrate() rethrows them after the solve.
class SimulatorModel {
public:
  struct Point {
    std::vector<double> x;
    std::vector<double> r;
    ValidationResult result;
  };

  SimulatorModel(const core::Scenario& scenario, std::span<const MeasuredPoint> fit,
                 std::vector<std::string> paths, std::vector<double> lo, std::vector<double> hi,
                 const algorithms::Registry& registry, ValidateOptions options)
      : scenario_(scenario), fit_(fit), paths_(std::move(paths)), lo_(std::move(lo)),
        hi_(std::move(hi)), registry_(registry), options_(std::move(options)) {}

  /// The scenario with log-parameters x applied; a held parameter takes its held value instead.
  [[nodiscard]] core::Scenario apply(const std::vector<double>& x) const {
    core::Scenario s = scenario_;
    for (std::size_t j = 0; j < paths_.size(); ++j) {
      set_parameter(s, paths_[j], j < held_.size() && held_[j] ? held_values_[j] : std::exp(x[j]));
    }
    return s;
  }

  /// Holds parameter j at values[j] where held[j] (the scenario's own value, which may be the 0
  /// that a log-parameter cannot take); drops what was cached at other values.
  void hold(std::vector<bool> held, std::vector<double> values) {
    const std::lock_guard lock(mutex_);
    held_ = std::move(held);
    held_values_ = std::move(values);
    cache_.clear();
    jacobian_.clear();
    jacobian_x_.clear();
  }

  /// The prediction at x; nullptr after a simulator error (kept in error()).
  const Point* at(const std::vector<double>& x) {
    const std::lock_guard lock(mutex_);
    return at_locked(x);
  }

  /// The Jacobian at x (jac[j][i] = d r_i / d x_j); nullptr after a simulator error.
  const std::vector<std::vector<double>>* jacobian(const std::vector<double>& x) {
    const std::lock_guard lock(mutex_);
    if (jacobian_x_ == x && !jacobian_.empty()) {
      return &jacobian_;
    }
    const Point* centre = at_locked(x);
    if (centre == nullptr) {
      return nullptr;
    }
    const std::vector<double> r0 = centre->r; // the cache may drop `centre` below
    std::vector<std::vector<double>> jac(x.size());
    for (std::size_t j = 0; j < x.size(); ++j) {
      if (j < held_.size() && held_[j]) {
        jac[j].assign(r0.size(), 0.0); // apply() ignores its x: nothing to probe
        continue;
      }
      std::vector<double> xp = x;
      std::vector<double> xm = x;
      const bool up = x[j] + kStep <= hi_[j];
      const bool down = x[j] - kStep >= lo_[j];
      xp[j] = up ? x[j] + kStep : x[j];
      xm[j] = down ? x[j] - kStep : x[j];
      const std::vector<double>* rp = &r0;
      const std::vector<double>* rm = &r0;
      std::vector<double> keep_p;
      if (up) {
        const Point* p = at_locked(xp);
        if (p == nullptr) {
          return nullptr;
        }
        keep_p = p->r;
        rp = &keep_p;
      }
      if (down) {
        const Point* p = at_locked(xm);
        if (p == nullptr) {
          return nullptr;
        }
        rm = &p->r;
      }
      const double h = xp[j] - xm[j];
      jac[j].resize(r0.size());
      for (std::size_t i = 0; i < r0.size(); ++i) {
        jac[j][i] = h > 0.0 ? ((*rp)[i] - (*rm)[i]) / h : 0.0;
      }
    }
    jacobian_x_ = x;
    jacobian_ = std::move(jac);
    return &jacobian_;
  }

  [[nodiscard]] std::exception_ptr error() const { return error_; }

private:
  const Point* at_locked(const std::vector<double>& x) {
    for (const Point& p : cache_) {
      if (p.x == x) {
        return &p;
      }
    }
    try {
      Point p;
      p.x = x;
      p.result = validate(apply(x), fit_, registry_, options_);
      p.r.reserve(p.result.rows.size());
      for (const ValidationRow& row : p.result.rows) {
        p.r.push_back(std::log(row.predicted.value / row.measured.time.value));
      }
      if (rows_ == std::numeric_limits<std::size_t>::max()) {
        rows_ = p.r.size();
      } else if (p.r.size() != rows_) {
        throw core::InternalError("calibration: the set of predicted points changed");
      }
      if (cache_.size() == kCachedPoints) {
        cache_.pop_front();
      }
      cache_.push_back(std::move(p));
      return &cache_.back();
    } catch (...) {
      if (!error_) {
        error_ = std::current_exception();
      }
      return nullptr;
    }
  }

  const core::Scenario& scenario_;
  std::span<const MeasuredPoint> fit_;
  std::vector<std::string> paths_;
  std::vector<double> lo_;
  std::vector<double> hi_;
  const algorithms::Registry& registry_;
  ValidateOptions options_;
  std::mutex mutex_;
  std::deque<Point> cache_;
  std::vector<bool> held_;
  std::vector<double> held_values_;
  std::vector<double> jacobian_x_;
  std::vector<std::vector<double>> jacobian_;
  std::size_t rows_ = std::numeric_limits<std::size_t>::max();
  std::exception_ptr error_;
};

/// One measured row as a Ceres residual block: one residual, k parameter blocks of size 1.
class RowCost final : public ceres::CostFunction {
public:
  RowCost(SimulatorModel& model, std::size_t row, std::size_t k) : model_(model), row_(row) {
    set_num_residuals(1);
    for (std::size_t j = 0; j < k; ++j) {
      mutable_parameter_block_sizes()->push_back(1);
    }
  }

  bool Evaluate(double const* const* parameters, double* residuals,
                double** jacobians) const override {
    std::vector<double> x(parameter_block_sizes().size());
    for (std::size_t j = 0; j < x.size(); ++j) {
      x[j] = parameters[j][0];
    }
    const SimulatorModel::Point* p = model_.at(x);
    if (p == nullptr) {
      return false;
    }
    residuals[0] = p->r[row_];
    if (jacobians != nullptr) {
      const auto* jac = model_.jacobian(x);
      if (jac == nullptr) {
        return false;
      }
      for (std::size_t j = 0; j < x.size(); ++j) {
        if (jacobians[j] != nullptr) {
          jacobians[j][0] = (*jac)[j][row_];
        }
      }
    }
    return true;
  }

private:
  SimulatorModel& model_;
  std::size_t row_;
};

std::unique_ptr<ceres::LossFunction> make_loss(FitLoss loss, double scale) {
  switch (loss) {
  case FitLoss::squared: return nullptr;
  case FitLoss::huber: return std::make_unique<ceres::HuberLoss>(scale);
  case FitLoss::cauchy: return std::make_unique<ceres::CauchyLoss>(scale);
  }
  return nullptr;
}

} // namespace

FitLoss parse_fit_loss(const std::string& name) {
  for (FitLoss l : {FitLoss::squared, FitLoss::huber, FitLoss::cauchy}) {
    if (to_string(l) == name) {
      return l;
    }
  }
  throw core::UnknownNameError("loss", name, {"squared", "huber", "cauchy"});
}

std::string to_string(FitLoss loss) {
  switch (loss) {
  case FitLoss::squared: return "squared";
  case FitLoss::huber: return "huber";
  case FitLoss::cauchy: return "cauchy";
  }
  return "squared";
}

CalibrationResult calibrate(const core::Scenario& scenario, std::span<const MeasuredPoint> fit,
                            std::span<const MeasuredPoint> holdout,
                            const algorithms::Registry& registry, const CalibrateOptions& options) {
  const bool nccl = std::any_of(fit.begin(), fit.end(),
                                [](const MeasuredPoint& p) { return p.library == Library::nccl; });
  const std::vector<std::string> paths = options.parameters.empty()
                                             ? default_fit_parameters(scenario.topology, nccl)
                                             : options.parameters;
  if (options.loss != FitLoss::squared && !(options.loss_scale > 0.0)) {
    throw core::UsageError(
        fmt::format("the loss scale must be positive, got {}", options.loss_scale));
  }
  CalibrationResult out;
  out.loss = options.loss;
  out.loss_scale = options.loss == FitLoss::squared ? 0.0 : options.loss_scale;
  const std::size_t k = paths.size();
  std::vector<double> x(k);
  std::vector<double> lo(k);
  std::vector<double> hi(k);
  for (std::size_t j = 0; j < k; ++j) {
    out.parameters.push_back(fit_parameter(scenario, paths[j]));
    const FitParameter& f = out.parameters.back();
    x[j] = std::log(f.value);
    lo[j] = std::log(f.lower);
    hi[j] = std::log(f.upper);
  }
  ValidateOptions vopt;
  vopt.algorithm = options.algorithm;
  vopt.threads = options.threads;
  SimulatorModel model(scenario, fit, paths, lo, hi, registry, vopt);

  const SimulatorModel::Point* start = model.at(x);
  if (start == nullptr) {
    std::rethrow_exception(model.error());
  }
  out.before = start->result.summary;
  out.points = start->result.rows.size();
  if (out.points < k + 1) {
    throw core::UsageError(fmt::format(
        "calibration needs more measured points than parameters: {} points for {} parameters "
        "({}){}",
        out.points, k, fmt::join(paths, ", "),
        start->result.skipped.empty()
            ? ""
            : fmt::format("; skipped: {}", start->result.skipped.front())));
  }

  // Only what the rows determine is fitted; the rest keeps the scenario's values (above). The
  // test runs at the start and again at each optimum, on the parameters still free: a fit can
  // land where some of them trade off against each other (a link rate against a protocol's
  // efficiency), and those are dropped and the rest fitted again from the start.
  //
  // Hardware first: where the fit has both the machine's parameters (links, NICs, reductions) and
  // a library's corrections (nccl.*; mpi.* when it has any), a first stage fits the machine's
  // alone, the library's held as given, and a second stage fits all of them from there. The
  // library's code is the same on every machine of a class and its constants come from its source,
  // while the machine is what differs from the datasheet (clocks, cabling, firmware); a slowdown
  // both could explain (a slower NVLink or a less efficient Simple protocol: the same for every
  // Simple row) is the machine's. Fitted jointly from the start, the 1 x 8 A100 log's slowness went
  // to NCCL's Simple and LL128 efficiencies (0.64, 0.46) and carried to a 4 x 8 DGX A100 log, 41.3
  // % off; as the machine's NVLink (14.6 instead of 25 GB/s per link) it does not (17.9 %;
  // docs/validation.md).
  const double residual = options.loss == FitLoss::squared ? kNominalResidual : options.loss_scale;
  std::vector<double> initial(k);
  std::vector<bool> library(k);
  for (std::size_t j = 0; j < k; ++j) {
    initial[j] = out.parameters[j].initial;
    library[j] = paths[j].starts_with("nccl.") || paths[j].starts_with("mpi.");
  }
  std::vector<std::vector<bool>> stages;
  if (std::find(library.begin(), library.end(), true) != library.end() &&
      std::find(library.begin(), library.end(), false) != library.end()) {
    std::vector<bool> machine(k);
    for (std::size_t j = 0; j < k; ++j) {
      machine[j] = !library[j];
    }
    stages.push_back(std::move(machine));
  }
  stages.emplace_back(k, true);

  // "Before" is the scenario as given (a zero call overhead is 0, not its 5 us start).
  model.hold(std::vector<bool>(k, true), initial);
  const SimulatorModel::Point* given = model.at(x);
  if (given == nullptr) {
    std::rethrow_exception(model.error());
  }
  out.before = given->result.summary;

  // The problem owns the cost functions; the loss function is shared by all rows and owned here.
  const std::unique_ptr<ceres::LossFunction> loss = make_loss(options.loss, options.loss_scale);
  ceres::Solver::Options sopt;
  sopt.minimizer_type = ceres::TRUST_REGION;
  sopt.trust_region_strategy_type = ceres::LEVENBERG_MARQUARDT;
  sopt.linear_solver_type = ceres::DENSE_QR;
  sopt.max_num_iterations = options.max_iterations;
  // A tight function tolerance: Ceres stops when one trial step changes the cost by less than
  // it, and on a piecewise-smooth simulator (protocol and chunk choices switch) a rejected long
  // step can do that far from the optimum (seen on the A100 log with Huber: stopped after 4 of
  // 29 iterations, held-out median 23.7 % instead of 2.3 %).
  sopt.function_tolerance = 1e-10;
  sopt.parameter_tolerance = 1e-8;
  sopt.gradient_tolerance = 1e-10;
  sopt.logging_type = ceres::SILENT;
  sopt.minimizer_progress_to_stdout = false;
  sopt.num_threads = 1; // the simulator runs use options.threads
  ceres::Solver::Summary summary;
  std::unique_ptr<ceres::Problem> problem;
  std::vector<bool> determined(k, false);
  // Uncertainties of one stage's parameters at its optimum (an earlier stage's parameters are held
  // there, so each parameter's uncertainty is its own stage's, given what that stage held).
  const auto uncertainties = [&] {
    const auto* jac = model.jacobian(x);
    if (jac == nullptr) {
      std::rethrow_exception(model.error());
    }
    // Ceres' covariance (J^T J)^-1 of the (robustly weighted) log-parameters, scaled
    // by the residual variance s^2 = 2 cost / (n - k), so its square roots are relative standard
    // deviations. A parameter no fitted row depends on (a zero Jacobian column, e.g. a NIC fitted
    // to one node's logs) is undetermined and held constant; if the rest is still rank-deficient,
    // Ceres refuses and every parameter is reported undetermined rather than given a number that
    // means nothing.
    std::vector<const double*> free;
    for (std::size_t j = 0; j < k; ++j) {
      double norm2 = 0.0;
      for (double d : (*jac)[j]) {
        norm2 += d * d;
      }
      if (determined[j]) {
        out.parameters[j].rel_sigma = std::numeric_limits<double>::infinity();
      }
      if (determined[j] && norm2 > 1e-12) {
        free.push_back(&x[j]);
      } else if (determined[j]) {
        problem->SetParameterBlockConstant(&x[j]);
      }
    }
    // Ceres' own refusal of a rank-deficient problem logs an error line to stderr; test the rank
    // first with the same criterion (smallest over largest singular value of J below
    // sqrt(min_reciprocal_condition_number), 1e-7), with some margin, and skip Ceres then.
    bool full_rank = false;
    if (!free.empty()) {
      const std::size_t rows = (*jac)[0].size();
      Eigen::MatrixXd j(static_cast<Eigen::Index>(rows), static_cast<Eigen::Index>(free.size()));
      Eigen::Index col = 0;
      for (std::size_t c = 0; c < k; ++c) {
        if (std::find(free.begin(), free.end(), &x[c]) == free.end()) {
          continue;
        }
        for (std::size_t r = 0; r < rows; ++r) {
          j(static_cast<Eigen::Index>(r), col) = (*jac)[c][r];
        }
        ++col;
      }
      const Eigen::VectorXd sv = Eigen::JacobiSVD<Eigen::MatrixXd>(j).singularValues();
      full_rank = sv.size() > 0 && sv(0) > 0.0 && sv(sv.size() - 1) / sv(0) > 1e-6;
    }
    if (full_rank && out.points > k) {
      ceres::Covariance::Options copt;
      copt.algorithm_type = ceres::DENSE_SVD; // k is small; SVD detects rank deficiency
      ceres::Covariance covariance(copt);
      std::vector<std::pair<const double*, const double*>> pairs;
      for (const double* b : free) {
        pairs.emplace_back(b, b);
      }
      if (covariance.Compute(pairs, problem.get())) {
        // n - (parameters fitted): the held ones took no degree of freedom.
        const double s2 = 2.0 * summary.final_cost / static_cast<double>(out.points - free.size());
        for (std::size_t j = 0; j < k; ++j) {
          if (std::find(free.begin(), free.end(), &x[j]) == free.end()) {
            continue;
          }
          double c = 0.0;
          covariance.GetCovarianceBlock(&x[j], &x[j], &c);
          out.parameters[j].rel_sigma = std::sqrt(std::max(s2 * c, 0.0));
        }
      }
    }
    if (model.error()) {
      std::rethrow_exception(model.error());
    }
  };
  std::vector<bool> fitted(k, false);    // determined in some stage
  std::vector<double> held_at = initial; // where a parameter not fitted in a stage stays
  for (FitParameter& f : out.parameters) {
    f.rel_sigma = std::numeric_limits<double>::infinity();
  }
  for (const std::vector<bool>& candidates : stages) {
    std::vector<bool> held(k);
    for (std::size_t j = 0; j < k; ++j) {
      held[j] = !candidates[j];
    }
    model.hold(std::move(held), held_at);
    const std::vector<double> x0 = x; // the stage's start: the last stage's optimum
    const auto* jac0 = model.jacobian(x0);
    if (jac0 == nullptr) {
      std::rethrow_exception(model.error());
    }
    determined =
        detail::determined_parameters(*jac0, residual); // a held column is 0: never determined
    while (true) {
      x = x0;
      std::vector<bool> hold_now(k);
      for (std::size_t j = 0; j < k; ++j) {
        hold_now[j] = !determined[j];
      }
      model.hold(std::move(hold_now), held_at);
      ceres::Problem::Options popt;
      popt.loss_function_ownership = ceres::DO_NOT_TAKE_OWNERSHIP;
      problem = std::make_unique<ceres::Problem>(popt);
      std::vector<double*> blocks;
      for (std::size_t j = 0; j < k; ++j) {
        blocks.push_back(&x[j]);
      }
      for (std::size_t i = 0; i < out.points; ++i) {
        problem->AddResidualBlock(new RowCost(model, i, k), loss.get(), blocks);
      }
      for (std::size_t j = 0; j < k; ++j) {
        problem->SetParameterLowerBound(&x[j], 0, lo[j]);
        problem->SetParameterUpperBound(&x[j], 0, hi[j]);
        if (!determined[j]) {
          problem->SetParameterBlockConstant(&x[j]);
        }
      }
      if (std::find(determined.begin(), determined.end(), true) == determined.end()) {
        summary = ceres::Solver::Summary{}; // nothing to fit: the scenario as given
        summary.final_cost = 0.0;
        break;
      }
      ceres::Solve(sopt, problem.get(), &summary);
      if (model.error()) {
        std::rethrow_exception(model.error());
      }
      if (!summary.IsSolutionUsable()) {
        throw core::InternalError(fmt::format("calibration: Ceres failed: {}", summary.message));
      }
      out.iterations += summary.num_successful_steps + summary.num_unsuccessful_steps;
      const auto* at_optimum = model.jacobian(x);
      if (at_optimum == nullptr) {
        std::rethrow_exception(model.error());
      }
      // A held parameter's column is 0 (jacobian() skips it), so only free ones can stay.
      const std::vector<bool> again = detail::determined_parameters(*at_optimum, residual);
      if (again == determined) {
        break;
      }
      determined = again; // a strict subset: the loop ends within k rounds
    }
    for (std::size_t j = 0; j < k; ++j) {
      if (determined[j]) {
        fitted[j] = true;
        held_at[j] = std::clamp(std::exp(x[j]), out.parameters[j].lower, out.parameters[j].upper);
      }
    }
    uncertainties();
  }

  const SimulatorModel::Point* best = model.at(x);
  if (best == nullptr) {
    std::rethrow_exception(model.error());
  }
  out.after = best->result.summary; // copied now: the Jacobian's runs may evict `best`
  std::vector<ValidationRow> measured_rows = best->result.rows;
  out.fitted = scenario;
  for (std::size_t j = 0; j < k; ++j) {
    // exp(log(v)) can miss v by an ulp: clamp, so a bandwidth is never a hair above nominal.
    FitParameter& f = out.parameters[j];
    // A parameter the rows do not determine keeps the scenario's value (0 stays 0).
    f.value = fitted[j] ? std::clamp(std::exp(x[j]), f.lower, f.upper) : f.initial;
    set_parameter(out.fitted, paths[j], f.value);
  }
  if (!holdout.empty()) {
    out.holdout_before = validate(scenario, holdout, registry, vopt).summary;
    ValidationResult held = validate(out.fitted, holdout, registry, vopt);
    out.holdout_after = held.summary;
    measured_rows.insert(measured_rows.end(), held.rows.begin(), held.rows.end());
  }
  out.measured = summarize(measured_rows);
  return out;
}

} // namespace collsim::analysis
