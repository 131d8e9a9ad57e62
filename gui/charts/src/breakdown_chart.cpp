// Bar charts (chart_model.hpp): stacked bars of a workload's step, per phase or per machine,
// and side-by-side bars of a placement study. Qt-free, like the other chart models.

#include "collsim/charts/chart_model.hpp"

#include <algorithm>
#include <fmt/format.h>

namespace collsim::charts {

ChartModel workload_chart(const analysis::WorkloadTiming& timing, const std::string& title,
                          const std::string& subtitle) {
  ChartModel c;
  c.kind = ChartKind::breakdown;
  c.title = title;
  c.subtitle = subtitle;
  const bool ms = timing.step.value >= 10e-3;
  const double scale = ms ? 1e3 : 1e6;
  c.x = Axis{"phase", AxisUnit::category, false};
  c.y = Axis{ms ? "time per step (ms)" : "time per step (us)",
             ms ? AxisUnit::milliseconds : AxisUnit::microseconds, false};
  BarSet exposed{"exposed communication", {}};
  BarSet hidden{"overlapped communication", {}};
  BarSet compute{"compute", {}};
  // step_time hides min(compute, sum of overlap x total) of the communication; each phase is
  // drawn with its share of that in proportion to what it could hide (overlap x its total).
  double hideable = 0.0;
  for (const analysis::PhaseTiming& p : timing.phases) {
    hideable += p.phase.overlap * p.total.value;
  }
  const double hidden_share = hideable > 0.0 ? timing.overlapped.value / hideable : 0.0;
  for (const analysis::PhaseTiming& p : timing.phases) {
    const double h = p.phase.overlap * p.total.value * hidden_share;
    c.categories.push_back(p.phase.name);
    exposed.values.push_back((p.total.value - h) * scale);
    hidden.values.push_back(h * scale);
    compute.values.push_back(0.0);
  }
  c.categories.emplace_back("compute");
  exposed.values.push_back(0.0);
  hidden.values.push_back(0.0);
  compute.values.push_back(timing.compute.value * scale);
  c.categories.emplace_back("step");
  exposed.values.push_back(timing.exposed.value * scale);
  hidden.values.push_back(0.0);
  compute.values.push_back(timing.compute.value * scale);
  c.bar_sets = {compute, exposed, hidden};
  return c;
}

ChartModel compare_chart(const std::vector<analysis::CompareRow>& rows, const std::string& title,
                         const std::string& subtitle) {
  ChartModel c;
  c.kind = ChartKind::breakdown;
  c.title = title;
  c.subtitle = subtitle;
  c.x = Axis{"machine", AxisUnit::category, false};
  c.y = Axis{"time per step (ms)", AxisUnit::milliseconds, false};
  BarSet compute{"compute", {}};
  BarSet exposed{"exposed communication", {}};
  for (const analysis::CompareRow& r : rows) {
    c.categories.push_back(r.label);
    compute.values.push_back(r.timing.compute.value * 1e3);
    exposed.values.push_back(r.timing.exposed.value * 1e3);
  }
  c.bar_sets = {compute, exposed};
  return c;
}

ChartModel placement_chart(const std::vector<std::string>& cases,
                           const std::vector<analysis::PlacementResult>& results,
                           const std::string& title, const std::string& subtitle) {
  ChartModel c;
  c.kind = ChartKind::breakdown;
  c.stacked = false;
  c.title = title;
  c.subtitle = subtitle;
  c.x = Axis{"case", AxisUnit::category, false};
  c.y = Axis{"simulated time (us)", AxisUnit::microseconds, false};
  BarSet block{"block placement (by core/slot)", {}};
  BarSet found{"placement found", {}};
  for (std::size_t i = 0; i < cases.size() && i < results.size(); ++i) {
    c.categories.push_back(cases[i]);
    block.values.push_back(results[i].block.time.value * 1e6);
    found.values.push_back(results[i].chosen().time.value * 1e6);
  }
  c.bar_sets = {block, found};
  return c;
}

} // namespace collsim::charts
