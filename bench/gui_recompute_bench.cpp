// collsim-gui's recompute latency (issue 8): what the window does after a what-if change, without
// the window: apply the change, run the loggp sweep (10 algorithms x 30 sizes), compute the
// physical limits, build the three chart models and draw them with Qt Charts (offscreen).
//   collsim_gui_recompute_bench [SCENARIO] [RANKS] [REPEATS]   (default: dgx-a100 64 7)
// Prints each step's wall time per repeat and the median; docs/benchmarks.md has the figures.

#include "explorer.hpp"

#include "collsim/analysis/what_if.hpp"
#include "collsim/charts/qt_chart.hpp"

#include <QApplication>
#include <algorithm>
#include <chrono>
#include <fmt/format.h>
#include <memory>
#include <string>
#include <vector>

using namespace collsim;

int main(int argc, char** argv) {
  const std::string scenario_name = argc > 1 ? argv[1] : "dgx-a100";
  const std::uint32_t ranks = argc > 2 ? static_cast<std::uint32_t>(std::stoul(argv[2])) : 64;
  const int repeats = argc > 3 ? std::stoi(argv[3]) : 7;
  qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication app(argc, argv);

  const algorithms::Registry registry = algorithms::make_default_registry();
  const core::Scenario base = gui::load_scenario_or_preset(scenario_name);
  gui::StudyControls controls;
  controls.collective = core::CollectiveKind::allreduce;
  // Ten MPI allreduce algorithms that run at any rank count (docs/algorithms.md).
  controls.algorithms = {"ring",         "recursive_doubling",    "rabenseifner",
                         "reduce_bcast", "segmented_ring",        "allgather_reduce",
                         "rab2",         "recursive_multiplying", "recexch",
                         "tree"};
  controls.ranks = std::to_string(ranks);
  controls.min_bytes = 8;
  controls.max_bytes = 1ULL << 32;
  controls.size_count = 30; // 2^3 .. 2^32: 30 sizes
  const core::StudySpec study = gui::make_study(controls);
  const std::vector<analysis::WhatIfKnob> knobs = analysis::what_if_knobs(base);

  using clock = std::chrono::steady_clock;
  auto seconds = [](clock::time_point a, clock::time_point b) {
    return std::chrono::duration<double>(b - a).count();
  };
  std::vector<double> totals;
  fmt::print("scenario {}, {} algorithms x {} sizes at {} ranks, loggp, all cores\n", base.name,
             study.algorithms.size(), study.sizes.size(), ranks);
  for (int i = 0; i < repeats; ++i) {
    // A what-if change as a slider makes it: the last knob (a bandwidth) scaled each time.
    analysis::WhatIf what_if;
    if (!knobs.empty()) {
      what_if.values[knobs.back().path] = knobs.back().value * (1.0 + 0.1 * (i + 1));
    }
    const auto t0 = clock::now();
    const gui::SweepResult sweep = gui::compute_sweep(base, what_if, study, registry);
    const auto t1 = clock::now();
    const gui::SweepCharts models = gui::sweep_charts(sweep);
    const auto t2 = clock::now();
    std::unique_ptr<QChart> a(charts::make_chart(models.crossover));
    std::unique_ptr<QChart> b(charts::make_chart(models.busbw));
    std::unique_ptr<QChart> c(charts::make_chart(models.scaling));
    const auto t3 = clock::now();
    totals.push_back(seconds(t0, t3));
    fmt::print("repeat {}: sweep {:7.1f} ms ({} points)  chart models {:5.2f} ms  Qt charts "
               "{:6.2f} ms  total {:7.1f} ms\n",
               i + 1, 1e3 * seconds(t0, t1), sweep.result.rows.size(), 1e3 * seconds(t1, t2),
               1e3 * seconds(t2, t3), 1e3 * seconds(t0, t3));
  }
  std::sort(totals.begin(), totals.end());
  fmt::print("median total {:.1f} ms, min {:.1f} ms, max {:.1f} ms\n",
             1e3 * totals[totals.size() / 2], 1e3 * totals.front(), 1e3 * totals.back());
  return 0;
}
