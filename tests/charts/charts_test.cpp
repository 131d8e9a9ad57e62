// gui/charts: chart models built from result tables (values), their Qt Charts drawing (series,
// markers, axes) and files written without a display (PNG and SVG of the asked size, not blank).

#include "collsim/analysis/simulate.hpp"
#include "collsim/charts/chart_model.hpp"
#include "collsim/charts/qt_chart.hpp"
#include "collsim/charts/render.hpp"
#include "collsim/core/errors.hpp"
#include "collsim/io/scenario_loader.hpp"

#include <QApplication>
#include <QCategoryAxis>
#include <QFile>
#include <QImage>
#include <QScatterSeries>
#include <QXYSeries>
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <set>

using namespace collsim;
using core::Bytes;
using core::CollectiveKind;
using core::Seconds;

namespace {

core::ResultRow row(const std::string& algo, std::uint32_t ranks, std::uint64_t bytes,
                    double time_us) {
  return core::make_result_row(CollectiveKind::allreduce, algo, "loggp", ranks, Bytes{bytes},
                               Seconds{time_us * 1e-6});
}

/// Two algorithms at 8 ranks: "small" wins up to 1 KiB, "large" from 4 KiB on.
charts::StudyTables two_algorithms() {
  charts::StudyTables t;
  t.title = "test";
  t.rows = {row("small", 8, 256, 1.0),    row("small", 8, 1024, 2.0),  row("small", 8, 4096, 9.0),
            row("small", 8, 16384, 40.0), row("large", 8, 256, 5.0),   row("large", 8, 1024, 6.0),
            row("large", 8, 4096, 7.0),   row("large", 8, 16384, 10.0)};
  t.crossovers = analysis::crossovers(t.rows);
  t.limit = analysis::BusbwLimit{core::Bandwidth{25e9}, "test limit"};
  return t;
}

/// Qt needs an application for fonts and widgets; tests run on the offscreen platform.
void ensure_app() {
  if (QApplication::instance() == nullptr) {
    static int argc = 1;
    static char name[] = "charts_test";
    static char* argv[] = {name, nullptr};
    qputenv("QT_QPA_PLATFORM", "offscreen");
    new QApplication(argc, argv); // kept for the process: Qt's globals outlive it
  }
}

std::filesystem::path temp_dir(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / ("collsim_charts_test_" + name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

} // namespace

TEST_CASE("crossover chart: one series per algorithm, a marker where the winner changes") {
  const charts::ChartModel c = charts::crossover_chart(two_algorithms());
  REQUIRE(c.series.size() == 2);
  CHECK(c.series[0].name == "small");
  CHECK(c.series[1].name == "large");
  REQUIRE(c.series[0].points.size() == 4);
  CHECK(c.series[0].points[2] == charts::Point{4096.0, 9.0});
  CHECK(c.x.unit == charts::AxisUnit::bytes);
  CHECK(c.y.unit == charts::AxisUnit::microseconds);
  CHECK(c.x.log);
  CHECK(c.y.log);
  REQUIRE(c.markers.size() == 1);
  CHECK(c.markers[0].at == charts::Point{4096.0, 7.0});
  CHECK(c.markers[0].before == "small");
  CHECK(c.markers[0].after == "large");
  CHECK(c.markers[0].label == "4 KiB: small -> large");
}

TEST_CASE("crossover chart: markers only at the chosen rank count") {
  charts::StudyTables t = two_algorithms();
  // At 16 ranks "large" wins everywhere: no crossover there.
  for (std::uint64_t b : {256, 1024, 4096, 16384}) {
    t.rows.push_back(row("small", 16, b, 100.0));
    t.rows.push_back(row("large", 16, b, 50.0));
  }
  t.crossovers = analysis::crossovers(t.rows);
  CHECK(charts::crossover_chart(t).markers.empty()); // default: the largest, 16
  CHECK(charts::crossover_chart(t, 8).markers.size() == 1);
  CHECK(charts::crossover_chart(t, 16).series.at(0).points.at(0).y == Approx(100.0));
}

TEST_CASE("busbw and scaling charts: bus bandwidth in GB/s and the limit as a level") {
  charts::StudyTables t = two_algorithms();
  t.rows.push_back(row("small", 16, 16384, 80.0));
  const charts::ChartModel b = charts::busbw_chart(t, 8);
  REQUIRE(b.series.size() == 2);
  // busbw = S / t x 2 (p - 1) / p = 16384 B / 40 us x 14 / 8 = 0.7168 GB/s.
  CHECK(b.series[0].points.back().y == Approx(16384.0 / 40e-6 * 14.0 / 8.0 / 1e9));
  CHECK(b.y.unit == charts::AxisUnit::gbps);
  CHECK_FALSE(b.y.log);
  REQUIRE(b.levels.size() == 1);
  CHECK(b.levels[0].y == Approx(25.0));
  CHECK(b.levels[0].name == "limit: test limit");

  const charts::ChartModel s = charts::scaling_chart(t);
  CHECK(s.x.unit == charts::AxisUnit::ranks);
  REQUIRE(s.series.size() == 2);
  REQUIRE(s.series[0].points.size() == 2); // small at 8 and 16 ranks, 16 KiB
  CHECK(s.series[0].points[0].x == 8.0);
  CHECK(s.series[0].points[1].x == 16.0);
  CHECK(s.series[0].points[1].y == Approx(16384.0 / 80e-6 * 30.0 / 16.0 / 1e9));
  CHECK(s.series[1].points.size() == 1);
}

TEST_CASE("validation chart: measured and predicted series per rank count, errors in the title") {
  std::vector<analysis::ValidationRow> rows;
  for (std::uint32_t p : {8U, 16U}) {
    for (std::uint64_t b : {1024ULL, 1048576ULL}) {
      analysis::ValidationRow r;
      r.measured.ranks = p;
      r.measured.bytes = Bytes{b};
      r.measured.time = Seconds{1e-5 * static_cast<double>(p)};
      r.predicted = Seconds{1.1e-5 * static_cast<double>(p)};
      r.algorithm = "ring";
      r.error_pct = 10.0;
      rows.push_back(r);
    }
  }
  const charts::ChartModel c = charts::validation_chart("v", rows, analysis::summarize(rows));
  REQUIRE(c.series.size() == 4);
  CHECK(c.series[0].name == "measured allreduce (8 ranks)");
  CHECK(c.series[0].scatter);
  CHECK(c.series[1].name == "collsim allreduce (8 ranks; ring)");
  CHECK_FALSE(c.series[1].scatter);
  CHECK(c.series[2].points[1] == charts::Point{1048576.0, 160.0});
  CHECK(c.series[3].points[1].y == Approx(176.0));
  CHECK(c.subtitle.find("4 points: median |err| 10.0 %") != std::string::npos);
}

TEST_CASE("chart CSV: every point, marker and level with units in the header") {
  const std::string csv = charts::chart_csv(charts::busbw_chart(two_algorithms()));
  CHECK(csv.find("series,x (bytes),y (GB/s)\n") != std::string::npos);
  CHECK(csv.find("small,256,") != std::string::npos);
  CHECK(csv.find("large,16384,") != std::string::npos);
  CHECK(csv.find("limit: test limit,,25\n") != std::string::npos);
  // header (3 lines) + 8 points + 1 level
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 12);
}

TEST_CASE("chart kinds by name") {
  CHECK(charts::parse_chart_kind("scaling") == charts::ChartKind::scaling);
  CHECK(charts::to_string(charts::ChartKind::validation) == "validation");
  CHECK_THROWS_WITH(charts::parse_chart_kind("pie"),
                    Catch::Matchers::Contains("crossover, busbw, scaling, validation"));
}

TEST_CASE("hover labels give exact values with units") {
  const charts::ChartModel c = charts::crossover_chart(two_algorithms());
  CHECK(charts::point_label(c, "small", {4096.0, 9.0}) == "small  4 KiB  9.000 us");
  CHECK(charts::point_label(charts::busbw_chart(two_algorithms()), "large", {1024.0, 0.25}) ==
        "large  1 KiB  0.25 GB/s");
  CHECK(charts::size_label(1536.0) == "1536 B");
}

TEST_CASE("Qt chart: algorithms, the limit and the crossovers as series, log2 size axis") {
  ensure_app();
  charts::ChartModel model = charts::busbw_chart(two_algorithms());
  model.markers = charts::crossover_chart(two_algorithms()).markers;
  std::unique_ptr<QChart> chart(charts::make_chart(model));
  const auto series = chart->series();
  REQUIRE(series.size() == 4); // small, large, the limit, the crossovers
  CHECK(series[0]->name() == "small");
  CHECK(series[2]->name() == "limit: test limit");
  CHECK(series[3]->name() == "crossovers");
  auto* markers = qobject_cast<QScatterSeries*>(series[3]);
  REQUIRE(markers != nullptr);
  REQUIRE(markers->count() == 1);
  CHECK(markers->at(0).x() == Approx(12.0)); // log2(4096)
  auto* first = qobject_cast<QXYSeries*>(series[0]);
  REQUIRE(first->count() == 4);
  CHECK(first->at(0).x() == Approx(8.0)); // log2(256)
  const auto x_axes = chart->axes(Qt::Horizontal);
  REQUIRE(x_axes.size() == 1);
  auto* x = qobject_cast<QCategoryAxis*>(x_axes[0]);
  REQUIRE(x != nullptr);
  CHECK(x->categoriesLabels().contains("4 KiB"));
  CHECK(x->titleText() == "message size (bytes)");
}

TEST_CASE("save_chart writes a PNG and an SVG of the asked size, not blank") {
  const auto dir = temp_dir("save");
  const charts::ChartModel model = charts::crossover_chart(two_algorithms());
  const std::string png = (dir / "c.png").string();
  const std::string svg = (dir / "c.svg").string();
  charts::save_chart(model, png, {800, 500});
  charts::save_chart(model, svg, {800, 500});
  ensure_app();
  const QImage image(QString::fromStdString(png));
  REQUIRE_FALSE(image.isNull());
  CHECK(image.width() == 800);
  CHECK(image.height() == 500);
  std::set<QRgb> colors;
  for (int y = 0; y < image.height(); y += 3) {
    for (int x = 0; x < image.width(); x += 3) {
      colors.insert(image.pixel(x, y));
    }
  }
  CHECK(colors.size() > 20); // series colours, text, grid: not a blank canvas
  QFile f(QString::fromStdString(svg));
  REQUIRE(f.open(QIODevice::ReadOnly));
  const QByteArray text = f.readAll();
  CHECK(text.contains("viewBox=\"0 0 800 500\""));
  CHECK(text.contains("small"));
  CHECK(text.contains("4 KiB: small -&gt; large"));
}

TEST_CASE("save_chart: bad extension, absurd size and an unwritable path are errors") {
  const charts::ChartModel model = charts::crossover_chart(two_algorithms());
  CHECK_THROWS_WITH(charts::save_chart(model, "chart.jpg"),
                    Catch::Matchers::Contains("must end in .png or .svg"));
  CHECK_THROWS_WITH(charts::save_chart(model, "chart.png", {10, 100000}),
                    Catch::Matchers::Contains("100 to 20000 pixels"));
  CHECK_THROWS_WITH(charts::save_chart(model, "/nonexistent-dir/chart.png"),
                    Catch::Matchers::Contains("cannot write '/nonexistent-dir/chart.png'"));
}

TEST_CASE("study tables of a preset: title, rows and the machine's limit") {
  const core::Scenario s = io::load_scenario("textbook");
  const algorithms::Registry registry = algorithms::make_default_registry();
  const analysis::StudyResult r = analysis::run_study(s, s.studies.at(0), registry, {}, 1);
  const charts::StudyTables t = charts::study_tables(s, 0, r);
  CHECK(t.title == "textbook: study 1");
  CHECK(t.rows.size() == r.rows.size());
  REQUIRE(t.limit.has_value());
  // The textbook machine: every pair of ranks joined by its own link of topology.bandwidth.
  CHECK(t.limit->bandwidth.bytes_per_second ==
        Approx(s.topology.uniform.bandwidth.bytes_per_second));
  const auto dir = temp_dir("study");
  const auto files = charts::save_study_charts(t, 0, dir.string(), "png,svg");
  // crossover, busbw and scaling (the study runs several rank counts), PNG and SVG each
  REQUIRE(s.studies.at(0).ranks.size() > 1);
  CHECK(files.size() == 6);
  for (const auto& f : files) {
    CHECK(std::filesystem::file_size(f) > 1000);
  }
  CHECK_THROWS_AS(charts::save_study_charts(t, 0, dir.string(), "pdf"), core::UnknownNameError);
}

TEST_CASE("timeline of a run: a bar per rank operation inside the run") {
  core::Scenario s = io::load_scenario("textbook");
  core::StudySpec study;
  study.algorithms = {"ring"};
  study.ranks = {4};
  study.sizes = {Bytes{4096}};
  core::RunOptions options;
  options.timeline = true;
  options.messages = true;
  const algorithms::Registry registry = algorithms::make_default_registry();
  const analysis::PointRun run = analysis::run_point(s, study, registry, options);
  const charts::TimelineModel m = charts::timeline_model(run, "ring");
  CHECK(m.ranks == 4);
  CHECK(m.bars.size() == run.schedule.op_count());
  CHECK(m.end_us == Approx(run.result.time.value * 1e6));
  std::set<std::uint32_t> lanes;
  for (const auto& b : m.bars) {
    CHECK(b.start_us >= 0.0);
    CHECK(b.end_us <= m.end_us * (1 + 1e-12));
    CHECK(b.start_us <= b.end_us);
    lanes.insert(b.rank);
  }
  CHECK(lanes.size() == 4);
  // Ring allreduce on 4 ranks: each rank sends 2 (p - 1) = 6 chunks of S / p = 1 KiB.
  std::size_t sends = 0;
  for (const auto& b : m.bars) {
    if (b.kind == core::OpKind::send && b.rank == 0) {
      ++sends;
      CHECK(b.label.rfind("send 1 KiB to 1", 0) == 0);
    }
  }
  CHECK(sends == 6);
  // textbook: alpha 2 us, 10 GB/s; a 1 KiB message is on the wire for 2 us + 1024 B / 10 GB/s,
  // and rank 0's first send starts at 0.
  const auto first = std::find_if(m.bars.begin(), m.bars.end(), [](const auto& b) {
    return b.rank == 0 && b.kind == core::OpKind::send;
  });
  REQUIRE(first != m.bars.end());
  CHECK(first->start_us == Approx(0.0).margin(1e-9));
  CHECK(first->end_us - first->start_us == Approx(2.0 + 1024.0 / 10e9 * 1e6));
  const auto dir = temp_dir("timeline");
  charts::save_timeline(m, (dir / "t.png").string(), {640, 300});
  ensure_app();
  const QImage image(QString::fromStdString((dir / "t.png").string()));
  CHECK(image.width() == 640);
  CHECK(image.height() == 300);
}
