// collsim-gui's window on Qt's offscreen platform, continued (gui_window_test.cpp has the rest and
// main): `auto` in sweeps and timelines, the timeline's bars, measured logs validated with auto,
// chart exports, the command line, the recompute time, the compare tab and MSCCL files named in a
// scenario.

#include "gui_window_test.hpp"

using namespace collsim;
using namespace collsim::testing::window;

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
