#pragma once
// What a chart shows, as plain values built from collsim's result tables (ResultRow,
// CrossoverRange, ValidationRow, a run's timeline). Nothing here includes Qt: the Qt Charts
// drawing (qt_chart.hpp, render.hpp) reads these values, so a port to Qt Graphs (Qt Charts is
// deprecated from Qt 6.10) touches only the drawing files of gui/charts/.

#include "collsim/analysis/compare.hpp"
#include "collsim/analysis/limits.hpp"
#include "collsim/analysis/placement.hpp"
#include "collsim/analysis/simulate.hpp"
#include "collsim/analysis/validate.hpp"
#include "collsim/core/result.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace collsim::charts {

enum class ChartKind : std::uint8_t {
  crossover,  ///< time against message size, one series per algorithm, crossovers marked
  busbw,      ///< bus bandwidth against message size, with the physical limit
  scaling,    ///< bus bandwidth against rank count at one size
  validation, ///< measured points and collsim's predictions against message size
  breakdown,  ///< stacked bars per category: a workload's phases, or machines' steps
};
std::string_view to_string(ChartKind k);
/// The kinds `collsim plot --kind` draws from a study: "crossover", "busbw", "scaling",
/// "validation"; UnknownNameError otherwise (breakdown charts come from workloads:
/// workload_chart, compare_chart).
ChartKind parse_chart_kind(std::string_view name);
std::vector<std::string> chart_kind_names();

/// What an axis's numbers are; values are stored in these units.
enum class AxisUnit : std::uint8_t {
  bytes,        ///< message size in bytes (labels 1 KiB, 1 MiB, ...)
  microseconds, ///< time in us
  gbps,         ///< GB/s = 1e9 B/s
  ranks,        ///< a rank count
  milliseconds, ///< time in ms
  category,     ///< named bars (breakdown charts)
};

struct Axis {
  std::string title; ///< with the unit: "message size (bytes)", "time (us)", "bus bandwidth (GB/s)"
  AxisUnit unit = AxisUnit::bytes;
  bool log = true; ///< log scale (base 2 for bytes and ranks, base 10 otherwise)
  bool operator==(const Axis&) const = default;
};

struct Point {
  double x = 0.0;
  double y = 0.0;
  bool operator==(const Point&) const = default;
};

struct Series {
  std::string name;
  std::vector<Point> points; ///< in increasing x
  bool scatter = false;      ///< points only (measured values), else a line with point markers
  bool operator==(const Series&) const = default;
};

/// A crossover: where the fastest algorithm changes, with the winners on each side.
struct Marker {
  Point at;           ///< the first size of the new winner's range, its time there
  std::string label;  ///< "64 KiB: ring -> rabenseifner"
  std::string before; ///< winner below the crossover
  std::string after;  ///< winner from the crossover on
  bool operator==(const Marker&) const = default;
};

/// A horizontal line (the physical bus-bandwidth limit).
struct Level {
  std::string name; ///< "limit: 8 ib routes per node (200.0 GB/s)"
  double y = 0.0;
  bool operator==(const Level&) const = default;
};

/// One layer of a breakdown chart's stacked bars: a value per category, in the y axis's unit.
struct BarSet {
  std::string name;
  std::vector<double> values;
  bool operator==(const BarSet&) const = default;
};

struct ChartModel {
  ChartKind kind = ChartKind::crossover;
  std::string title;
  std::string subtitle; ///< scenario, collective, ranks, engine; validation errors
  Axis x;
  Axis y;
  std::vector<Series> series;
  std::vector<Marker> markers;
  std::vector<Level> levels;
  std::vector<std::string> categories; ///< breakdown: the bars, left to right
  std::vector<BarSet> bar_sets;        ///< breakdown: the layers, bottom to top
  bool stacked = true; ///< breakdown: bar sets stacked (parts of a whole), else side by side
  bool operator==(const ChartModel&) const = default;
};

/// What the charts of one study are drawn from: its result table and what the machine allows.
struct StudyTables {
  std::string title;                 ///< "dgx-a100: study 1 (allreduce)"
  std::vector<core::ResultRow> rows; ///< any order
  std::vector<analysis::CrossoverRange> crossovers;
  std::optional<analysis::BusbwLimit> limit; ///< at the largest rank count of the rows
};

/// The tables of study `index` (0-based) of `scenario` after run_study: the title names the
/// scenario and study; the limit is the machine's at the study's largest rank count (none when
/// the topology cannot be built for it).
StudyTables study_tables(const core::Scenario& scenario, std::size_t index,
                         const analysis::StudyResult& result);

/// Time against size at `ranks` (0: the largest rank count of the rows), one series per
/// algorithm, and a marker at every crossover of that rank count.
ChartModel crossover_chart(const StudyTables& t, std::uint32_t ranks = 0);
/// Bus bandwidth against size at `ranks` (0: the largest), with the limit as a level.
ChartModel busbw_chart(const StudyTables& t, std::uint32_t ranks = 0);
/// Bus bandwidth against rank count at `bytes` (0: the largest size of the rows).
ChartModel scaling_chart(const StudyTables& t, core::Bytes bytes = core::Bytes{0});
/// Measured points (scatter) and predictions (lines) per collective and rank count, with the
/// validation error in the subtitle.
ChartModel validation_chart(const std::string& title,
                            const std::vector<analysis::ValidationRow>& rows,
                            const analysis::ValidationSummary& summary);

/// A workload's step on one machine (`collsim workload run --plots`): one bar per phase with its
/// communication split into the part the compute hides and the part it leaves exposed, a bar for
/// the compute, and the step (compute + exposed). Times in us, or ms when the step is 10 ms or
/// more.
ChartModel workload_chart(const analysis::WorkloadTiming& timing, const std::string& title,
                          const std::string& subtitle);
/// One step per machine (`collsim compare --plots`, the GUI's Compare tab): compute and exposed
/// communication stacked, in ms.
ChartModel compare_chart(const std::vector<analysis::CompareRow>& rows, const std::string& title,
                         const std::string& subtitle);

/// One placement study (`collsim place --study --plots`): per case, the simulated time of block
/// placement and of the placement found, side by side, in us.
ChartModel placement_chart(const std::vector<std::string>& cases,
                           const std::vector<analysis::PlacementResult>& results,
                           const std::string& title, const std::string& subtitle);

/// The chart's data as CSV: series,x (unit),y (unit); markers and levels as rows of their own.
/// Breakdown charts: category,part,value (unit).
std::string chart_csv(const ChartModel& chart);

/// "1 KiB", "64 MiB" for powers of two, else "1000 B"-style with the exact bytes.
std::string size_label(double bytes);
/// What hovering a point shows: "ring  64 KiB  12.34 us".
std::string point_label(const ChartModel& chart, const std::string& series, Point p);

/// One run's operations per rank, for a Gantt chart.
struct TimelineBar {
  std::uint32_t rank = 0;
  double start_us = 0.0;
  double end_us = 0.0;
  core::OpKind kind = core::OpKind::send;
  std::string label; ///< "send 64 KiB to 3"
};
struct TimelineModel {
  std::string title;
  std::uint32_t ranks = 0;
  double end_us = 0.0;
  std::vector<TimelineBar> bars;
};
/// The Gantt chart of one run (analysis::run_point with RunOptions::timeline, and ::messages for
/// bars that show when data is on the wire: a send over its message's wire time, a receive from
/// its message's first byte to its completion; without messages, operations from start to end).
TimelineModel timeline_model(const analysis::PointRun& run, const std::string& title);

} // namespace collsim::charts
