// `collsim validate` (predictions of a scenario against measured logs) and `collsim calibrate`
// (fitting the scenario's parameters to them); docs/validation.md.

#include "cli_support.hpp"
#include "commands.hpp"
#include "validate_support.hpp"

#include "collsim/analysis/calibrate.hpp"
#include "collsim/analysis/health.hpp"
#include "collsim/analysis/measured_logs.hpp"
#include "collsim/analysis/validate.hpp"
#include "collsim/analysis/what_if.hpp"
#include "collsim/io/logs.hpp"
#include "collsim/io/scenario_loader.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <iostream>
#include <iterator>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <tuple>

namespace collsim::cli {
namespace {

std::string stats_line(const char* label, const analysis::ErrorStats& s) {
  return fmt::format("# {:<18} {:>6} points   median |err| {:>7.1f} %   p90 |err| {:>7.1f} %\n",
                     label, s.points, s.median_abs_err_pct, s.p90_abs_err_pct);
}

nlohmann::json stats_json(const analysis::ErrorStats& s) {
  return {{"points", s.points},
          {"median_abs_err_pct", s.median_abs_err_pct},
          {"p90_abs_err_pct", s.p90_abs_err_pct}};
}

/// A summary as validate's JSON writes it: all rows, plus below_1MiB and from_1MiB.
nlohmann::json summary_json(const analysis::ValidationSummary& s) {
  nlohmann::json j = stats_json(s.all);
  j["below_1MiB"] = stats_json(s.below_1MiB);
  j["from_1MiB"] = stats_json(s.from_1MiB);
  return j;
}

/// "12.3 % (40.1 %)": median (p90) |error|, or "-" without rows.
std::string median_p90(const analysis::ErrorStats& s) {
  return s.points == 0
             ? std::string("-")
             : fmt::format("{:.1f} % ({:.1f} %)", s.median_abs_err_pct, s.p90_abs_err_pct);
}

std::string sigma_text(const analysis::FitParameter& p) {
  return std::isfinite(p.rel_sigma) ? fmt::format("{:.1f} %", 100 * p.rel_sigma)
                                    : std::string("undetermined");
}

nlohmann::json parameters_json(const std::vector<analysis::FitParameter>& params) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& p : params) {
    out.push_back({{"path", p.path},
                   {"initial", p.initial},
                   {"fitted", p.value},
                   {"lower", p.lower},
                   {"upper", p.upper},
                   {"rel_sigma", std::isfinite(p.rel_sigma) ? nlohmann::json(p.rel_sigma)
                                                            : nlohmann::json(nullptr)}});
  }
  return out;
}

std::string loss_text(const analysis::CalibrateOptions& o) {
  return o.loss == analysis::FitLoss::squared
             ? std::string("squared loss")
             : fmt::format("{} loss (scale {:g})", analysis::to_string(o.loss), o.loss_scale);
}

} // namespace

void add_validate(CLI::App& app) {
  struct Args {
    std::vector<std::string> logs;
    std::string format = "table";
    std::string output;
    PredictionOptions predict;
  };
  auto a = std::make_shared<Args>();
  auto* cmd = app.add_subcommand(
      "validate", "Compare a scenario's predictions with measured logs (nccl-tests, OSU, IMB)");
  cmd->add_option("--log", a->logs, "Measured log (repeatable)")->required();
  cmd->add_option("--format", a->format,
                  "table, json, or accuracy (the scenario's accuracy: section from these rows, "
                  "for collsim check)")
      ->capture_default_str();
  cmd->add_option("-o,--output", a->output, "Write to this file instead of standard output");
  add_prediction_options(*cmd, a->predict);
  cmd->callback([a] {
    if (a->format != "table" && a->format != "json" && a->format != "accuracy") {
      throw core::UnknownNameError("format", a->format, {"table", "json", "accuracy"});
    }
    const Prediction p = prediction(a->predict);
    const core::Scenario& scenario = p.scenario;
    std::vector<std::string> ignored;
    const std::vector<analysis::MeasuredPoint> points = read_points(a->logs, ignored, p.shape);
    const algorithms::Registry registry = algorithms::make_default_registry();
    const analysis::ValidationResult r =
        validate_logs(scenario, points, p.shape, registry, p.validate);
    ignored.insert(ignored.end(), r.skipped.begin(), r.skipped.end());

    std::string text;
    if (a->format == "accuracy") {
      std::vector<std::string> names;
      for (const auto& log : a->logs) {
        names.push_back(std::filesystem::path(log).filename().string());
      }
      text = analysis::accuracy_yaml(
          r.summary,
          fmt::format("{} rows of {} (collsim validate, stack {}, engine {}, algorithm {})",
                      r.rows.size(), fmt::join(names, ", "),
                      scenario.stack.empty() ? std::string("from the log") : scenario.stack,
                      a->predict.engine, a->predict.algorithm));
    } else if (a->format == "json") {
      nlohmann::json rows = nlohmann::json::array();
      for (const auto& row : r.rows) {
        rows.push_back({{"collective", analysis::operation_name(row.measured)},
                        {"ranks", row.measured.ranks},
                        {"bytes", row.measured.bytes.value},
                        {"in_place", row.measured.in_place},
                        {"algorithm", row.algorithm},
                        {"params", row.params},
                        {"chosen_by", row.chosen_by},
                        {"measured_us", row.measured.time.value * 1e6},
                        {"predicted_us", row.predicted.value * 1e6},
                        {"error_pct", row.error_pct},
                        {"file", row.measured.file},
                        {"line", row.measured.line}});
        if (row.library_estimate_us >= 0.0) {
          rows.back()["library_estimate_us"] = row.library_estimate_us;
          rows.back()["library_error_pct"] = row.library_error_pct;
        }
      }
      nlohmann::json summary = summary_json(r.summary);
      if (r.library.all.points > 0) {
        summary["library_estimate"] = summary_json(r.library);
      }
      text = nlohmann::json{{"scenario", scenario.name},
                            {"engine", a->predict.engine},
                            {"algorithm", a->predict.algorithm},
                            {"rows", rows},
                            {"summary", summary},
                            {"skipped", ignored}}
                 .dump(2) +
             "\n";
    } else {
      text = fmt::format("# collsim validate: scenario '{}', engine {}, algorithm {}\n",
                         scenario.name, a->predict.engine, a->predict.algorithm);
      text +=
          fmt::format("# {:>12}  {:>6}  {:>14}  {:<32}  {:>12}  {:>12}  {:>8}  {}\n", "collective",
                      "ranks", "size (B)", "algorithm", "measured", "predicted", "error", "source");
      text += fmt::format("# {:>12}  {:>6}  {:>14}  {:<32}  {:>12}  {:>12}  {:>8}\n", "", "", "",
                          "", "(us)", "(us)", "(%)");
      for (const auto& row : r.rows) {
        std::string label = row.algorithm;
        for (const auto& [name, value] : row.params) {
          label += fmt::format(" {}={}", name, value);
        }
        text += fmt::format(
            "  {:>12}  {:>6}  {:>14}  {:<32}  {:>12.2f}  {:>12.2f}  {:>+8.1f}  {}:{}\n",
            analysis::operation_name(row.measured), row.measured.ranks, row.measured.bytes.value,
            label, row.measured.time.value * 1e6, row.predicted.value * 1e6, row.error_pct,
            row.measured.file, row.measured.line);
      }
      text += "#\n";
      text += stats_line("all sizes", r.summary.all);
      text += stats_line("below 1 MiB", r.summary.below_1MiB);
      text += stats_line("1 MiB and above", r.summary.from_1MiB);
      if (r.library.all.points > 0) {
        text += "# the library's own estimate (NCCL's cost model) on the same rows:\n";
        text += stats_line("all sizes", r.library.all);
        text += stats_line("below 1 MiB", r.library.below_1MiB);
        text += stats_line("1 MiB and above", r.library.from_1MiB);
      }
      for (const auto& s : ignored) {
        text += fmt::format("# skipped: {}\n", s);
      }
    }
    emit(text, a->output);
  });
}

namespace {

/// `collsim calibrate --leave-one-out`: each log predicted by the scenario fitted to the others.
std::string leave_one_out_report(const core::Scenario& scenario,
                                 const std::vector<std::string>& paths,
                                 const analysis::CalibrateOptions& opt, const std::string& format,
                                 std::vector<std::string>& ignored, const io::LogShape& shape) {
  std::vector<analysis::MeasuredLog> logs;
  for (const std::string& path : paths) {
    logs.push_back({path, read_points({path}, ignored, shape)});
  }
  const algorithms::Registry registry = algorithms::make_default_registry();
  const analysis::LeaveOneOutResult r = analysis::leave_one_out(scenario, logs, registry, opt);
  if (format == "json") {
    nlohmann::json folds = nlohmann::json::array();
    for (const auto& f : r.folds) {
      folds.push_back({{"log", f.log},
                       {"fit_points", f.fit_points},
                       {"parameters", parameters_json(f.parameters)},
                       {"before", summary_json(f.before)},
                       {"after", summary_json(f.after)}});
    }
    return nlohmann::json{{"scenario", scenario.name},
                          {"algorithm", opt.algorithm},
                          {"loss", analysis::to_string(opt.loss)},
                          {"loss_scale", opt.loss_scale},
                          {"folds", folds},
                          {"pooled",
                           {{"before", summary_json(r.pooled_before)},
                            {"after", summary_json(r.pooled_after)}}},
                          {"skipped", ignored}}
               .dump(2) +
           "\n";
  }
  std::string text = fmt::format(
      "# collsim calibrate --leave-one-out: scenario '{}', {} logs, algorithm {}, {}\n"
      "# each log predicted by the scenario fitted to the other logs (held-out |error|):\n",
      scenario.name, r.folds.size(), opt.algorithm, loss_text(opt));
  text += fmt::format("# {:<48} {:>6} {:>6} {:>18} {:>18} {:>9} {:>9}\n", "left-out log", "fitted",
                      "held", "< 1 MiB", ">= 1 MiB", "median", "before");
  text += fmt::format("# {:<48} {:>6} {:>6} {:>18} {:>18} {:>9} {:>9}\n", "", "rows", "rows",
                      "median (p90)", "median (p90)", "all", "fit");
  for (const auto& f : r.folds) {
    text += fmt::format("  {:<48} {:>6} {:>6} {:>18} {:>18} {:>9} {:>9}\n",
                        std::filesystem::path(f.log).filename().string(), f.fit_points,
                        f.after.all.points, median_p90(f.after.below_1MiB),
                        median_p90(f.after.from_1MiB),
                        fmt::format("{:.1f} %", f.after.all.median_abs_err_pct),
                        fmt::format("{:.1f} %", f.before.all.median_abs_err_pct));
  }
  text += "# pooled over every left-out row:\n";
  text += stats_line("held out, fitted", r.pooled_after.all);
  text += stats_line("  < 1 MiB", r.pooled_after.below_1MiB);
  text += stats_line("  >= 1 MiB", r.pooled_after.from_1MiB);
  text += stats_line("before the fit", r.pooled_before.all);
  for (const auto& s : ignored) {
    text += fmt::format("# skipped: {}\n", s);
  }
  return text;
}

} // namespace

void add_calibrate(CLI::App& app) {
  struct Args {
    std::string scenario;
    std::vector<std::string> logs;
    std::vector<std::string> holdout;
    std::vector<std::string> fit;
    bool holdout_split = false;
    bool leave_one_out = false;
    std::string algorithm = "auto";
    std::string loss = "huber";
    double loss_scale = 0.1;
    std::string format = "table";
    std::string output;
    std::string name;
    unsigned threads = 0;
    LogShapeOptions shape;
  };
  auto a = std::make_shared<Args>();
  auto* cmd = app.add_subcommand(
      "calibrate", "Fit a scenario's link bandwidths and latencies to measured logs (Ceres "
                   "Solver, robust least squares on relative error) and write the fitted scenario");
  cmd->add_option("--scenario", a->scenario, "Scenario (file or preset) to calibrate")->required();
  cmd->add_option("--log", a->logs, "Measured log to fit (repeatable)")->required();
  cmd->add_option("--holdout", a->holdout, "Measured log to check the fit on, not fitted");
  cmd->add_flag("--holdout-split", a->holdout_split,
                "Hold out every other measured size of the --log files (the 2nd, 4th, ... row of "
                "each run): fit on the rest, check on these");
  cmd->add_flag("--leave-one-out", a->leave_one_out,
                "Leave-one-log-out: for each --log in turn, fit on the other logs and report the "
                "error on the one left out (writes no scenario)");
  cmd->add_option("--fit", a->fit,
                  "Parameters to fit, as scenario YAML paths (comma-separated; default: the "
                  "topology's link latencies and bandwidths and reduce bandwidth)")
      ->delimiter(',');
  cmd->add_option("--algorithm", a->algorithm,
                  "Algorithm name or alias, auto (the library's choice) or fastest")
      ->capture_default_str();
  cmd->add_option("--loss", a->loss,
                  "squared (least squares), huber or cauchy (robust: a row whose relative error "
                  "exceeds the scale counts less than its square)")
      ->capture_default_str();
  cmd->add_option("--loss-scale", a->loss_scale,
                  "Where a robust loss departs from the square, as |log(predicted / measured)| "
                  "(0.1: about 10 %)")
      ->capture_default_str();
  cmd->add_option("--format", a->format, "Report on standard output: table or json")
      ->capture_default_str();
  cmd->add_option("-o,--output", a->output,
                  "The fitted scenario (YAML; required unless --leave-one-out)");
  cmd->add_option("--name", a->name, "Name of the fitted scenario (default: <name>-calibrated)");
  cmd->add_option("--threads", a->threads, "Worker threads (0: all cores)")->capture_default_str();
  add_log_shape_options(*cmd, a->shape);
  cmd->callback([a] {
    const io::LogShape shape = log_shape(a->shape);
    if (a->format != "table" && a->format != "json") {
      throw core::UnknownNameError("format", a->format, {"table", "json"});
    }
    analysis::CalibrateOptions opt;
    opt.algorithm = a->algorithm;
    opt.parameters = a->fit;
    opt.threads = a->threads;
    opt.loss = analysis::parse_fit_loss(a->loss);
    opt.loss_scale = a->loss_scale;
    if (opt.loss != analysis::FitLoss::squared && !(opt.loss_scale > 0.0)) {
      throw core::UsageError(
          fmt::format("--loss-scale must be positive, got {:g}", opt.loss_scale));
    }
    if (a->leave_one_out) {
      if (a->logs.size() < 2) {
        throw core::UsageError(fmt::format(
            "--leave-one-out needs at least 2 --log files (each is left out in turn), got {}",
            a->logs.size()));
      }
      if (!a->holdout.empty() || a->holdout_split || !a->output.empty()) {
        throw core::UsageError("--leave-one-out holds out each --log in turn and writes no "
                               "scenario: drop --holdout, --holdout-split and -o");
      }
      core::Scenario scenario = io::load_scenario(a->scenario);
      std::vector<std::string> ignored;
      std::cout << leave_one_out_report(scenario, a->logs, opt, a->format, ignored, shape);
      return;
    }
    if (a->output.empty()) {
      throw core::UsageError("-o,--output is required: the fitted scenario is written there");
    }
    core::Scenario scenario = io::load_scenario(a->scenario);
    std::vector<std::string> ignored;
    std::vector<analysis::MeasuredPoint> fit = read_points(a->logs, ignored, shape);
    std::vector<analysis::MeasuredPoint> holdout = read_points(a->holdout, ignored, shape);
    if (places_by_nodes(scenario, shape)) {
      // One fitted scenario has one placement: the logs must share their rank count.
      std::vector<std::uint32_t> counts;
      for (const auto* list : {&fit, &holdout}) {
        for (const auto& p : *list) {
          if (p.ranks != 0 && std::find(counts.begin(), counts.end(), p.ranks) == counts.end()) {
            counts.push_back(p.ranks);
          }
        }
      }
      if (counts.size() > 1) {
        throw core::UsageError(fmt::format(
            "--nodes {}: the logs have {} rank counts ({}); calibrate fits one placement, so give "
            "--ranks too or calibrate each rank count on its own",
            *shape.nodes, counts.size(), fmt::join(counts, ", ")));
      }
      if (counts.size() == 1) {
        scenario = placed(scenario, counts.front(), *shape.nodes);
      }
    }
    if (a->holdout_split) {
      // Alternate rows of each (file, collective, ranks) series, in the log's order.
      std::map<std::tuple<std::string, core::CollectiveKind, std::uint32_t>, std::size_t> seen;
      std::vector<analysis::MeasuredPoint> kept;
      for (analysis::MeasuredPoint& p : fit) {
        const std::size_t k = seen[{p.file, p.collective, p.ranks}]++;
        (k % 2 == 0 ? kept : holdout).push_back(std::move(p));
      }
      fit = std::move(kept);
    }
    const algorithms::Registry registry = algorithms::make_default_registry();
    const analysis::CalibrationResult r =
        analysis::calibrate(scenario, fit, holdout, registry, opt);
    // The fitted scenario derives from the one calibrated: a preset by name, a file by its path
    // relative to the output's directory (a base path is read relative to the file naming it).
    std::string base = a->scenario;
    if (std::filesystem::exists(a->scenario)) {
      const auto out_dir = std::filesystem::absolute(a->output).parent_path();
      base = std::filesystem::relative(std::filesystem::absolute(a->scenario), out_dir).string();
    }
    const std::string name = a->name.empty() ? scenario.name + "-calibrated" : a->name;
    emit(analysis::calibrated_yaml(r, base, name), a->output);

    if (a->format == "json") {
      nlohmann::json j{{"scenario", scenario.name},
                       {"algorithm", a->algorithm},
                       {"loss", analysis::to_string(opt.loss)},
                       {"loss_scale", opt.loss_scale},
                       {"points", r.points},
                       {"iterations", r.iterations},
                       {"parameters", parameters_json(r.parameters)},
                       {"before", summary_json(r.before)},
                       {"after", summary_json(r.after)},
                       {"output", a->output}};
      if (r.holdout_after) {
        j["holdout"] = {{"before", summary_json(*r.holdout_before)},
                        {"after", summary_json(*r.holdout_after)}};
      }
      std::cout << j.dump(2) << "\n";
      return;
    }
    std::string text = fmt::format(
        "# collsim calibrate: scenario '{}', {} points, algorithm {}, {} iterations, {}\n",
        scenario.name, r.points, a->algorithm, r.iterations, loss_text(opt));
    text += fmt::format("# {:<42} {:>14} {:>14} {:>12}\n", "parameter", "was", "fitted",
                        "+/- (1 sigma)");
    for (const auto& p : r.parameters) {
      const auto show = [&](double v) { return analysis::format_fit_value(p.unit, v); };
      text += fmt::format("  {:<42} {:>14} {:>14} {:>12}\n", p.path, show(p.initial), show(p.value),
                          sigma_text(p));
    }
    text += "# error on the fitted logs, before and after:\n";
    text += stats_line("before", r.before.all);
    text += stats_line("after", r.after.all);
    text += stats_line("after, < 1 MiB", r.after.below_1MiB);
    text += stats_line("after, >= 1 MiB", r.after.from_1MiB);
    if (r.holdout_after) {
      text += "# error on the held-out logs, before and after:\n";
      text += stats_line("before", r.holdout_before->all);
      text += stats_line("after", r.holdout_after->all);
      text += stats_line("after, < 1 MiB", r.holdout_after->below_1MiB);
      text += stats_line("after, >= 1 MiB", r.holdout_after->from_1MiB);
    }
    text += fmt::format("# wrote {}\n", a->output);
    std::cout << text;
  });
}

} // namespace collsim::cli
