// Charts for the CLI (plot_support.hpp).

#include "plot_support.hpp"

#include "collsim/core/errors.hpp"

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

} // namespace collsim::cli
