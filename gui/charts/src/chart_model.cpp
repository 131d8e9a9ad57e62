// Chart models from result tables (chart_model.hpp). Qt-free, so the data a chart shows is unit
// tested without a display.

#include "collsim/charts/chart_model.hpp"

#include "collsim/core/errors.hpp"
#include "collsim/core/verify.hpp"
#include "collsim/io/csv_field.hpp"
#include "collsim/topologies/build.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>
#include <set>

namespace collsim::charts {
namespace {

constexpr std::array<std::string_view, 4> kKindNames{"crossover", "busbw", "scaling", "validation"};

std::uint32_t largest_ranks(const std::vector<core::ResultRow>& rows) {
  std::uint32_t p = 0;
  for (const auto& r : rows) {
    p = std::max(p, r.ranks);
  }
  return p;
}

/// The algorithms of the rows in order of first appearance (the study's order).
std::vector<std::string> algorithms_of(const std::vector<core::ResultRow>& rows) {
  std::vector<std::string> out;
  for (const auto& r : rows) {
    if (std::find(out.begin(), out.end(), r.algorithm) == out.end()) {
      out.push_back(r.algorithm);
    }
  }
  return out;
}

std::string collective_of(const std::vector<core::ResultRow>& rows) {
  return rows.empty() ? std::string() : std::string(core::to_string(rows.front().collective));
}

std::string engine_of(const std::vector<core::ResultRow>& rows) {
  return rows.empty() ? std::string() : rows.front().engine;
}

void sort_points(std::vector<Point>& points) {
  std::sort(points.begin(), points.end(), [](const Point& a, const Point& b) { return a.x < b.x; });
}

/// One series per algorithm at `ranks`; y from `value`.
template <class Value>
std::vector<Series> per_algorithm(const std::vector<core::ResultRow>& rows, std::uint32_t ranks,
                                  Value value) {
  std::vector<Series> out;
  for (const std::string& algo : algorithms_of(rows)) {
    Series s;
    s.name = algo;
    for (const auto& r : rows) {
      if (r.algorithm == algo && r.ranks == ranks) {
        s.points.push_back({static_cast<double>(r.bytes.value), value(r)});
      }
    }
    sort_points(s.points);
    if (!s.points.empty()) {
      out.push_back(std::move(s));
    }
  }
  return out;
}

double time_us(const core::ResultRow& r) {
  return r.time.value * 1e6;
}
double busbw_gbps(const core::ResultRow& r) {
  return r.busbw.bytes_per_second / 1e9;
}

/// A chart against message size at `ranks`: one series per algorithm with y from `value`.
template <class Value>
ChartModel size_chart(ChartKind kind, const StudyTables& t, std::uint32_t ranks,
                      std::string_view default_title, std::string_view what, Axis y, Value value) {
  ChartModel c;
  c.kind = kind;
  c.title = t.title.empty() ? std::string(default_title) : t.title;
  c.subtitle = fmt::format("{}, {} ranks, engine {}: {}", collective_of(t.rows), ranks,
                           engine_of(t.rows), what);
  c.x = {"message size (bytes)", AxisUnit::bytes, true};
  c.y = std::move(y);
  c.series = per_algorithm(t.rows, ranks, value);
  return c;
}

std::string format_number(double v) {
  if (v == 0.0) {
    return "0";
  }
  const double a = std::abs(v);
  if (a >= 100.0) {
    return fmt::format("{:.1f}", v);
  }
  if (a >= 1.0) {
    return fmt::format("{:.3f}", v);
  }
  return fmt::format("{:.4g}", v);
}

std::string value_text(AxisUnit unit, double v) {
  switch (unit) {
  case AxisUnit::bytes: return size_label(v);
  case AxisUnit::microseconds: return format_number(v) + " us";
  case AxisUnit::gbps: return format_number(v) + " GB/s";
  case AxisUnit::ranks: return fmt::format("{} ranks", static_cast<std::uint64_t>(std::llround(v)));
  case AxisUnit::milliseconds: return format_number(v) + " ms";
  case AxisUnit::category: break;
  }
  return format_number(v);
}

std::string unit_name(AxisUnit unit) {
  switch (unit) {
  case AxisUnit::bytes: return "bytes";
  case AxisUnit::microseconds: return "us";
  case AxisUnit::gbps: return "GB/s";
  case AxisUnit::ranks: return "ranks";
  case AxisUnit::milliseconds: return "ms";
  case AxisUnit::category: return "";
  }
  return "";
}

} // namespace

std::string_view to_string(ChartKind k) {
  return k == ChartKind::breakdown ? "breakdown" : kKindNames.at(static_cast<std::size_t>(k));
}

std::vector<std::string> chart_kind_names() {
  return {kKindNames.begin(), kKindNames.end()};
}

ChartKind parse_chart_kind(std::string_view name) {
  for (std::size_t i = 0; i < kKindNames.size(); ++i) {
    if (kKindNames[i] == name) {
      return static_cast<ChartKind>(i);
    }
  }
  throw core::UnknownNameError("chart kind", name, chart_kind_names());
}

std::string size_label(double bytes) {
  if (bytes >= 1.0 && std::abs(bytes - std::round(bytes)) < 1e-9) {
    return core::format_bytes(core::Bytes{static_cast<std::uint64_t>(std::llround(bytes))});
  }
  return fmt::format("{:.4g} B", bytes);
}

std::string point_label(const ChartModel& chart, const std::string& series, Point p) {
  std::string text = fmt::format("{}  {}  {}", series, value_text(chart.x.unit, p.x),
                                 value_text(chart.y.unit, p.y));
  return text;
}

StudyTables study_tables(const core::Scenario& scenario, std::size_t index,
                         const analysis::StudyResult& result) {
  StudyTables t;
  const core::StudySpec& study = scenario.studies.at(index);
  t.title = fmt::format("{}: study {}{}", scenario.name, index + 1,
                        study.name.empty() ? "" : fmt::format(" ({})", study.name));
  t.rows = result.rows;
  t.crossovers = result.crossovers;
  if (const std::uint32_t p = largest_ranks(result.rows); p > 0) {
    try {
      t.limit = analysis::busbw_limit(topologies::build(scenario.topology, p));
    } catch (const core::Error&) {
      // A machine that cannot hold p ranks ran no point at p either; draw no limit.
    }
  }
  return t;
}

ChartModel crossover_chart(const StudyTables& t, std::uint32_t ranks) {
  ranks = ranks == 0 ? largest_ranks(t.rows) : ranks;
  ChartModel c = size_chart(ChartKind::crossover, t, ranks, "Crossover",
                            "time per call; markers where the fastest algorithm changes",
                            {"time (us)", AxisUnit::microseconds, true}, time_us);
  // A marker at the first size of each range after the first: the new winner's time there.
  const analysis::CrossoverRange* previous = nullptr;
  for (const auto& range : t.crossovers) {
    if (range.ranks != ranks) {
      continue;
    }
    if (previous != nullptr && previous->winner != range.winner) {
      Marker m;
      m.before = previous->winner;
      m.after = range.winner;
      m.at.x = static_cast<double>(range.from.value);
      for (const auto& r : t.rows) {
        if (r.ranks == ranks && r.algorithm == range.winner && r.bytes == range.from) {
          m.at.y = time_us(r);
        }
      }
      m.label = fmt::format("{}: {} -> {}", core::format_bytes(range.from), m.before, m.after);
      c.markers.push_back(std::move(m));
    }
    previous = &range;
  }
  return c;
}

ChartModel busbw_chart(const StudyTables& t, std::uint32_t ranks) {
  ranks = ranks == 0 ? largest_ranks(t.rows) : ranks;
  ChartModel c = size_chart(ChartKind::busbw, t, ranks, "Bus bandwidth",
                            "bus bandwidth as nccl-tests defines it",
                            {"bus bandwidth (GB/s)", AxisUnit::gbps, false}, busbw_gbps);
  if (t.limit && t.limit->bandwidth.bytes_per_second > 0) {
    c.levels.push_back(
        {fmt::format("limit: {}", t.limit->reason), t.limit->bandwidth.bytes_per_second / 1e9});
  }
  return c;
}

ChartModel scaling_chart(const StudyTables& t, core::Bytes bytes) {
  if (bytes.value == 0) {
    for (const auto& r : t.rows) {
      bytes.value = std::max(bytes.value, r.bytes.value);
    }
  }
  ChartModel c;
  c.kind = ChartKind::scaling;
  c.title = t.title.empty() ? "Scaling" : t.title;
  c.subtitle = fmt::format("{} of {}, engine {}: bus bandwidth against rank count",
                           collective_of(t.rows), core::format_bytes(bytes), engine_of(t.rows));
  c.x = {"ranks", AxisUnit::ranks, true};
  c.y = {"bus bandwidth (GB/s)", AxisUnit::gbps, false};
  for (const std::string& algo : algorithms_of(t.rows)) {
    Series s;
    s.name = algo;
    for (const auto& r : t.rows) {
      if (r.algorithm == algo && r.bytes == bytes) {
        s.points.push_back({static_cast<double>(r.ranks), busbw_gbps(r)});
      }
    }
    sort_points(s.points);
    if (!s.points.empty()) {
      c.series.push_back(std::move(s));
    }
  }
  if (t.limit && t.limit->bandwidth.bytes_per_second > 0) {
    c.levels.push_back({fmt::format("limit at the largest rank count: {}", t.limit->reason),
                        t.limit->bandwidth.bytes_per_second / 1e9});
  }
  return c;
}

ChartModel validation_chart(const std::string& title,
                            const std::vector<analysis::ValidationRow>& rows,
                            const analysis::ValidationSummary& summary) {
  ChartModel c;
  c.kind = ChartKind::validation;
  c.title = title.empty() ? "Validation" : title;
  auto median = [](const analysis::ErrorStats& e) {
    return e.points == 0 ? std::string("no points")
                         : fmt::format("{:.1f} % over {}", e.median_abs_err_pct, e.points);
  };
  c.subtitle =
      fmt::format("{} points: median |err| {:.1f} %, p90 |err| {:.1f} % (median < 1 MiB: "
                  "{}; >= 1 MiB: {})",
                  summary.all.points, summary.all.median_abs_err_pct, summary.all.p90_abs_err_pct,
                  median(summary.below_1MiB), median(summary.from_1MiB));
  c.x = {"message size (bytes)", AxisUnit::bytes, true};
  c.y = {"time (us)", AxisUnit::microseconds, true};
  // One measured and one predicted series per (collective or OSU benchmark, ranks), in order of
  // appearance.
  std::vector<std::pair<std::string_view, std::uint32_t>> groups;
  for (const auto& r : rows) {
    const std::pair key{analysis::operation_name(r.measured), r.measured.ranks};
    if (std::find(groups.begin(), groups.end(), key) == groups.end()) {
      groups.push_back(key);
    }
  }
  for (const auto& [collective, ranks] : groups) {
    Series measured;
    Series predicted;
    measured.scatter = true;
    measured.name = fmt::format("measured {} ({} ranks)", collective, ranks);
    std::set<std::string> algos;
    for (const auto& r : rows) {
      if (analysis::operation_name(r.measured) != collective || r.measured.ranks != ranks) {
        continue;
      }
      const double x = static_cast<double>(r.measured.bytes.value);
      measured.points.push_back({x, r.measured.time.value * 1e6});
      predicted.points.push_back({x, r.predicted.value * 1e6});
      algos.insert(r.algorithm);
    }
    predicted.name = fmt::format("collsim {} ({} ranks; {})", collective, ranks,
                                 algos.size() == 1 ? *algos.begin()
                                                   : fmt::format("{} algorithms", algos.size()));
    sort_points(measured.points);
    sort_points(predicted.points);
    c.series.push_back(std::move(measured));
    c.series.push_back(std::move(predicted));
  }
  return c;
}

std::string chart_csv(const ChartModel& chart) {
  if (chart.kind == ChartKind::breakdown) {
    std::string out = fmt::format("# {}\n# {}\n{},part,value ({})\n", chart.title, chart.subtitle,
                                  io::csv_field(chart.x.title), unit_name(chart.y.unit));
    for (std::size_t c = 0; c < chart.categories.size(); ++c) {
      for (const BarSet& set : chart.bar_sets) {
        out += fmt::format("{},{},{}\n", io::csv_field(chart.categories[c]),
                           io::csv_field(set.name), set.values.at(c));
      }
    }
    return out;
  }
  std::string out = fmt::format("# {}\n# {}\nseries,x ({}),y ({})\n", chart.title, chart.subtitle,
                                unit_name(chart.x.unit), unit_name(chart.y.unit));
  for (const Series& s : chart.series) {
    for (const Point& p : s.points) {
      out += fmt::format("{},{},{}\n", io::csv_field(s.name), p.x, p.y);
    }
  }
  for (const Marker& m : chart.markers) {
    out += fmt::format("{},{},{}\n", io::csv_field("crossover: " + m.label), m.at.x, m.at.y);
  }
  for (const Level& l : chart.levels) {
    out += fmt::format("{},,{}\n", io::csv_field(l.name), l.y);
  }
  return out;
}

TimelineModel timeline_model(const analysis::PointRun& run, const std::string& title) {
  TimelineModel m;
  m.title = title;
  m.ranks = run.schedule.ranks();
  m.end_us = run.result.time.value * 1e6;
  m.bars.reserve(run.result.timeline.size());
  // With the run's message timeline (RunOptions::messages), a send is drawn over its message's
  // time on the wire and a receive from the moment its message starts arriving: a receive is
  // posted long before its data comes, and bars from posting would hide when data moves.
  std::vector<core::Seconds> wire_start(run.schedule.op_count(), core::Seconds{-1.0});
  std::vector<core::Seconds> wire_end(run.schedule.op_count(), core::Seconds{-1.0});
  if (!run.result.message_timeline.empty()) {
    for (const core::MessageTiming& msg : run.result.message_timeline) {
      wire_start[msg.send] = msg.start;
      wire_end[msg.send] = msg.end;
    }
    core::match_messages(run.schedule, [&](core::OpId send, core::OpId recv) {
      wire_start[recv] = wire_start[send];
    });
  }
  for (const core::OpTiming& t : run.result.timeline) {
    const core::Rank rank = run.schedule.rank_of(t.op);
    if (rank >= m.ranks) {
      continue; // in-network agents (switches) have no lane
    }
    TimelineBar b;
    b.rank = rank;
    b.kind = run.schedule.kind(t.op);
    b.start_us = t.start.value * 1e6;
    b.end_us = t.end.value * 1e6;
    if (wire_start[t.op].value >= 0.0) {
      b.start_us = std::max(b.start_us, wire_start[t.op].value * 1e6);
      if (b.kind == core::OpKind::send && wire_end[t.op].value >= 0.0) {
        b.end_us = wire_end[t.op].value * 1e6;
      }
      b.start_us = std::min(b.start_us, b.end_us);
    }
    const std::string bytes = core::format_bytes(core::Bytes{run.schedule.length(t.op)});
    switch (b.kind) {
    case core::OpKind::send:
      b.label = fmt::format("send {} to {}", bytes, run.schedule.peer(t.op));
      break;
    case core::OpKind::recv:
      b.label = fmt::format("recv {} from {}", bytes, run.schedule.peer(t.op));
      break;
    case core::OpKind::recv_reduce:
      b.label = fmt::format("recv+reduce {} from {}", bytes, run.schedule.peer(t.op));
      break;
    case core::OpKind::reduce: b.label = fmt::format("reduce {}", bytes); break;
    case core::OpKind::copy: b.label = fmt::format("copy {}", bytes); break;
    case core::OpKind::calc: b.label = "calc"; break;
    }
    b.label += fmt::format(" ({:.3f} - {:.3f} us)", b.start_us, b.end_us);
    m.bars.push_back(std::move(b));
  }
  return m;
}

} // namespace collsim::charts
