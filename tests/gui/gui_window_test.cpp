// collsim-gui's window on Qt's offscreen platform: a sweep draws one series per algorithm with
// the crossovers analysis::crossovers finds; a what-if change moves the result by what the
// bottleneck says; a bad scenario file shows file:line:column in the error banner; the tuning
// table fills; stacks, counts and skew run (the rest: gui_window_views_test.cpp). Also, with
// --check-screenshot FILE W H, the check of collsim-gui's real-screen grab (screenshot_test.sh).

#include "gui_window_test.hpp"

using namespace collsim;
using namespace collsim::testing::window;

namespace {

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
