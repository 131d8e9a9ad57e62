// Breakdown charts (gui/charts, chart_model.hpp): a workload's step per phase and one step per
// machine as stacked bars: the values, their CSV and their Qt Charts drawing.

#include "collsim/charts/chart_model.hpp"
#include "collsim/charts/qt_chart.hpp"

#include <QApplication>
#include <QBarCategoryAxis>
#include <QBarSet>
#include <QStackedBarSeries>
#include <catch2/catch.hpp>
#include <memory>

using namespace collsim;
using core::Seconds;

namespace {

analysis::PhaseTiming phase(const std::string& name, double total_ms, double overlap) {
  analysis::PhaseTiming p;
  p.phase.name = name;
  p.phase.overlap = overlap;
  p.total = Seconds{total_ms * 1e-3};
  p.per_call = p.total;
  return p;
}

/// "dp" (2 ms, all of it overlappable) and "tp" (1 ms, none) under 1 ms of compute: the compute
/// hides 1 ms of dp, so the step is 1 + (2 - 1) + 1 = 3 ms.
analysis::WorkloadTiming two_phases() {
  return analysis::step_time({phase("dp", 2.0, 1.0), phase("tp", 1.0, 0.0)}, Seconds{1e-3});
}

void ensure_app() {
  if (QApplication::instance() == nullptr) {
    static int argc = 1;
    static char name[] = "breakdown_chart_test";
    static char* argv[] = {name, nullptr};
    qputenv("QT_QPA_PLATFORM", "offscreen");
    new QApplication(argc, argv); // kept for the process: Qt's globals outlive it
  }
}

} // namespace

TEST_CASE("workload chart: each phase's communication split into hidden and exposed") {
  const analysis::WorkloadTiming t = two_phases();
  REQUIRE(t.step.value == Approx(3e-3));
  const charts::ChartModel c = charts::workload_chart(t, "W", "sub");
  CHECK(c.kind == charts::ChartKind::breakdown);
  CHECK(c.categories == std::vector<std::string>{"dp", "tp", "compute", "step"});
  CHECK(c.y.unit == charts::AxisUnit::microseconds); // a 3 ms step is drawn in us
  REQUIRE(c.bar_sets.size() == 3);
  CHECK(c.bar_sets[0].name == "compute");
  CHECK(c.bar_sets[1].name == "exposed communication");
  CHECK(c.bar_sets[2].name == "overlapped communication");
  const auto& compute = c.bar_sets[0].values;
  const auto& exposed = c.bar_sets[1].values;
  const auto& hidden = c.bar_sets[2].values;
  CHECK(exposed[0] == Approx(1000.0)); // dp: 1 ms of its 2 ms hidden
  CHECK(hidden[0] == Approx(1000.0));
  CHECK(exposed[1] == Approx(1000.0)); // tp: none of it can hide
  CHECK(hidden[1] == Approx(0.0));
  CHECK(compute[2] == Approx(1000.0));
  // The step bar is the compute and the exposed communication: the step time.
  CHECK(compute[3] + exposed[3] + hidden[3] == Approx(t.step.value * 1e6));
  // Each phase's bar is its whole communication.
  CHECK(exposed[0] + hidden[0] == Approx(2000.0));
}

TEST_CASE("workload chart: steps of 10 ms and more are drawn in ms") {
  const auto t = analysis::step_time({phase("dp", 20.0, 0.0)}, Seconds{0.0});
  const charts::ChartModel c = charts::workload_chart(t, "W", "");
  CHECK(c.y.unit == charts::AxisUnit::milliseconds);
  CHECK(c.y.title == "time per step (ms)");
  CHECK(c.bar_sets[1].values[0] == Approx(20.0));
}

TEST_CASE("compare chart: compute and exposed communication per machine, and its CSV") {
  analysis::CompareRow a;
  a.label = "HDR x 16";
  a.timing = two_phases();
  analysis::CompareRow b;
  b.label = "NDR x 16";
  b.timing = analysis::step_time({phase("dp", 1.0, 1.0), phase("tp", 1.0, 0.0)}, Seconds{1e-3});
  const charts::ChartModel c = charts::compare_chart({a, b}, "One step per machine", "w");
  CHECK(c.categories == std::vector<std::string>{"HDR x 16", "NDR x 16"});
  REQUIRE(c.bar_sets.size() == 2);
  CHECK(c.bar_sets[0].values == std::vector<double>{1.0, 1.0});
  CHECK(c.bar_sets[1].values[0] == Approx(2.0));
  CHECK(c.bar_sets[1].values[1] == Approx(1.0));
  const std::string csv = charts::chart_csv(c);
  CHECK(csv.find("machine,part,value (ms)\n") != std::string::npos);
  CHECK(csv.find("HDR x 16,compute,1\n") != std::string::npos);
  CHECK(csv.find("NDR x 16,exposed communication,1\n") != std::string::npos);
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 3 + 4);
}

TEST_CASE("Qt chart of a breakdown: one stacked bar series on a category axis") {
  ensure_app();
  const charts::ChartModel model = charts::workload_chart(two_phases(), "W", "sub");
  std::unique_ptr<QChart> chart(charts::make_chart(model));
  const auto series = chart->series();
  REQUIRE(series.size() == 1);
  auto* bars = qobject_cast<QStackedBarSeries*>(series.front());
  REQUIRE(bars != nullptr);
  REQUIRE(bars->count() == 3);
  CHECK(bars->barSets().at(1)->label() == "exposed communication");
  CHECK(bars->barSets().at(1)->at(0) == Approx(1000.0));
  const auto x_axes = chart->axes(Qt::Horizontal);
  REQUIRE(x_axes.size() == 1);
  auto* x = qobject_cast<QBarCategoryAxis*>(x_axes[0]);
  REQUIRE(x != nullptr);
  CHECK(x->categories() == QStringList{"dp", "tp", "compute", "step"});
}
