// `collsim plot` and `collsim run --plots`: charts of every preset's studies written without a
// display, validation charts from a real log, and the errors of bad input (issue 8).

#include "cli_test_support.hpp"

#include "collsim/core/units.hpp"
#include "collsim/io/presets.hpp"
#include "collsim/io/scenario_loader.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>

namespace {

using collsim::testing::run_collsim;
namespace fs = std::filesystem;

const char* kA100Log = "tests/data/logs/a100sxm4_80gb_1x8_allreduce_128M_nccl-tests-2.19.4.txt";

std::string slurp(const fs::path& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

fs::path temp_dir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("collsim_plot_test_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

/// Width and height from a PNG's IHDR chunk (bytes 16..23, big-endian).
std::pair<std::uint32_t, std::uint32_t> png_size(const fs::path& path) {
  const std::string b = slurp(path);
  REQUIRE(b.size() > 24);
  REQUIRE(b.compare(1, 3, "PNG") == 0);
  auto be32 = [&](std::size_t at) {
    std::uint32_t v = 0;
    for (std::size_t i = 0; i < 4; ++i) {
      v = (v << 8) | static_cast<unsigned char>(b[at + i]);
    }
    return v;
  };
  return {be32(16), be32(20)};
}

void check_png(const fs::path& path, std::uint32_t w, std::uint32_t h) {
  INFO(path.string());
  REQUIRE(fs::exists(path));
  CHECK(png_size(path) == std::pair{w, h});
  // A chart with lines and text compresses to tens of KiB; a blank 1000 x 600 PNG to ~2 KiB.
  CHECK(fs::file_size(path) > 10000);
}

void check_svg(const fs::path& path, std::uint32_t w, std::uint32_t h) {
  INFO(path.string());
  REQUIRE(fs::exists(path));
  const std::string text = slurp(path);
  CHECK(text.find(fmt::format("viewBox=\"0 0 {} {}\"", w, h)) != std::string::npos);
  CHECK(text.find("message size (bytes)") != std::string::npos);
}

/// Every study of every other preset (start 0 or 1: two test cases that ctest runs in parallel).
void plot_presets(std::size_t start) {
  const auto dir = temp_dir(fmt::format("presets{}", start));
  const auto names = collsim::io::preset_names();
  REQUIRE(names.size() >= 18);
  for (std::size_t i = start; i < names.size(); i += 2) {
    const collsim::core::Scenario s = collsim::io::load_scenario(names[i]);
    for (std::size_t k = 1; k <= s.studies.size(); ++k) {
      const fs::path png = dir / fmt::format("{}-{}.png", names[i], k);
      const fs::path svg = dir / fmt::format("{}-{}.svg", names[i], k);
      const auto o = run_collsim(fmt::format("plot --scenario {} --study {} -o '{}' -o '{}'",
                                             names[i], k, png.string(), svg.string()));
      INFO(names[i] << " study " << k << ": " << o.err);
      REQUIRE(o.code == 0);
      check_png(png, 1000, 600);
      check_svg(svg, 1000, 600);
    }
  }
}

} // namespace

TEST_CASE("collsim plot draws every study of the presets (first half) as PNG and SVG",
          "[cli][plot]") {
  plot_presets(0);
}

TEST_CASE("collsim plot draws every study of the presets (second half) as PNG and SVG",
          "[cli][plot]") {
  plot_presets(1);
}

TEST_CASE("collsim plot: kinds, sizes and the CSV of the chart", "[cli][plot]") {
  const auto dir = temp_dir("kinds");
  const auto o = run_collsim(fmt::format(
      "plot --scenario textbook --kind scaling --size 512KiB --width 640 --height 400 -o '{}' -o "
      "'{}'",
      (dir / "s.png").string(), (dir / "s.csv").string()));
  INFO(o.err);
  REQUIRE(o.code == 0);
  check_png(dir / "s.png", 640, 400);
  const std::string csv = slurp(dir / "s.csv");
  CHECK(csv.find("series,x (ranks),y (GB/s)\n") != std::string::npos);
  // textbook study 1: 4 algorithms at 8 and 64 ranks.
  CHECK(csv.find("\nring,8,") != std::string::npos);
  CHECK(csv.find("\nring,64,") != std::string::npos);
  CHECK(o.err.find("scaling chart: 4 series") != std::string::npos);
}

TEST_CASE("collsim plot: the crossover markers are the crossovers of collsim run's table",
          "[cli][plot]") {
  const auto dir = temp_dir("markers");
  const auto plot = run_collsim(
      fmt::format("plot --scenario textbook --ranks 64 -o '{}'", (dir / "c.csv").string()));
  REQUIRE(plot.code == 0);
  const auto run = run_collsim("run textbook --format json");
  REQUIRE(run.code == 0);
  const auto j = nlohmann::json::parse(run.out);
  // Every change of winner at 64 ranks in the table is one marker row "crossover: <from>: a -> b".
  std::vector<std::string> expected;
  std::string previous;
  for (const auto& c : j.at("crossovers")) {
    if (c.at("ranks") != 64) {
      continue;
    }
    const std::string winner = c.at("fastest");
    if (!previous.empty() && winner != previous) {
      const std::uint64_t from = c.at("from_bytes");
      expected.push_back(fmt::format("crossover: {}: {} -> {},{},",
                                     collsim::core::format_bytes(collsim::core::Bytes{from}),
                                     previous, winner, from));
    }
    previous = winner;
  }
  REQUIRE_FALSE(expected.empty());
  const std::string csv = slurp(dir / "c.csv");
  for (const auto& e : expected) {
    CHECK(csv.find(e) != std::string::npos);
  }
  std::size_t markers = 0;
  for (std::size_t at = csv.find("\ncrossover: "); at != std::string::npos;
       at = csv.find("\ncrossover: ", at + 1)) {
    ++markers;
  }
  CHECK(markers == expected.size());
}

TEST_CASE("collsim plot --kind validation: a real nccl-tests log against a calibrated profile",
          "[cli][plot][validate]") {
  const auto dir = temp_dir("validation");
  const auto o = run_collsim(
      fmt::format("plot --scenario dgx-a100-calibrated --kind validation --log {} -o '{}' -o '{}'",
                  kA100Log, (dir / "v.png").string(), (dir / "v.csv").string()));
  INFO(o.err);
  REQUIRE(o.code == 0);
  check_png(dir / "v.png", 1000, 600);
  const std::string csv = slurp(dir / "v.csv");
  // The validation table's own numbers: the same points as `collsim validate`.
  const auto v = run_collsim(
      fmt::format("validate --scenario dgx-a100-calibrated --log {} --format json", kA100Log));
  REQUIRE(v.code == 0);
  const auto j = nlohmann::json::parse(v.out);
  const std::size_t points = j.at("rows").size();
  REQUIRE(points > 10);
  std::size_t measured = 0;
  std::size_t predicted = 0;
  for (std::size_t at = csv.find('\n'); at != std::string::npos; at = csv.find('\n', at + 1)) {
    measured += csv.compare(at + 1, 9, "measured ") == 0 ? 1 : 0;
    predicted += csv.compare(at + 1, 8, "collsim ") == 0 ? 1 : 0;
  }
  CHECK(measured == points);
  CHECK(predicted == points);
  CHECK(csv.find(fmt::format("{} points: median |err| {:.1f} %", points,
                             j.at("summary").at("median_abs_err_pct").get<double>())) !=
        std::string::npos);
}

TEST_CASE("collsim run --plots writes each study's charts next to its table", "[cli][plot]") {
  const auto dir = temp_dir("run");
  const auto o = run_collsim(
      fmt::format("run textbook --format csv --plots '{}' --plot-format png,svg", dir.string()));
  INFO(o.err);
  REQUIRE(o.code == 0);
  CHECK(o.out.find("algorithm") != std::string::npos); // the table still goes to stdout
  for (const char* kind : {"crossover", "busbw", "scaling"}) {
    check_png(dir / fmt::format("study1-{}.png", kind), 1000, 600);
    CHECK(fs::exists(dir / fmt::format("study1-{}.svg", kind)));
    CHECK(o.err.find(fmt::format("collsim: wrote {}",
                                 (dir / fmt::format("study1-{}.png", kind)).string())) !=
          std::string::npos);
  }
}

TEST_CASE("workload run --plots and compare --plots write the breakdown charts", "[cli][plot]") {
  const auto dir = temp_dir("workload");
  const auto w = run_collsim(fmt::format("workload run workloads/tp-dp-layers.yaml --scenario "
                                         "dgx-a100 --nodes 2 --plots '{}' --plot-format png,svg",
                                         dir.string()));
  INFO(w.err);
  REQUIRE(w.code == 0);
  CHECK(w.out.find("# step") != std::string::npos); // the table still goes to stdout
  check_png(dir / "workload-breakdown.png", 1000, 600);
  const std::string svg = slurp(dir / "workload-breakdown.svg");
  CHECK(svg.find("exposed communication") != std::string::npos);
  CHECK(svg.find("2 x 8 ranks of dgx-a100") != std::string::npos);
  CHECK(w.err.find("collsim: wrote " + (dir / "workload-breakdown.png").string()) !=
        std::string::npos);

  const auto c = run_collsim(fmt::format(
      "compare --file workloads/hdr-vs-ndr.yaml --steps 10 --plots '{}'", dir.string()));
  INFO(c.err);
  REQUIRE(c.code == 0);
  check_png(dir / "compare.png", 1000, 600);
  CHECK(c.err.find("collsim: wrote " + (dir / "compare.png").string()) != std::string::npos);

  const auto bad = run_collsim("workload run workloads/tp-dp-layers.yaml --scenario dgx-a100 "
                               "--plots " +
                               dir.string() + " --plot-format gif");
  CHECK(bad.code == 2);
  CHECK(bad.err.find("unknown plot format 'gif'") != std::string::npos);
}

TEST_CASE("collsim plot: bad input is one line and exit code 2", "[cli][plot][errors]") {
  const auto dir = temp_dir("errors");
  struct Case {
    std::string args;
    std::string error;
  };
  const std::vector<Case> cases{
      {"plot --scenario textbook -o chart.jpg",
       "collsim: error: -o chart.jpg: the file name must end in .png, .svg or .csv (the format is "
       "taken from it)\n"},
      {"plot --scenario textbook --study 3 -o x.png",
       "collsim: error: --study 3: scenario 'textbook' has 1 study (1..1)\n"},
      {"plot --scenario textbook --kind pie -o x.png",
       "collsim: error: unknown chart kind 'pie'; valid values are: crossover, busbw, scaling, "
       "validation\n"},
      {"plot --scenario textbook --ranks 5 -o x.png",
       "collsim: error: --ranks 5: study 1 runs at 8, 64 ranks\n"},
      {"plot --scenario textbook --kind scaling --size 3KiB -o x.png",
       "collsim: error: --size 3KiB: study 1 has no such size (it runs 14 sizes from 8 B to "
       "512 MiB)\n"},
      {"plot --scenario textbook --kind validation -o x.png",
       "collsim: error: --kind validation needs measured logs: --log FILE (nccl-tests, OSU, IMB or "
       "collsim-probe output; repeatable)\n"},
      {"plot --scenario textbook --width 20 -o " + (dir / "x.png").string(),
       "collsim: error: image size 20x600 is out of range: width and height must be 100 to 20000 "
       "pixels\n"},
      {"plot --scenario textbook -o /nonexistent-dir/x.png",
       "collsim: error: cannot write '/nonexistent-dir/x.png'\n"},
      {"run textbook --plots " + dir.string() + " --plot-format pdf",
       "collsim: error: unknown plot format 'pdf' (did you mean 'png'?); valid values are: png, "
       "svg, png,svg\n"},
  };
  for (const Case& c : cases) {
    const auto o = run_collsim(c.args);
    INFO(c.args);
    CHECK(o.code == 2);
    CHECK(o.err == c.error);
  }
  // A malformed scenario: the loader's file:line:column message, nothing else.
  std::ofstream(dir / "bad.yaml") << "name: bad\ntopology:\n  kind: uniform\n  bandwidth: [\n";
  const auto o =
      run_collsim(fmt::format("plot --scenario '{}' -o x.png", (dir / "bad.yaml").string()));
  CHECK(o.code == 2);
  CHECK(o.err.rfind((dir / "bad.yaml").string() + ":", 0) == 0);
  CHECK(std::count(o.err.begin(), o.err.end(), '\n') == 1);
}
