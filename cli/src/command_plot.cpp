// `collsim plot`: the charts of collsim-gui rendered to PNG, SVG or CSV without a display
// (docs/plots.md). Built when Qt6 Charts is (COLLSIM_BUILD_GUI).

#include "cli_support.hpp"
#include "commands.hpp"

#include "collsim/analysis/measured_logs.hpp"
#include "collsim/analysis/simulate.hpp"
#include "collsim/analysis/validate.hpp"
#include "collsim/charts/chart_model.hpp"
#include "collsim/charts/render.hpp"
#include "collsim/distributed/session.hpp"
#include "collsim/io/imported_algorithms.hpp"
#include "collsim/io/scenario_loader.hpp"

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>
#include <iostream>
#include <memory>

namespace collsim::cli {
namespace {

struct PlotArgs {
  std::string scenario;
  StackOptions stack;
  std::size_t study = 1;
  std::string kind = "crossover";
  std::vector<std::string> outputs;
  std::uint32_t ranks = 0;
  std::string size;
  std::vector<std::string> logs;
  std::string algorithm = "auto";
  std::string engine = "loggp";
  int width = 1000;
  int height = 600;
  unsigned threads = 0;
  std::string max_memory;
};

charts::ChartFile output_kind(const std::string& path) {
  const charts::ChartFile f = charts::chart_file_of(path);
  if (f == charts::ChartFile::unknown) {
    throw core::UsageError(fmt::format(
        "-o {}: the file name must end in .png, .svg or .csv (the format is taken from it)", path));
  }
  return f;
}

/// The study's chart of `kind`, after running it.
charts::ChartModel study_chart(const core::Scenario& scenario, const PlotArgs& a,
                               charts::ChartKind kind) {
  if (a.study < 1 || a.study > scenario.studies.size()) {
    throw core::UsageError(fmt::format("--study {}: scenario '{}' has {} stud{} (1..{})", a.study,
                                       scenario.name, scenario.studies.size(),
                                       scenario.studies.size() == 1 ? "y" : "ies",
                                       scenario.studies.size()));
  }
  const std::size_t index = a.study - 1;
  const core::StudySpec& study = scenario.studies[index];
  if (a.ranks != 0 &&
      std::find(study.ranks.begin(), study.ranks.end(), a.ranks) == study.ranks.end()) {
    throw core::UsageError(fmt::format("--ranks {}: study {} runs at {} ranks", a.ranks, a.study,
                                       fmt::join(study.ranks, ", ")));
  }
  core::Bytes bytes{0};
  if (!a.size.empty()) {
    bytes = parse_size(a.size, "--size");
    if (std::find(study.sizes.begin(), study.sizes.end(), bytes) == study.sizes.end()) {
      throw core::UsageError(fmt::format("--size {}: study {} has no such size (it runs {} sizes "
                                         "from {} to {})",
                                         a.size, a.study, study.sizes.size(),
                                         core::format_bytes(study.sizes.front()),
                                         core::format_bytes(study.sizes.back())));
    }
  }
  algorithms::Registry registry = algorithms::make_default_registry();
  io::add_file_algorithms(registry, scenario);
  const std::unique_ptr<analysis::Executor> executor =
      distributed::executor(a.threads, parse_memory_option(a.max_memory));
  const analysis::StudyResult result = analysis::run_study(
      scenario, study, registry, terminal_progress(fmt::format("study {}", a.study)), a.threads,
      false, executor.get());
  if (result.rows.empty()) {
    throw core::UsageError(fmt::format(
        "study {} ran no point, nothing to plot{}", a.study,
        result.skipped.empty() ? std::string() : fmt::format(" ({})", result.skipped.front())));
  }
  const charts::StudyTables tables = charts::study_tables(scenario, index, result);
  switch (kind) {
  case charts::ChartKind::crossover: return charts::crossover_chart(tables, a.ranks);
  case charts::ChartKind::busbw: return charts::busbw_chart(tables, a.ranks);
  case charts::ChartKind::scaling: return charts::scaling_chart(tables, bytes);
  case charts::ChartKind::validation:
  case charts::ChartKind::breakdown: break;
  }
  throw core::InternalError("study_chart: only crossover, busbw and scaling are study charts");
}

charts::ChartModel validation_chart(const core::Scenario& scenario, const PlotArgs& a) {
  if (a.logs.empty()) {
    throw core::UsageError("--kind validation needs measured logs: --log FILE (nccl-tests, OSU, "
                           "IMB or collsim-probe output; repeatable)");
  }
  analysis::MeasuredLogs logs = analysis::read_measured_logs(a.logs);
  for (const std::string& w : logs.warnings) {
    std::cerr << w << "\n";
  }
  analysis::ValidateOptions options;
  options.algorithm = a.algorithm;
  options.engine = analysis::EngineChoice(a.engine, scenario);
  options.threads = a.threads;
  const std::unique_ptr<analysis::Executor> executor =
      distributed::executor(a.threads, parse_memory_option(a.max_memory));
  options.executor = executor.get();
  const algorithms::Registry registry = algorithms::make_default_registry();
  const analysis::ValidationResult result =
      analysis::validate(scenario, logs.points, registry, options);
  if (result.rows.empty()) {
    throw core::UsageError(fmt::format(
        "no measured point of {} could be predicted on scenario '{}'{}", fmt::join(a.logs, ", "),
        scenario.name,
        result.skipped.empty() ? std::string() : fmt::format(" ({})", result.skipped.front())));
  }
  std::vector<std::string> names;
  for (const std::string& log : a.logs) {
    names.push_back(std::filesystem::path(log).filename().string());
  }
  return charts::validation_chart(fmt::format("{}: collsim ({}, {}) against {}", scenario.name,
                                              a.algorithm, a.engine, fmt::join(names, ", ")),
                                  result.rows, result.summary);
}

} // namespace

void add_plot(CLI::App& app) {
  auto a = std::make_shared<PlotArgs>();
  auto* cmd = app.add_subcommand(
      "plot", "Draw a study's chart (crossover, bus bandwidth, scaling) or a validation chart to "
              "PNG, SVG or CSV, without a display");
  cmd->add_option("--scenario", a->scenario, "Scenario file or preset name")->required();
  cmd->add_option("--study", a->study, "Which study of the scenario (1, 2, ...)")
      ->capture_default_str();
  cmd->add_option("--kind", a->kind, "crossover, busbw, scaling or validation")
      ->capture_default_str();
  cmd->add_option("-o,--output", a->outputs,
                  "The chart file: .png, .svg or .csv (repeatable: one run, several files)")
      ->required();
  cmd->add_option("--ranks", a->ranks,
                  "Rank count of a crossover or busbw chart (default: the study's largest)");
  cmd->add_option("--size", a->size,
                  "Message size of a scaling chart (default: the study's largest)");
  cmd->add_option("--log", a->logs, "Measured log for --kind validation (repeatable)");
  cmd->add_option("--algorithm", a->algorithm,
                  "Algorithm predicted for --kind validation (auto: the library's choice)")
      ->capture_default_str();
  cmd->add_option("--engine", a->engine, "Engine for --kind validation")->capture_default_str();
  cmd->add_option("--width", a->width, "Image width in pixels")->capture_default_str();
  cmd->add_option("--height", a->height, "Image height in pixels")->capture_default_str();
  cmd->add_option("--threads", a->threads,
                  "Worker threads (0: all cores; under mpirun or srun: 1 per process)")
      ->capture_default_str();
  add_memory_option(*cmd, a->max_memory);
  add_stack_options(*cmd, a->stack);
  cmd->callback([a] {
    std::vector<charts::ChartFile> kinds;
    for (const std::string& path : a->outputs) {
      kinds.push_back(output_kind(path));
    }
    const charts::ChartKind kind = charts::parse_chart_kind(a->kind);
    core::Scenario scenario = io::load_scenario(a->scenario);
    apply_stack_options(a->stack, scenario);
    const charts::ChartModel chart = kind == charts::ChartKind::validation
                                         ? validation_chart(scenario, *a)
                                         : study_chart(scenario, *a, kind);
    if (!distributed::primary()) {
      return; // in an MPI job rank 0 writes the charts
    }
    for (std::size_t i = 0; i < a->outputs.size(); ++i) {
      if (kinds[i] == charts::ChartFile::csv) {
        emit(charts::chart_csv(chart), a->outputs[i]);
      } else {
        charts::save_chart(chart, a->outputs[i], {a->width, a->height});
      }
      std::cerr << fmt::format("collsim: wrote {} ({} chart: {} series, {} crossovers)\n",
                               a->outputs[i], a->kind, chart.series.size(), chart.markers.size());
    }
  });
}

} // namespace collsim::cli
