#pragma once
// Charts for the CLI (`collsim plot`, `collsim run --plots`). Everything goes through gui/charts
// (collsim::charts), which is built when Qt6 Charts is (COLLSIM_BUILD_GUI); without it these
// report that the build has no charts.

#include "collsim/analysis/simulate.hpp"
#include "collsim/core/scenario.hpp"

#include <string>
#include <vector>

namespace collsim::cli {

/// UsageError when this build has no charts or `format` is not png/svg.
void check_plots_available(const std::string& format);

/// Writes the charts of study `index` into `dir`; returns the files written.
std::vector<std::string> write_study_plots(const core::Scenario& scenario, std::size_t index,
                                           const analysis::StudyResult& result,
                                           const std::string& dir, const std::string& format);

} // namespace collsim::cli
