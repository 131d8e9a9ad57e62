#pragma once
// collsim-gui's window tests (QTest on Qt's offscreen platform): the test class, whose slots live
// in gui_window_test.cpp (sweeps, what-if, errors, tuning, stacks, counts and skew) and
// gui_window_views_test.cpp (auto, timeline, measured logs, exports, command line, recompute
// time, compare tab, MSCCL files), and the helpers both use.

#include "command_line.hpp"
#include "compare_tab.hpp"
#include "explorer.hpp"
#include "main_window.hpp"

#include "collsim/analysis/compare.hpp"
#include "collsim/analysis/measured_logs.hpp"
#include "collsim/charts/qt_chart.hpp"
#include "collsim/core/errors.hpp"
#include "collsim/io/compare_loader.hpp"
#include "collsim/io/tuning_formats.hpp"
#include "collsim/io/workload_loader.hpp"

#include <QApplication>
#include <QBarSet>
#include <QChart>
#include <QChartView>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QElapsedTimer>
#include <QFile>
#include <QImage>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPushButton>
#include <QRegularExpression>
#include <QScatterSeries>
#include <QSpinBox>
#include <QStackedBarSeries>
#include <QTabWidget>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QXYSeries>
#include <QtTest/QtTest>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <unordered_map>

namespace collsim::testing::window {

inline constexpr int kWaitMs = 120'000;

inline QString q(const std::string& s) {
  return QString::fromStdString(s);
}

/// The largest time of `algorithm` at `ranks` and `bytes` in a sweep (0 when absent).
inline double row_time(const gui::SweepResult& sweep, const std::string& algorithm,
                       std::uint32_t ranks, std::uint64_t bytes) {
  for (const auto& r : sweep.result.rows) {
    if (r.algorithm == algorithm && r.ranks == ranks && r.bytes.value == bytes) {
      return r.time.value;
    }
  }
  return 0.0;
}

/// Series of a chart whose names are in `names`.
inline int count_series_named(const QChart* chart, const std::vector<std::string>& names) {
  int n = 0;
  for (const QAbstractSeries* s : chart->series()) {
    if (std::find(names.begin(), names.end(), s->name().toStdString()) != names.end()) {
      ++n;
    }
  }
  return n;
}

/// Waits until the window has shown one more sweep than `before` and nothing is pending.
inline bool wait_sweep(const gui::MainWindow& w, std::uint64_t before) {
  QElapsedTimer t;
  t.start();
  while (t.elapsed() < kWaitMs) {
    if (w.sweeps_shown() > before && !w.busy()) {
      return true;
    }
    QTest::qWait(20);
  }
  return false;
}

} // namespace collsim::testing::window

class GuiWindowTest : public QObject {
  Q_OBJECT

private Q_SLOTS:
  void sweep_draws_one_series_per_algorithm_and_the_crossovers_of_its_rows();
  void what_if_nic_bandwidth_doubles_the_large_message_time();
  void bad_input_shows_in_the_error_banner_without_a_crash();
  void tuning_table_fills_with_one_colour_per_winner_and_exports();
  void timeline_shows_the_bars_of_one_run();
  void measured_logs_are_validated_with_auto();
  void chart_tabs_export_png_svg_and_csv();
  void command_line_options();
  void recompute_time_of_10_algorithms_30_sizes_64_ranks();
  void auto_runs_the_library_choice_in_sweeps_and_timelines();
  void stacks_field_compares_library_stacks();
  void compare_tab_shows_the_machines_of_a_compare_file();
  void counts_and_skew_fields_run_the_v_variant_and_late_ranks();
  void a_scenario_names_an_msccl_file_beside_the_built_in_algorithms();
};
