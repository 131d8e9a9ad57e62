// Charts for the CLI (plot_support.hpp).

#include "plot_support.hpp"

#include "collsim/core/errors.hpp"

#include <fmt/format.h>
#include <iostream>

#ifdef COLLSIM_HAVE_CHARTS
#include "collsim/charts/render.hpp"
#endif

namespace collsim::cli {

void check_plots_available(const std::string& format) {
#ifdef COLLSIM_HAVE_CHARTS
  charts::plot_formats(format);
#else
  (void)format;
  throw core::UsageError("this collsim was built without Qt6 Charts (COLLSIM_BUILD_GUI=OFF): "
                         "no charts; install qt6-charts-dev qt6-svg-dev and rebuild");
#endif
}

std::vector<std::string> write_study_plots(const core::Scenario& scenario, std::size_t index,
                                           const analysis::StudyResult& result,
                                           const std::string& dir, const std::string& format) {
#ifdef COLLSIM_HAVE_CHARTS
  return charts::save_study_charts(charts::study_tables(scenario, index, result), index, dir,
                                   format);
#else
  (void)scenario;
  (void)index;
  (void)result;
  (void)dir;
  check_plots_available(format);
  return {};
#endif
}

std::vector<std::string>
write_workload_plot([[maybe_unused]] const analysis::WorkloadTiming& timing,
                    [[maybe_unused]] const std::string& title,
                    [[maybe_unused]] const std::string& subtitle, const std::string& dir,
                    const std::string& format) {
  check_plots_available(format);
#ifdef COLLSIM_HAVE_CHARTS
  return charts::save_charts(
      {{"workload-breakdown", charts::workload_chart(timing, title, subtitle)}}, dir, format);
#else
  return {};
#endif
}

std::vector<std::string>
write_compare_plot([[maybe_unused]] const std::vector<analysis::CompareRow>& rows,
                   [[maybe_unused]] const std::string& title,
                   [[maybe_unused]] const std::string& subtitle, const std::string& dir,
                   const std::string& format) {
  check_plots_available(format);
#ifdef COLLSIM_HAVE_CHARTS
  return charts::save_charts({{"compare", charts::compare_chart(rows, title, subtitle)}}, dir,
                             format);
#else
  return {};
#endif
}

std::vector<std::string>
write_placement_plot([[maybe_unused]] const std::vector<std::string>& cases,
                     [[maybe_unused]] const std::vector<analysis::PlacementResult>& results,
                     [[maybe_unused]] const std::string& title,
                     [[maybe_unused]] const std::string& subtitle, const std::string& dir,
                     const std::string& format) {
  check_plots_available(format);
#ifdef COLLSIM_HAVE_CHARTS
  return charts::save_charts(
      {{"placement", charts::placement_chart(cases, results, title, subtitle)}}, dir, format);
#else
  return {};
#endif
}

void add_plot_options(CLI::App& cmd, PlotOptions& o, const std::string& what) {
  cmd.add_option("--plots", o.dir, "Also write " + what + " into this directory");
  cmd.add_option("--plot-format", o.format, "Format of the --plots charts: png, svg or png,svg")
      ->capture_default_str();
}

void print_written(const std::vector<std::string>& files) {
  for (const std::string& f : files) {
    std::cerr << fmt::format("collsim: wrote {}\n", f);
  }
}

} // namespace collsim::cli
