#pragma once
// Charts for the CLI (`collsim plot`, `collsim run --plots`). Everything goes through gui/charts
// (collsim::charts), which is built when Qt6 Charts is (COLLSIM_BUILD_GUI); without it these
// report that the build has no charts.

#include "collsim/analysis/compare.hpp"
#include "collsim/analysis/placement.hpp"
#include "collsim/analysis/simulate.hpp"
#include "collsim/core/scenario.hpp"

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace collsim::cli {

/// UsageError when this build has no charts or `format` is not png/svg.
void check_plots_available(const std::string& format);

/// Writes the charts of study `index` into `dir`; returns the files written.
std::vector<std::string> write_study_plots(const core::Scenario& scenario, std::size_t index,
                                           const analysis::StudyResult& result,
                                           const std::string& dir, const std::string& format);

/// Writes a workload's step breakdown (charts::workload_chart) as `<dir>/workload-breakdown.<ext>`.
std::vector<std::string> write_workload_plot(const analysis::WorkloadTiming& timing,
                                             const std::string& title, const std::string& subtitle,
                                             const std::string& dir, const std::string& format);

/// Writes one step per machine (charts::compare_chart) as `<dir>/compare.<ext>`.
std::vector<std::string> write_compare_plot(const std::vector<analysis::CompareRow>& rows,
                                            const std::string& title, const std::string& subtitle,
                                            const std::string& dir, const std::string& format);

/// Writes a placement study (charts::placement_chart) as `<dir>/placement.<ext>`.
std::vector<std::string> write_placement_plot(const std::vector<std::string>& cases,
                                              const std::vector<analysis::PlacementResult>& results,
                                              const std::string& title, const std::string& subtitle,
                                              const std::string& dir, const std::string& format);

/// `--plots DIR` and `--plot-format` of the commands that draw charts.
struct PlotOptions {
  std::string dir; ///< empty: no charts
  std::string format = "png";
};
/// Adds --plots ("Also write `what` into this directory") and --plot-format to `cmd`.
void add_plot_options(CLI::App& cmd, PlotOptions& o, const std::string& what);
/// One line `collsim: wrote FILE` per file on standard error.
void print_written(const std::vector<std::string>& files);

} // namespace collsim::cli
