#pragma once
// collsim-gui's work without the window: the controls' text into a study, and every computation
// a tab shows (the sweep with its chart tables, the tuning table, a timeline, a validation), as
// plain functions that the window runs in the background and that tests and benchmarks call
// directly. Nothing here includes Qt.

#include "collsim/algorithms/registry.hpp"
#include "collsim/analysis/limits.hpp"
#include "collsim/analysis/simulate.hpp"
#include "collsim/analysis/validate.hpp"
#include "collsim/analysis/what_if.hpp"
#include "collsim/charts/chart_model.hpp"
#include "collsim/core/scenario.hpp"
#include "collsim/core/tuning.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace collsim::gui {

/// A scenario by command-line word: an existing file is loaded (io::load_scenario), else a preset
/// of that name (io::parse_scenario of its text). ScenarioError for a bad file; UsageError naming
/// the presets when the word is neither.
core::Scenario load_scenario_or_preset(const std::string& word);
/// The preset `name`; UnknownNameError listing the presets when there is none.
core::Scenario load_preset(const std::string& name);

/// What the study controls say, as text and numbers.
struct StudyControls {
  core::CollectiveKind collective = core::CollectiveKind::allreduce;
  std::vector<std::string> algorithms; ///< canonical names
  std::string params;                  ///< "protocol=simple,channels=4"
  std::string engine = "loggp";
  /// Library stacks to compare, comma-separated ("openmpi-4.1,openmpi-4.1+ucc+nccl"; docs/
  /// stacks.md); empty: the scenario's stack, else each algorithm's own.
  std::string stacks;
  std::string ranks = "8"; ///< "8,16,64"
  std::uint64_t min_bytes = 8;
  std::uint64_t max_bytes = 1ULL << 30; ///< powers of two, min <= max
  int size_count = 28;                  ///< sizes between them, spaced evenly on log2
  std::string counts; ///< a v-collective's counts spec ("zipf:1.2"); empty: uniform
  std::string skew;   ///< the ranks' arrival skew ("late:1ms"); empty: all at once
  bool operator==(const StudyControls&) const = default;
};

/// The controls for the scenario's first study (aliases resolved to canonical names, sizes rounded
/// to powers of two); a small allreduce study of the registry's first four algorithms when the
/// scenario has none.
StudyControls default_controls(const core::Scenario& scenario,
                               const algorithms::Registry& registry);

/// Checks the names default_controls leaves out: an algorithm of the scenario's first study that
/// the registry does not know is the ScenarioError run_study would throw (file:line:column of the
/// name, with the valid names and the closest match).
void check_first_study(const core::Scenario& scenario, const algorithms::Registry& registry);

/// "protocol=simple, channels=4" into name -> value; empty text gives none. UsageError for an
/// item without '=' or with an empty name.
std::map<std::string, std::string> parse_params(std::string_view text);
/// The text of parse_params's input for `params` ("a=1,b=2").
std::string params_text(const std::map<std::string, std::string>& params);
/// "8, 16,64" into rank counts, in the order given, without repeats. UsageError for an empty list,
/// a word that is not a number, 0, or a count above io::kMaxScenarioRanks.
std::vector<std::uint32_t> parse_rank_list(std::string_view text);
/// `count` powers of two from `min` to `max` (both included, both powers of two), evenly spaced on
/// log2 and without repeats (so fewer when the range has fewer powers). UsageError when min or max
/// is not a power of two, min > max, or count < 1.
std::vector<core::Bytes> power_of_two_sizes(core::Bytes min, core::Bytes max, int count);

/// The study the controls describe. UsageError when no algorithm is selected, and for bad params,
/// ranks, sizes, counts or skew (a counts spec on a collective without a v-variant, a file that
/// does not read); UnknownNameError for an engine collsim does not have.
core::StudySpec make_study(const StudyControls& controls);

/// A sweep and everything its charts are drawn from.
struct SweepResult {
  core::Scenario scenario; ///< with the what-if changes
  core::StudySpec study;
  analysis::StudyResult result;
  charts::StudyTables tables;                           ///< limit: at the largest rank count
  std::map<std::uint32_t, analysis::BusbwLimit> limits; ///< the limit per rank count
  double seconds = 0.0;                                 ///< wall time of the whole step
};

/// What collsim-gui runs after every change of a control: apply the what-if changes, run the
/// study (analysis::run_study, parallel over points; threads = 0: all cores) and compute the
/// physical bus-bandwidth limit per rank count. Throws collsim errors (core::Error) unchanged.
SweepResult compute_sweep(const core::Scenario& base, const analysis::WhatIf& what_if,
                          const core::StudySpec& study, const algorithms::Registry& registry,
                          const analysis::Progress& progress = {}, unsigned threads = 0);

/// The three sweep charts: crossover and bus bandwidth at `ranks` (0: the largest; the limit is
/// that rank count's), scaling at `scaling_bytes` (0: the largest size).
struct SweepCharts {
  charts::ChartModel crossover;
  charts::ChartModel busbw;
  charts::ChartModel scaling;
};
SweepCharts sweep_charts(const SweepResult& sweep, std::uint32_t ranks = 0,
                         core::Bytes scaling_bytes = core::Bytes{0});

/// The tuning file formats of `collsim tune`, with the Open MPI and MPICH versions spelled out:
/// "table", "csv", "json", "ompi-rules 4.1", "ompi-rules 5.0", "mpich-json 4.0",
/// "mpich-json latest", "smpi-cfg", "nccl-tuner", "ucc-tune".
std::vector<std::string> tuning_formats();
/// The file extension a format is usually saved with: ".txt", ".csv", ".json", ".rules", ".cfg".
std::string tuning_file_suffix(std::string_view format);
/// Runs analysis::tune for the study's collective, rank counts, sizes and engine over the
/// candidates the format can name (every algorithm for table, csv and json; a library's for its
/// file, as `collsim tune --format` does). UnknownNameError for an unknown format.
core::TuneTable compute_tuning(const core::Scenario& scenario, const core::StudySpec& study,
                               std::string_view format, const algorithms::Registry& registry,
                               const analysis::Progress& progress = {}, unsigned threads = 0);
/// The table in `format` (io/tuning_formats.hpp). UsageError when the table cannot be written so
/// (a winner the library does not name).
std::string format_tuning(const core::TuneTable& table, std::string_view format);

/// The Gantt chart of one run: the study's first algorithm at `ranks` ranks and `bytes`, with
/// the study's parameters; the analytic engine times no operations, so it runs on loggp.
charts::TimelineModel compute_timeline(const core::Scenario& scenario, const core::StudySpec& study,
                                       std::uint32_t ranks, core::Bytes bytes,
                                       const algorithms::Registry& registry);

/// A validation of measured points against the scenario (algorithm "auto").
struct ValidationOutput {
  analysis::ValidationResult result;
  charts::ChartModel chart;
  std::string summary; ///< "42 points: median |error| 7.1 %, p90 |error| 18.3 %"
};
ValidationOutput compute_validation(const core::Scenario& scenario,
                                    const std::vector<analysis::MeasuredPoint>& points,
                                    const std::string& engine, const algorithms::Registry& registry,
                                    unsigned threads = 0);

} // namespace collsim::gui
