// collsim-gui's window on Qt's offscreen platform: a sweep draws one series per algorithm with
// the crossovers analysis::crossovers finds; a what-if change moves the result by what the
// bottleneck says; a bad scenario file shows file:line:column in the error banner; the tuning
// table, the timeline and the measured-log validation fill; charts export. Also, with
// --check-screenshot FILE W H, the check of collsim-gui's real-screen grab (screenshot_test.sh).

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

using namespace collsim;

namespace {

constexpr int kWaitMs = 120'000;

QString q(const std::string& s) {
  return QString::fromStdString(s);
}

/// The largest time of `algorithm` at `ranks` and `bytes` in a sweep (0 when absent).
double row_time(const gui::SweepResult& sweep, const std::string& algorithm, std::uint32_t ranks,
                std::uint64_t bytes) {
  for (const auto& r : sweep.result.rows) {
    if (r.algorithm == algorithm && r.ranks == ranks && r.bytes.value == bytes) {
      return r.time.value;
    }
  }
  return 0.0;
}

/// Series of a chart whose names are in `names`.
int count_series_named(const QChart* chart, const std::vector<std::string>& names) {
  int n = 0;
  for (const QAbstractSeries* s : chart->series()) {
    if (std::find(names.begin(), names.end(), s->name().toStdString()) != names.end()) {
      ++n;
    }
  }
  return n;
}

/// Waits until the window has shown one more sweep than `before` and nothing is pending.
bool wait_sweep(const gui::MainWindow& w, std::uint64_t before) {
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

/// The PNG check of screenshot_test.sh: size W x H, at least 48 distinct colours and no colour on
/// more than 95 % of the pixels (a blank or single-colour screen fails).
int check_screenshot(const char* path, int width, int height) {
  QImage image(QString::fromLocal8Bit(path));
  if (image.isNull()) {
    std::fprintf(stderr, "FAIL: cannot read '%s' as an image\n", path);
    return 1;
  }
  image = image.convertToFormat(QImage::Format_RGB32);
  std::unordered_map<QRgb, long> count;
  for (int y = 0; y < image.height(); ++y) {
    const auto* line = reinterpret_cast<const QRgb*>(image.constScanLine(y));
    for (int x = 0; x < image.width(); ++x) {
      ++count[line[x]];
    }
  }
  long most = 0;
  for (const auto& [rgb, n] : count) {
    most = std::max(most, n);
  }
  const double share = static_cast<double>(most) /
                       (static_cast<double>(image.width()) * static_cast<double>(image.height()));
  std::printf("%s: %dx%d, %zu distinct colours, the most common on %.1f %% of the pixels\n", path,
              image.width(), image.height(), count.size(), 100.0 * share);
  if (image.width() != width || image.height() != height) {
    std::fprintf(stderr, "FAIL: expected %dx%d\n", width, height);
    return 1;
  }
  if (count.size() < 48 || share > 0.95) {
    std::fprintf(stderr, "FAIL: the screenshot looks blank\n");
    return 1;
  }
  return 0;
}

} // namespace

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

void GuiWindowTest::sweep_draws_one_series_per_algorithm_and_the_crossovers_of_its_rows() {
  gui::MainWindow w;
  w.show();
  QVERIFY(w.open_preset("textbook"));
  QVERIFY(wait_sweep(w, 0));
  QCOMPARE(w.error_text(), QString());
  const gui::StudyControls c = w.controls();
  // The textbook study: ring, recursive doubling, Rabenseifner, reduce+bcast at 8 and 64 ranks.
  QCOMPARE(c.algorithms, (std::vector<std::string>{"ring", "recursive_doubling", "rabenseifner",
                                                   "reduce_bcast"}));
  QCOMPARE(c.ranks, std::string("8,64"));

  auto* view = w.findChild<charts::ChartView*>("crossoverView");
  QVERIFY(view != nullptr);
  QVERIFY(view->chart() != nullptr);
  QCOMPARE(count_series_named(view->chart(), c.algorithms), 4);
  QCOMPARE(view->model().series.size(), std::size_t{4});
  QCOMPARE(view->model().x.title, std::string("message size (bytes)"));
  QCOMPARE(view->model().y.title, std::string("time (us)"));
  // Axes carry their units.
  for (const QAbstractAxis* axis : view->chart()->axes()) {
    const QString t = axis->titleText();
    QVERIFY2(t.contains("(bytes)") || t.contains("(us)"), qPrintable(t));
  }

  // The same study run directly: same rows, and the markers sit where analysis::crossovers puts
  // the changes of winner at the largest rank count.
  const auto registry = algorithms::make_default_registry();
  const core::Scenario scenario = gui::load_preset("textbook");
  const core::StudySpec study = gui::make_study(c);
  const auto direct = analysis::run_study(scenario, study, registry);
  QVERIFY(w.sweep() != nullptr);
  QVERIFY(w.sweep()->result.rows == direct.rows);
  const auto ranges = analysis::crossovers(direct.rows);
  struct Change {
    double x;
    std::string before;
    std::string after;
  };
  std::vector<Change> expected;
  const analysis::CrossoverRange* previous = nullptr;
  for (const auto& r : ranges) {
    if (r.ranks != 64) {
      continue;
    }
    if (previous != nullptr && previous->winner != r.winner) {
      expected.push_back({static_cast<double>(r.from.value), previous->winner, r.winner});
    }
    previous = &r;
  }
  QVERIFY2(!expected.empty(), "the textbook study has crossovers at 64 ranks");
  const auto& markers = view->model().markers;
  QCOMPARE(markers.size(), expected.size());
  for (std::size_t i = 0; i < markers.size(); ++i) {
    QCOMPARE(markers[i].at.x, expected[i].x);
    QCOMPARE(markers[i].before, expected[i].before);
    QCOMPARE(markers[i].after, expected[i].after);
    QVERIFY(markers[i].label.find(expected[i].after) != std::string::npos);
  }
  // And on the drawn chart: one marker point per crossover at log2(size).
  const QXYSeries* drawn = nullptr;
  for (QAbstractSeries* s : view->chart()->series()) {
    if (s->name() == "crossovers") {
      drawn = qobject_cast<QXYSeries*>(s);
    }
  }
  QVERIFY(drawn != nullptr);
  QCOMPARE(static_cast<std::size_t>(drawn->count()), expected.size());
  for (int i = 0; i < drawn->count(); ++i) {
    QCOMPARE(drawn->at(i).x(), std::log2(expected[static_cast<std::size_t>(i)].x));
  }

  // The bus-bandwidth chart shows the limit line; the scaling chart both rank counts.
  auto* busbw = w.findChild<charts::ChartView*>("busbwView");
  QCOMPARE(busbw->model().series.size(), std::size_t{4});
  QCOMPARE(busbw->model().y.title, std::string("bus bandwidth (GB/s)"));
  QCOMPARE(busbw->model().levels.size(), std::size_t{1});
  // textbook: every pair has its own 10 GB/s link.
  QCOMPARE(busbw->model().levels[0].y, 10.0);
  auto* scaling = w.findChild<charts::ChartView*>("scalingView");
  QCOMPARE(scaling->model().series.size(), std::size_t{4});
  QCOMPARE(scaling->model().series[0].points.size(), std::size_t{2});

  // Showing 8 ranks redraws the crossover chart from the same result, without a new sweep.
  const std::uint64_t sweeps = w.sweeps_shown();
  auto* ranks_combo = w.findChild<QComboBox*>("crossoverRanksCombo");
  ranks_combo->setCurrentIndex(ranks_combo->findText("8"));
  QVERIFY(view->model().subtitle.find("8 ranks") != std::string::npos);
  QCOMPARE(w.sweeps_shown(), sweeps);
}

void GuiWindowTest::what_if_nic_bandwidth_doubles_the_large_message_time() {
  gui::MainWindow w;
  w.show();
  QVERIFY(w.open_preset("dgx-a100"));
  QVERIFY(wait_sweep(w, 0));
  gui::StudyControls c = w.controls();
  c.algorithms = {"ring"};
  c.ranks = "16";
  c.min_bytes = 1ULL << 20;
  c.max_bytes = 1ULL << 30;
  c.size_count = 4;
  std::uint64_t before = w.sweeps_shown();
  w.set_controls(c);
  QVERIFY(wait_sweep(w, before));
  const double t = row_time(*w.sweep(), "ring", 16, 1ULL << 30);
  QVERIFY(t > 0.0);

  // Halving the HDR200 NIC (25 -> 12.5 GB/s), the 2-node ring's bottleneck, doubles its 1 GiB
  // time (start-up costs are 0.1 % of it; what_if_test.cpp has the derivation).
  auto* nic = w.findChild<QDoubleSpinBox*>("knob:topology.node.nic_bandwidth");
  QVERIFY(nic != nullptr);
  QCOMPARE(nic->value(), 25.0);
  QCOMPARE(nic->suffix(), QString(" GB/s"));
  before = w.sweeps_shown();
  nic->setValue(12.5);
  QVERIFY(wait_sweep(w, before));
  QCOMPARE(w.what_if().values.at("topology.node.nic_bandwidth"), 12.5e9);
  const double t_half = row_time(*w.sweep(), "ring", 16, 1ULL << 30);
  QVERIFY2(std::abs(t_half / t - 2.0) < 0.02, qPrintable(QString::number(t_half / t)));
  // The chart shows the new time.
  auto* view = w.findChild<charts::ChartView*>("crossoverView");
  QCOMPARE(view->model().series.at(0).points.back().y, t_half * 1e6);

  // Ranks per node 4: the 16 ranks span 4 nodes; the ring still crosses nodes at 12.5 GB/s.
  auto* rpn = w.findChild<QSpinBox*>("ranksPerNodeSpin");
  QVERIFY(rpn->isEnabled());
  before = w.sweeps_shown();
  rpn->setValue(4);
  QVERIFY(wait_sweep(w, before));
  QCOMPARE(w.what_if().ranks_per_node.value_or(0), 4U);
  QCOMPARE(w.sweep()->scenario.topology.system.placement.ranks_per_node, 4U);

  // Reset: back to the scenario's values and times.
  before = w.sweeps_shown();
  QTest::mouseClick(w.findChild<QPushButton*>("resetWhatIfButton"), Qt::LeftButton);
  QVERIFY(wait_sweep(w, before));
  QVERIFY(w.what_if().values.empty());
  QCOMPARE(row_time(*w.sweep(), "ring", 16, 1ULL << 30), t);
}

void GuiWindowTest::bad_input_shows_in_the_error_banner_without_a_crash() {
  QTemporaryDir dir;
  QVERIFY(dir.isValid());
  gui::MainWindow w;
  w.show();
  QVERIFY(w.open_preset("textbook"));
  QVERIFY(wait_sweep(w, 0));
  auto* banner = w.findChild<QLabel*>("errorLabel");
  QVERIFY(banner != nullptr);
  QVERIFY(banner->isHidden());

  // Malformed YAML: an unclosed flow sequence on line 5.
  const QString bad = dir.filePath("bad.yaml");
  {
    QFile f(bad);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("name: bad\ntopology:\n  kind: uniform\n  bandwidth: 10 GB/s\n  latency: [2 us\n");
  }
  QVERIFY(!w.open_scenario_file(bad));
  QVERIFY(!banner->isHidden());
  const QRegularExpression at("^" + QRegularExpression::escape(bad) + ":[0-9]+:[0-9]+: error: ");
  QVERIFY2(at.match(banner->text()).hasMatch(), qPrintable(banner->text()));
  // The scenario shown before stays.
  QCOMPARE(w.sweep()->scenario.name, std::string("textbook"));

  // A value without its unit: the loader's message names line 4.
  {
    QFile f(bad);
    QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
    f.write("name: bad\ntopology:\n  kind: uniform\n  bandwidth: 10\nstudies: []\n");
  }
  QVERIFY(!w.open_scenario_file(bad));
  QVERIFY2(banner->text().startsWith(bad + ":4:14: error: topology.bandwidth"),
           qPrintable(banner->text()));

  // An unknown algorithm: the scenario opens, the banner points at the name, the others run.
  const QString typo = dir.filePath("typo.yaml");
  {
    QFile f(typo);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("name: typo\ntopology:\n  kind: uniform\n  latency: 2 us\n  bandwidth: 10 GB/s\n"
            "studies:\n  - collective: allreduce\n    algorithms: [ring, rign]\n"
            "    ranks: [8]\n    sizes: 1KiB:1MiB:x4\n");
  }
  std::uint64_t before = w.sweeps_shown();
  QVERIFY(w.open_scenario_file(typo));
  QVERIFY(wait_sweep(w, before));
  QVERIFY2(banner->text().startsWith(typo + ":8:24: error: studies[0].algorithms[1]: unknown "
                                            "allreduce algorithm 'rign'"),
           qPrintable(banner->text()));
  QCOMPARE(w.sweep()->study.algorithms, std::vector<std::string>{"ring"});

  // Bad controls: a rank list that is not one.
  auto* ranks = w.findChild<QLineEdit*>("ranksEdit");
  ranks->setText("8,x");
  QTRY_VERIFY_WITH_TIMEOUT(banner->text().contains("ranks: expected rank counts separated by "
                                                   "commas, got 'x'"),
                           10'000);
  // A good value clears the banner's controls line.
  before = w.sweeps_shown();
  ranks->setText("8");
  QVERIFY(wait_sweep(w, before));
  QVERIFY2(!banner->text().contains("ranks:"), qPrintable(banner->text()));
  // Loading a good preset clears the scenario's error.
  before = w.sweeps_shown();
  QVERIFY(w.open_preset("textbook"));
  QVERIFY(wait_sweep(w, before));
  QCOMPARE(banner->text(), QString());
  QVERIFY(banner->isHidden());
  QVERIFY(!w.open_preset("no-such-preset"));
  QVERIFY(banner->text().startsWith("unknown preset 'no-such-preset'"));
}

void GuiWindowTest::tuning_table_fills_with_one_colour_per_winner_and_exports() {
  QTemporaryDir dir;
  gui::MainWindow w;
  w.show();
  QVERIFY(w.open_preset("textbook"));
  QVERIFY(wait_sweep(w, 0));
  auto* tabs = w.findChild<QTabWidget*>("tabs");
  tabs->setCurrentIndex(4); // Tuning table
  QCOMPARE(tabs->tabText(4), QString("Tuning table"));
  QTRY_VERIFY_WITH_TIMEOUT(w.tunings_shown() >= 1 && !w.busy(), kWaitMs);
  const core::TuneTable* table = w.tuning();
  QVERIFY(table != nullptr);
  auto* grid = w.findChild<QTableWidget*>("tuningTable");
  const gui::StudyControls c = w.controls();
  const auto study = gui::make_study(c);
  QCOMPARE(grid->rowCount(), static_cast<int>(study.sizes.size()));
  QCOMPARE(grid->columnCount(), 2); // 8 and 64 ranks
  QCOMPARE(grid->horizontalHeaderItem(1)->text(), QString("64 ranks"));
  QCOMPARE(table->blocks.size(), std::size_t{2});
  std::map<QString, QColor> colour_of;
  std::size_t cells = 0;
  for (std::size_t col = 0; col < table->blocks.size(); ++col) {
    for (const auto& range : table->blocks[col].ranges) {
      const auto row = std::lower_bound(table->sizes.begin(), table->sizes.end(), range.from) -
                       table->sizes.begin();
      const QTableWidgetItem* item = grid->item(static_cast<int>(row), static_cast<int>(col));
      QVERIFY(item != nullptr);
      const QString label = q(core::label(range.winner));
      QCOMPARE(item->data(Qt::UserRole).toString(), label);
      const QColor colour = item->background().color();
      const auto [it, fresh] = colour_of.emplace(label, colour);
      QCOMPARE(it->second, colour); // one colour per winner
      ++cells;
    }
  }
  QVERIFY(cells >= 2);
  QVERIFY2(colour_of.size() >= 2, "textbook has more than one winner");
  std::set<QRgb> distinct;
  for (const auto& [label, colour] : colour_of) {
    distinct.insert(colour.rgb());
  }
  QCOMPARE(distinct.size(), colour_of.size()); // different winners, different colours

  // Export: CSV of the shown table; then an Open MPI rules file, which re-tunes over Open MPI's
  // algorithms only.
  auto* format = w.findChild<QComboBox*>("tuningFormatCombo");
  format->setCurrentText("csv");
  QTRY_VERIFY_WITH_TIMEOUT(w.tunings_shown() >= 2 && !w.busy(), kWaitMs);
  const QString csv = dir.filePath("t.csv");
  QVERIFY(w.export_tuning(csv));
  QFile f(csv);
  QVERIFY(f.open(QIODevice::ReadOnly));
  QCOMPARE(QString::fromUtf8(f.readAll()), q(io::format_tuning_csv(*w.tuning())));
  const std::uint64_t shown = w.tunings_shown();
  format->setCurrentText("ompi-rules 4.1");
  QTRY_VERIFY_WITH_TIMEOUT(w.tunings_shown() > shown && !w.busy(), kWaitMs);
  QVERIFY(w.tuning()->ompi.has_value());
  const QString rules = dir.filePath("t.rules");
  QVERIFY(w.export_tuning(rules));
  QFile g(rules);
  QVERIFY(g.open(QIODevice::ReadOnly));
  QCOMPARE(QString::fromUtf8(g.readAll()),
           q(io::format_ompi_rules(*w.tuning(), core::OmpiVersion::v4_1)));
}

void GuiWindowTest::stacks_field_compares_library_stacks() {
  // The JSC preset compares three library stacks: the field lists them, every row is labelled
  // ALGORITHM@STACK, one stack alone runs alone, and an unknown name is the banner's error.
  gui::MainWindow w;
  w.show();
  QVERIFY(w.open_preset("jsc-mpi-as-api"));
  QVERIFY(wait_sweep(w, 0));
  QCOMPARE(w.error_text(), QString());
  QCOMPARE(w.controls().stacks, std::string("openmpi-4.1,openmpi-4.1+ucc,openmpi-4.1+ucc+nccl"));
  std::set<std::string> labels;
  for (const auto& r : w.sweep()->result.rows) {
    labels.insert(r.algorithm);
    QCOMPARE(r.algorithm, "auto@" + r.stack);
  }
  QCOMPARE(labels, (std::set<std::string>{"auto@openmpi-4.1", "auto@openmpi-4.1+ucc",
                                          "auto@openmpi-4.1+ucc+nccl"}));
  auto* stacks = w.findChild<QLineEdit*>("stacksEdit");
  QVERIFY(stacks != nullptr);
  std::uint64_t before = w.sweeps_shown();
  stacks->setText("openmpi-4.1+ucc+nccl");
  QVERIFY(wait_sweep(w, before));
  for (const auto& r : w.sweep()->result.rows) {
    QCOMPARE(r.algorithm, std::string("auto@openmpi-4.1+ucc+nccl"));
  }
  stacks->setText("openmpi-9");
  QTRY_VERIFY_WITH_TIMEOUT(w.error_text().contains("unknown stack 'openmpi-9'"), 10'000);
}

void GuiWindowTest::counts_and_skew_fields_run_the_v_variant_and_late_ranks() {
  // The late-reduce preset's skew fills the skew field and every row starts from the late rank;
  // counts on a reduce are the banner's error; an alltoall with counts runs alltoallv.
  gui::MainWindow w;
  w.show();
  QVERIFY(w.open_preset("late-reduce"));
  QVERIFY(wait_sweep(w, 0));
  QCOMPARE(w.error_text(), QString());
  QCOMPARE(w.controls().skew, std::string("late:1ms"));
  QCOMPARE(w.controls().counts, std::string());
  QVERIFY(!w.sweep()->result.rows.empty());
  for (const auto& r : w.sweep()->result.rows) {
    QCOMPARE(r.last_arrival.value, 1e-3);
    QVERIFY(r.time.value > 1e-3);
  }
  auto* counts = w.findChild<QLineEdit*>("countsEdit");
  QVERIFY(counts != nullptr);
  counts->setText("zipf:1.2");
  QTRY_VERIFY_WITH_TIMEOUT(w.error_text().contains("reduce has no v-variant"), 10'000);

  gui::StudyControls c = w.controls();
  c.collective = core::CollectiveKind::alltoall;
  c.algorithms = {"pairwise", "linear", "bruck"};
  c.ranks = "8";
  c.min_bytes = 1024;
  c.max_bytes = 65536;
  c.size_count = 3;
  c.counts = "zipf:1.2";
  c.skew.clear();
  const std::uint64_t before = w.sweeps_shown();
  w.set_controls(c);
  QVERIFY(wait_sweep(w, before));
  QCOMPARE(w.error_text(), QString());
  QCOMPARE(w.sweep()->study.counts.text, std::string("zipf:1.2"));
  std::set<std::string> ran;
  for (const auto& r : w.sweep()->result.rows) {
    QVERIFY(r.varying);
    ran.insert(r.algorithm);
  }
  // Bruck has no alltoallv: skipped with its reason, the others ran.
  QCOMPARE(ran, (std::set<std::string>{"linear", "pairwise"}));
  QVERIFY(!w.sweep()->result.skipped.empty());
  QVERIFY(w.sweep()->result.skipped.front().find("takes no per-rank counts") != std::string::npos);
}

void GuiWindowTest::auto_runs_the_library_choice_in_sweeps_and_timelines() {
  // A preset whose study names `auto` (the library's choice) opens, lists `auto` first and
  // checked, and its sweep and timeline run what NCCL picks at each point.
  gui::MainWindow w;
  w.show();
  QVERIFY(w.open_preset("pcie3-2gpu-nop2p"));
  QVERIFY(wait_sweep(w, 0));
  QCOMPARE(w.error_text(), QString());
  QCOMPARE(w.controls().algorithms, (std::vector<std::string>{"auto", "nccl_ring"}));
  auto* list = w.findChild<QListWidget*>("algorithmList");
  QCOMPARE(list->item(0)->text(), QString("auto"));
  QCOMPARE(list->item(0)->checkState(), Qt::Checked);
  std::size_t automatic = 0;
  for (const auto& r : w.sweep()->result.rows) {
    if (r.algorithm == "auto") {
      ++automatic;
      QVERIFY2(r.params.rfind("algorithm=nccl_", 0) == 0, r.params.c_str());
    }
  }
  QVERIFY(automatic > 0);
  auto* tabs = w.findChild<QTabWidget*>("tabs");
  tabs->setCurrentIndex(5);
  QTRY_VERIFY_WITH_TIMEOUT(w.timelines_shown() >= 1 && !w.busy(), kWaitMs);
  QCOMPARE(w.error_text(), QString());
  QVERIFY(!w.findChild<charts::TimelineView*>("timelineView")->model().bars.empty());
}

void GuiWindowTest::timeline_shows_the_bars_of_one_run() {
  gui::MainWindow w;
  w.show();
  QVERIFY(w.open_preset("textbook"));
  QVERIFY(wait_sweep(w, 0));
  auto* tabs = w.findChild<QTabWidget*>("tabs");
  tabs->setCurrentIndex(5);
  QCOMPARE(tabs->tabText(5), QString("Timeline"));
  QTRY_VERIFY_WITH_TIMEOUT(w.timelines_shown() >= 1 && !w.busy(), kWaitMs);
  auto* view = w.findChild<charts::TimelineView*>("timelineView");
  const auto& m = view->model();
  // The first algorithm (ring) at the study's smallest rank count (8) and 1 MiB.
  QCOMPARE(w.findChild<QSpinBox*>("timelineRanksSpin")->value(), 8);
  QCOMPARE(m.ranks, 8U);
  QVERIFY(!m.bars.empty());
  std::set<std::uint32_t> lanes;
  for (const auto& b : m.bars) {
    QVERIFY(b.rank < 8);
    QVERIFY(b.end_us >= b.start_us);
    lanes.insert(b.rank);
  }
  QCOMPARE(lanes.size(), std::size_t{8});
  // Its end is the run's time as a sweep computes it.
  core::StudySpec one = gui::make_study(w.controls());
  one.algorithms = {"ring"};
  one.ranks = {8};
  one.sizes = {core::Bytes{1ULL << 20}};
  const auto registry = algorithms::make_default_registry();
  const auto direct = analysis::run_study(gui::load_preset("textbook"), one, registry);
  QCOMPARE(direct.rows.size(), std::size_t{1});
  QVERIFY(std::abs(m.end_us - direct.rows[0].time.value * 1e6) <= 1e-6 * m.end_us);
  // Fewer ranks, fewer lanes.
  const std::uint64_t shown = w.timelines_shown();
  w.findChild<QSpinBox*>("timelineRanksSpin")->setValue(4);
  QTRY_VERIFY_WITH_TIMEOUT(w.timelines_shown() > shown && !w.busy(), kWaitMs);
  QCOMPARE(view->model().ranks, 4U);
}

void GuiWindowTest::measured_logs_are_validated_with_auto() {
  gui::MainWindow w;
  w.show();
  QVERIFY(w.open_preset("dgx-a100"));
  QVERIFY(wait_sweep(w, 0));
  const std::string log = std::string(COLLSIM_TEST_DATA_DIR) +
                          "/logs/a100sxm4_80gb_1x8_allreduce_128M_nccl-tests-2.19.4.txt";
  w.ingest_logs({q(log)});
  QTRY_VERIFY_WITH_TIMEOUT(w.validations_shown() >= 1 && !w.busy(), kWaitMs);
  QCOMPARE(w.error_text(), QString());
  const gui::ValidationOutput* v = w.validation();
  QVERIFY(v != nullptr);
  QVERIFY(!v->result.rows.empty());
  // The same validation computed directly.
  const auto points = analysis::read_measured_logs({log}).points;
  const auto registry = algorithms::make_default_registry();
  analysis::ValidateOptions options;
  options.algorithm = "auto";
  const core::Scenario scenario = gui::load_preset("dgx-a100");
  options.engine = analysis::EngineChoice("loggp", scenario);
  const auto direct = analysis::validate(scenario, points, registry, options);
  QCOMPARE(v->result.rows.size(), direct.rows.size());
  QCOMPARE(v->result.summary.all.median_abs_err_pct, direct.summary.all.median_abs_err_pct);
  // Median and p90 are on screen.
  const QString summary = w.findChild<QLabel*>("validationSummary")->text();
  QVERIFY2(summary.contains(
               QString::asprintf("median |error| %.1f %%", direct.summary.all.median_abs_err_pct)),
           qPrintable(summary));
  QVERIFY2(summary.contains(
               QString::asprintf("p90 |error| %.1f %%", direct.summary.all.p90_abs_err_pct)),
           qPrintable(summary));
  auto* view = w.findChild<charts::ChartView*>("validationView");
  QVERIFY(!view->model().series.empty());
  QVERIFY(view->model().series[0].scatter);
  QVERIFY(view->model().subtitle.find("median |err|") != std::string::npos);

  // A log that is not one: the banner says so.
  QTemporaryDir dir;
  const QString junk = dir.filePath("junk.txt");
  {
    QFile f(junk);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("this is not a benchmark log\n");
  }
  w.ingest_logs({junk});
  QVERIFY2(w.error_text().contains("junk.txt"), qPrintable(w.error_text()));
}

void GuiWindowTest::chart_tabs_export_png_svg_and_csv() {
  QTemporaryDir dir;
  gui::MainWindow w;
  w.resize(1200, 800);
  w.show();
  QVERIFY(w.open_preset("textbook"));
  QVERIFY(wait_sweep(w, 0));
  for (const QString& tab : QStringList{"crossover", "busbw", "scaling"}) {
    const QString png = dir.filePath(tab + ".png");
    const QString svg = dir.filePath(tab + ".svg");
    const QString csv = dir.filePath(tab + ".csv");
    QVERIFY(w.export_chart(tab, png));
    QVERIFY(w.export_chart(tab, svg));
    QVERIFY(w.export_chart(tab, csv));
    QImage image(png);
    QVERIFY(!image.isNull());
    QVERIFY(image.width() > 100);
    QFile s(svg);
    QVERIFY(s.open(QIODevice::ReadOnly));
    QVERIFY(s.readAll().contains("<svg"));
    QFile c(csv);
    QVERIFY(c.open(QIODevice::ReadOnly));
    const QString text = QString::fromUtf8(c.readAll());
    QVERIFY2(text.contains(tab == "scaling" ? "series,x (ranks),y (GB/s)"
                           : tab == "busbw" ? "series,x (bytes),y (GB/s)"
                                            : "series,x (bytes),y (us)"),
             qPrintable(text.left(300)));
    QVERIFY(text.contains("\nring,"));
  }
  QVERIFY(!w.export_chart("crossover", dir.filePath("x.bmp")));
  QVERIFY(w.error_text().contains("export as .png, .svg or .csv"));
  QVERIFY(!w.export_chart("crossover", "/nonexistent-dir/x.csv"));
  QVERIFY(w.error_text().contains("cannot write"));
}

void GuiWindowTest::command_line_options() {
  const auto o = gui::parse_command_line({"--preset", "dgx-a100", "--screenshot", "f.png"});
  QCOMPARE(o.preset, std::string("dgx-a100"));
  QCOMPARE(o.screenshot, std::string("f.png"));
  QCOMPARE(gui::parse_command_line({}).preset, std::string("default"));
  QCOMPARE(gui::parse_command_line({"x.yaml", "-platform", "offscreen"}).scenario,
           std::string("x.yaml"));
  QVERIFY_THROWS_EXCEPTION(core::UsageError, gui::parse_command_line({"--frobnicate"}));
  QVERIFY_THROWS_EXCEPTION(core::UsageError, gui::parse_command_line({"a.yaml", "b.yaml"}));
  QVERIFY_THROWS_EXCEPTION(core::UsageError, gui::parse_command_line({"--screenshot"}));
  QCOMPARE(gui::power_of_two_sizes(core::Bytes{8}, core::Bytes{1ULL << 32}, 30).size(),
           std::size_t{30});
  QCOMPARE(gui::power_of_two_sizes(core::Bytes{1024}, core::Bytes{4096}, 30),
           (std::vector<core::Bytes>{core::Bytes{1024}, core::Bytes{2048}, core::Bytes{4096}}));
  QCOMPARE(gui::parse_params("protocol=simple, channels=4"),
           (std::map<std::string, std::string>{{"channels", "4"}, {"protocol", "simple"}}));
  QVERIFY_THROWS_EXCEPTION(core::UsageError, gui::parse_params("protocol"));
  QCOMPARE(gui::parse_rank_list("8, 16,8,64"), (std::vector<std::uint32_t>{8, 16, 64}));
  QVERIFY_THROWS_EXCEPTION(core::UsageError, gui::parse_rank_list("0"));
}

void GuiWindowTest::recompute_time_of_10_algorithms_30_sizes_64_ranks() {
  // Not a timing assertion (timing goals live in bench/): prints what a what-if change costs.
  const auto registry = algorithms::make_default_registry();
  const core::Scenario scenario = gui::load_preset("dgx-a100");
  gui::StudyControls c = gui::default_controls(scenario, registry);
  c.algorithms.clear();
  for (const auto* a : registry.list(core::CollectiveKind::allreduce)) {
    if (c.algorithms.size() < 10) {
      c.algorithms.push_back(a->name);
    }
  }
  c.ranks = "64";
  c.min_bytes = 8;
  c.max_bytes = 1ULL << 32;
  c.size_count = 30;
  const core::StudySpec study = gui::make_study(c);
  QCOMPARE(study.sizes.size(), std::size_t{30});
  QElapsedTimer timer;
  timer.start();
  const gui::SweepResult r = gui::compute_sweep(scenario, {}, study, registry);
  const qint64 compute_ms = timer.elapsed();
  timer.restart();
  const gui::SweepCharts charts = gui::sweep_charts(r);
  const qint64 models_ms = timer.elapsed();
  QCOMPARE(r.result.rows.size() + r.result.skipped.size(), std::size_t{300});
  QCOMPARE(
      charts.crossover.series.size(), std::size_t{10} - [&] {
        std::set<std::string> skipped_algos;
        for (const auto& algo : c.algorithms) {
          if (std::none_of(r.result.rows.begin(), r.result.rows.end(),
                           [&](const auto& row) { return row.algorithm == algo; })) {
            skipped_algos.insert(algo);
          }
        }
        return skipped_algos.size();
      }());

  // In the window: a what-if change to the charts drawn, debounce (100 ms) included.
  gui::MainWindow w;
  w.show();
  w.set_scenario(scenario);
  QVERIFY(wait_sweep(w, 0));
  std::uint64_t before = w.sweeps_shown();
  w.set_controls(c);
  QVERIFY(wait_sweep(w, before));
  auto* nic = w.findChild<QDoubleSpinBox*>("knob:topology.node.nic_bandwidth");
  before = w.sweeps_shown();
  timer.restart();
  nic->setValue(50.0);
  QVERIFY(wait_sweep(w, before));
  const qint64 window_ms = timer.elapsed();
  std::printf("RECOMPUTE dgx-a100 loggp, %zu algorithms x %zu sizes at 64 ranks (%zu points, %zu "
              "skipped): compute_sweep %lld ms, chart models %lld ms; in the window, what-if "
              "change to charts drawn %lld ms (100 ms debounce included), the window's own "
              "sweep %.0f ms\n",
              study.algorithms.size(), study.sizes.size(), r.result.rows.size(),
              r.result.skipped.size(), static_cast<long long>(compute_ms),
              static_cast<long long>(models_ms), static_cast<long long>(window_ms),
              w.sweep()->seconds * 1e3);
  std::fflush(stdout);
}

void GuiWindowTest::compare_tab_shows_the_machines_of_a_compare_file() {
  gui::MainWindow w;
  w.show();
  auto* tabs = w.findChild<QTabWidget*>("tabs");
  const int last = tabs->count() - 1;
  QCOMPARE(tabs->tabText(last), QString("Compare"));
  tabs->setCurrentIndex(last);
  auto* tab = w.findChild<gui::CompareTab*>("compareTab");
  QVERIFY(tab != nullptr);
  // The shipped example: HDR, NDR, 2 x HDR, a 2:1 taper and half the nodes on DGX A100.
  const std::string file = std::string(COLLSIM_SOURCE_DIR) + "/workloads/hdr-vs-ndr.yaml";
  tab->run_file(QString::fromStdString(file));
  QTRY_VERIFY_WITH_TIMEOUT(!tab->busy(), kWaitMs);
  QCOMPARE(tab->error_text(), QString());
  auto* table = w.findChild<QTableWidget*>("compareTable");
  QCOMPARE(table->rowCount(), 5);
  QCOMPARE(table->item(0, 0)->text(), QString("HDR200 (dgx-a100) x 16"));
  QCOMPARE(table->item(4, 1)->text(), QString("64")); // half the nodes: 8 x 8 GPUs
  // The table is what `collsim compare --file` computes for the same file.
  const io::CompareSpec spec = io::load_compare(file);
  const core::Workload workload = io::load_workload(spec.workload);
  std::vector<analysis::CompareEntry> entries;
  for (const auto& m : spec.machines) {
    entries.push_back(
        {m.label, m.scenario, m.nodes != 0 ? m.nodes : spec.nodes, &workload, false, m.price});
  }
  const auto registry = algorithms::make_default_registry();
  const auto rows = analysis::compare_machines(entries, registry, "loggp", 0);
  for (int r = 0; r < 5; ++r) {
    QCOMPARE(table->item(r, 2)->text(),
             QString::number(rows[static_cast<std::size_t>(r)].timing.step.value * 1e3, 'f', 3));
  }
  // One stacked bar per machine: compute and exposed communication.
  auto* view = w.findChild<QChartView*>("compareChart");
  QVERIFY(view != nullptr && view->chart() != nullptr);
  const auto series = view->chart()->series();
  QCOMPARE(series.size(), 1);
  auto* bars = qobject_cast<QStackedBarSeries*>(series.front());
  QVERIFY(bars != nullptr);
  QCOMPARE(bars->count(), 2);
  QCOMPARE(bars->barSets().at(0)->count(), 5);

  // A file that is not a compare file is one message in the tab, not a crash.
  tab->run_file(QString(COLLSIM_SOURCE_DIR) + "/workloads/tp-dp-layers.yaml");
  QTRY_VERIFY_WITH_TIMEOUT(!tab->busy(), kWaitMs);
  QVERIFY2(tab->error_text().contains("tp-dp-layers.yaml"), qPrintable(tab->error_text()));
}

int main(int argc, char** argv) {
  if (argc == 5 && std::string(argv[1]) == "--check-screenshot") {
    return check_screenshot(argv[2], std::atoi(argv[3]), std::atoi(argv[4]));
  }
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) {
    qputenv("QT_QPA_PLATFORM", "offscreen");
  }
  QApplication app(argc, argv);
  GuiWindowTest test;
  return QTest::qExec(&test, argc, argv);
}

void GuiWindowTest::a_scenario_names_an_msccl_file_beside_the_built_in_algorithms() {
  // A study's `file:X.xml` (issue 22) is listed, checked and swept like a registered algorithm.
  QTemporaryDir dir;
  QVERIFY(dir.isValid());
  const std::string xml = std::string(COLLSIM_TEST_DATA_DIR) + "/msccl/mt_ring_8_1.xml";
  const QString path = dir.filePath("msccl.yaml");
  {
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(("name: msccl\nbase: dgx-h100\nstudies:\n  - collective: allreduce\n"
             "    algorithms: [nccl_ring, file:" +
             xml + "]\n    ranks: [8]\n    sizes: 1MiB:16MiB:x4\n")
                .c_str());
  }
  gui::MainWindow w;
  w.show();
  QVERIFY(w.open_scenario_file(path));
  QVERIFY(wait_sweep(w, 0));
  QCOMPARE(w.error_text(), QString());
  QCOMPARE(w.controls().algorithms, (std::vector<std::string>{"nccl_ring", "file:" + xml}));
  std::size_t imported = 0;
  for (const auto& r : w.sweep()->result.rows) {
    imported += r.algorithm == "file:" + xml ? 1 : 0;
  }
  QCOMPARE(imported, std::size_t{3});
}

#include "gui_window_test.moc"
