// `collsim validate` and `collsim calibrate` on a real log, as users run them.

#include "cli_test_support.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

using collsim::testing::run_collsim;
using collsim::testing::run_json;
using collsim::testing::slurp;

const char* kA100Log = "tests/data/logs/a100sxm4_80gb_1x8_allreduce_128M_nccl-tests-2.19.4.txt";

/// The median as calibrate prints it ("median |err|    50.7 %").
std::string fmt_median(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "median |err| %7.1f %%", v);
  return buf;
}

/// Writes `text` to a log file of this process under build/ named after `name`; its path.
std::string write_log(const std::string& name, const std::string& text) {
  const std::string path = std::string(COLLSIM_SOURCE_DIR) + "/build/" + name + "-" +
                           std::to_string(::getpid()) + ".txt";
  std::ofstream(path) << text;
  return path;
}

} // namespace

TEST_CASE("collsim validate compares a real nccl-tests log with a preset's predictions",
          "[cli][validate]") {
  const auto o = run_collsim(std::string("validate --scenario dgx-a100 --log ") + kA100Log +
                             " --algorithm nccl_ring --format json");
  INFO(o.err);
  REQUIRE(o.code == 0);
  const auto j = nlohmann::json::parse(o.out);
  const auto& rows = j.at("rows");
  REQUIRE(rows.size() == 25); // 8 B to 128 MiB, out-of-place
  const auto& last = rows.back();
  CHECK(last.at("collective") == "allreduce");
  CHECK(last.at("ranks") == 8);
  CHECK(last.at("bytes") == 134217728);
  CHECK(last.at("algorithm") == "nccl_ring");
  CHECK(last.at("measured_us").get<double>() == Approx(1295.41));
  CHECK(last.at("line") == 50);
  // The prediction is what `collsim sim` gives for the same point.
  const auto sim = run_collsim("sim --scenario dgx-a100 --algorithm nccl_ring --ranks 8 --sizes "
                               "128MiB --format json --links 0");
  REQUIRE(sim.code == 0);
  const double predicted =
      nlohmann::json::parse(sim.out).at("results").at(0).at("time_us").get<double>();
  // (Equal to a few ns: the two commands order the NCCL stack's floating-point sums differently.)
  CHECK(last.at("predicted_us").get<double>() == Approx(predicted).epsilon(1e-5));
  CHECK(last.at("error_pct").get<double>() ==
        Approx(100.0 * (predicted - 1295.41) / 1295.41).epsilon(1e-4));
  const auto& s = j.at("summary");
  CHECK(s.at("points") == 25);
  CHECK(s.at("below_1MiB").at("points") == 17);
  CHECK(s.at("from_1MiB").at("points") == 8);
  CHECK(s.at("median_abs_err_pct").get<double>() > 0.0);
  CHECK(s.at("p90_abs_err_pct").get<double>() >= s.at("median_abs_err_pct").get<double>());
}

TEST_CASE("collsim validate names an unknown algorithm", "[cli][validate]") {
  const auto o = run_collsim(std::string("validate --scenario dgx-a100 --log ") + kA100Log +
                             " --algorithm nccl_rign");
  CHECK(o.code == 2);
  CHECK(o.err.find("unknown") != std::string::npos);
  CHECK(o.err.find("nccl_ring") != std::string::npos);
}

TEST_CASE("collsim calibrate writes a scenario that loads and reproduces the fitted error",
          "[cli][calibrate]") {
  const std::string out = std::string(COLLSIM_SOURCE_DIR) + "/build-calibrated-a100.yaml";
  const auto o = run_collsim(std::string("calibrate --scenario dgx-a100 --log ") + kA100Log +
                             " --algorithm nccl_ring --fit topology.node.nvlink.link_bandwidth"
                             " -o " +
                             out);
  INFO(o.err);
  INFO(o.out);
  REQUIRE(o.code == 0);
  const std::string yaml = slurp(out);
  CHECK(yaml.find("base: dgx-a100\n") != std::string::npos);
  CHECK(yaml.find("    nvlink:\n      link_bandwidth: ") != std::string::npos);
  CHECK(o.out.find("topology.node.nvlink.link_bandwidth") != std::string::npos);
  // Validating with the fitted scenario gives the "after" error calibrate printed.
  const auto v = run_collsim("validate --scenario " + out + " --log " + kA100Log +
                             " --algorithm nccl_ring --format json");
  std::remove(out.c_str());
  REQUIRE(v.code == 0);
  const double median = nlohmann::json::parse(v.out).at("summary").at("median_abs_err_pct");
  const auto at = o.out.find("# after ");
  REQUIRE(at != std::string::npos);
  CHECK(o.out.find(fmt_median(median), at) != std::string::npos);

  // The same report as JSON.
  const auto j = run_collsim(std::string("calibrate --scenario dgx-a100 --log ") + kA100Log +
                             " --algorithm nccl_ring --fit topology.node.nvlink.link_bandwidth"
                             " --format json -o " +
                             out);
  std::remove(out.c_str());
  INFO(j.err);
  REQUIRE(j.code == 0);
  const auto report = nlohmann::json::parse(j.out);
  CHECK(report.at("loss") == "huber");
  CHECK(report.at("points") == 25);
  REQUIRE(report.at("parameters").size() == 1);
  const auto& p = report.at("parameters").at(0);
  CHECK(p.at("path") == "topology.node.nvlink.link_bandwidth");
  CHECK(p.at("fitted").get<double>() <= p.at("upper").get<double>());
  CHECK(report.at("after").at("median_abs_err_pct").get<double>() == Approx(median).margin(0.05));
  CHECK(report.at("after").at("from_1MiB").at("points") == 8);
}

TEST_CASE(
    "collsim validate auto shows NCCL's choice per row, and calibrate --holdout-split fits every "
    "other size and checks the rest",
    "[cli][calibrate]") {
  const auto v =
      run_collsim(std::string("validate --scenario dgx-a100 --log ") + kA100Log + " --format json");
  INFO(v.err);
  REQUIRE(v.code == 0);
  const auto j = nlohmann::json::parse(v.out);
  const auto& rows = j.at("rows");
  REQUIRE(rows.size() == 25);
  CHECK(rows.front().at("algorithm") == "nccl_ring");
  CHECK(rows.front().at("params").at("protocol") == "ll");
  CHECK(rows.back().at("params").at("protocol") == "simple");
  // The log names NCCL 2.19.3 (nccl-library=21903): that release's tuning model chooses.
  CHECK(rows.back().at("chosen_by").get<std::string>().starts_with("NCCL 2.19.3 tuning model"));
  CHECK(rows.back().at("chosen_by").get<std::string>().ends_with("with NCCL 2.19.3 from the log"));

  const std::string out = std::string(COLLSIM_SOURCE_DIR) + "/build-calibrated-split.yaml";
  const auto o = run_collsim(std::string("calibrate --scenario dgx-a100 --log ") + kA100Log +
                             " --holdout-split -o " + out);
  std::stringstream written;
  written << std::ifstream(out).rdbuf();
  std::remove(out.c_str());
  INFO(o.err);
  INFO(o.out);
  REQUIRE(o.code == 0);
  // The scenario records its measured accuracy on every row, fitted and held out (collsim
  // check's band; docs/health-check.md).
  CHECK(written.str().find("accuracy:   # |error| of this scenario's predictions (collsim "
                           "check's band)\n  measured_on: \"25 rows of the calibration logs (13 "
                           "fitted, 12 held out)\"\n  below_1MiB: {rows: 17, ") !=
        std::string::npos);
  CHECK(written.str().find("\n  from_1MiB: {rows: 8, ") != std::string::npos);
  // 25 rows: 13 fitted (1st, 3rd, ...), 12 held out.
  CHECK(o.out.find(", 13 points,") != std::string::npos);
  CHECK(o.out.find("# error on the held-out logs") != std::string::npos);
  CHECK(o.out.find("12 points") != std::string::npos);
  CHECK(o.out.find("nccl.simple.efficiency_factor") != std::string::npos);
  // The fit improves the rows it did not see: the held-out median falls.
  const auto held = o.out.find("# error on the held-out logs");
  REQUIRE(held != std::string::npos);
  const auto median_after = [&](const char* label) {
    const auto at = o.out.find(label, held);
    REQUIRE(at != std::string::npos);
    const auto m = o.out.find("median |err|", at);
    return std::stod(o.out.substr(m + 12, 8));
  };
  CHECK(median_after("# after ") < median_after("# before "));
}

TEST_CASE("the shipped calibrated profiles reproduce their held-out errors in docs/validation.md",
          "[cli][calibrate][profiles]") {
  // The held-out rows of --holdout-split are the 2nd, 4th, ... rows of each log (one run each).
  struct Profile {
    const char* scenario;
    const char* log;
    double below_median; ///< held-out median |error| below 1 MiB, as documented (-1: no rows)
    double from_median;  ///< from 1 MiB on
  };
  const Profile profiles[] = {
      {"dgx-a100-calibrated", "a100sxm4_80gb_1x8_allreduce_128M_nccl-tests-2.19.4.txt", 1.4, 10.7},
      {"dgx-h100-calibrated", "bitdeer_1x8_h100_sxm_allreduce_nccl-tests.txt", -1, 1.0},
      {"dgx-a100-hdr-calibrated", "deepops_4x8_dgxa100_hdr_ib_allreduce_nccl-tests.txt", -1, 2.6},
  };
  const auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? -1.0 : v[(v.size() + 1) / 2 - 1]; // nearest rank, as validate's summary
  };
  for (const Profile& p : profiles) {
    INFO(p.scenario);
    const auto o = run_collsim(std::string("validate --scenario ") + p.scenario +
                               " --log tests/data/logs/" + p.log + " --format json");
    INFO(o.err);
    REQUIRE(o.code == 0);
    const auto rows = nlohmann::json::parse(o.out).at("rows");
    std::vector<double> below;
    std::vector<double> from;
    for (std::size_t i = 1; i < rows.size(); i += 2) {
      const double e = std::abs(rows[i].at("error_pct").get<double>());
      (rows[i].at("bytes").get<std::uint64_t>() < (1U << 20) ? below : from).push_back(e);
    }
    CHECK(median(below) == Approx(p.below_median).margin(0.05));
    CHECK(median(from) == Approx(p.from_median).margin(0.05));
  }
}

TEST_CASE("docs/validation.md's table of uncalibrated presets on the shared logs is what "
          "validate computes",
          "[cli][validate][cross-machine]") {
  // Each table row: | `log` | `preset` | rows | collsim < 1 MiB | collsim >= 1 MiB | NCCL < 1 MiB |
  // NCCL >= 1 MiB | collsim on NCCL's rows < 1 MiB | ... >= 1 MiB |, medians of |error| in % ("-":
  // no rows). Recomputed here from `collsim validate --format json`
  // (bench/validation/shared_logs.sh prints the same table).
  const std::string doc = slurp(std::string(COLLSIM_SOURCE_DIR) + "/docs/validation.md");
  const std::string begin = "<!-- shared-logs-table -->";
  const auto at = doc.find(begin);
  REQUIRE(at != std::string::npos);
  const auto end = doc.find("<!-- end -->", at);
  REQUIRE(end != std::string::npos);
  std::istringstream table(doc.substr(at + begin.size(), end - at - begin.size()));
  const auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? -1.0 : v[(v.size() + 1) / 2 - 1];
  };
  const auto cell = [](const std::string& s) { return s == "-" ? -1.0 : std::stod(s); };
  std::string line;
  std::size_t checked = 0;
  while (std::getline(table, line)) {
    if (line.rfind("| `", 0) != 0) {
      continue;
    }
    std::vector<std::string> f;
    std::istringstream cells(line);
    std::string c;
    while (std::getline(cells, c, '|')) {
      c.erase(0, c.find_first_not_of(" `"));
      c.erase(c.find_last_not_of(" `%") + 1);
      f.push_back(c);
    }
    REQUIRE(f.size() >= 10); // "", log, preset, rows, 6 medians
    INFO(line);
    const auto o = run_collsim("validate --scenario " + f[2] + " --log tests/data/logs/" + f[1] +
                               " --format json");
    INFO(o.err);
    REQUIRE(o.code == 0);
    const auto rows = nlohmann::json::parse(o.out).at("rows");
    std::vector<double> sb, sf, nb, nf, cb, cf;
    for (const auto& r : rows) {
      const bool big = r.at("bytes").get<std::uint64_t>() >= (1U << 20);
      const double e = std::abs(r.at("error_pct").get<double>());
      (big ? sf : sb).push_back(e);
      if (r.contains("library_error_pct")) {
        (big ? nf : nb).push_back(std::abs(r.at("library_error_pct").get<double>()));
        (big ? cf : cb).push_back(e); // collsim on the rows NCCL's estimate covers
      }
    }
    CHECK(rows.size() == std::stoul(f[3]));
    CHECK(median(sb) == Approx(cell(f[4])).margin(0.051));
    CHECK(median(sf) == Approx(cell(f[5])).margin(0.051));
    CHECK(median(nb) == Approx(cell(f[6])).margin(0.051));
    CHECK(median(nf) == Approx(cell(f[7])).margin(0.051));
    CHECK(median(cb) == Approx(cell(f[8])).margin(0.051));
    CHECK(median(cf) == Approx(cell(f[9])).margin(0.051));
    ++checked;
  }
  CHECK(checked >= 5);
}

namespace {

// Two 2-node A100 runs of one machine class (NVSwitch nodes, 16 ranks), cheap enough to fit twice.
const char* kOciLog = "tests/data/logs/oci_2x8_a100_40gb_roce_allreduce_nccl-tests.txt";
const char* kAwsLog = "tests/data/logs/aws_2x_p4de_a100_efa_allreduce_nccl-tests.txt";
// Few parameters keep the test fast; the consistency checked does not depend on which.
const char* kLooFit = " --fit nccl.call_overhead";

} // namespace

TEST_CASE("collsim calibrate --leave-one-out reports, per log, what validate gives with the "
          "scenario calibrated on the other logs",
          "[cli][calibrate][loo]") {
  const auto o = run_collsim(std::string("calibrate --scenario dgx-a100 --log ") + kOciLog +
                             " --log " + kAwsLog + kLooFit + " --leave-one-out --format json");
  INFO(o.err);
  REQUIRE(o.code == 0);
  // A fold whose problem is rank-deficient reports its parameters undetermined, without Ceres'
  // own log lines on stderr.
  CHECK(o.err.find("covariance_impl") == std::string::npos);
  CHECK(o.err.find("InitGoogleLogging") == std::string::npos);
  const auto j = nlohmann::json::parse(o.out);
  const auto& folds = j.at("folds");
  REQUIRE(folds.size() == 2);
  CHECK(j.at("loss") == "huber");
  std::size_t pooled = 0;
  const char* logs[] = {kOciLog, kAwsLog};
  for (std::size_t f = 0; f < 2; ++f) {
    INFO(logs[f]);
    const auto& fold = folds[f];
    CHECK(fold.at("log") == logs[f]);
    // By hand: calibrate on the other log, then validate the left-out one with the result.
    const std::string out = std::string(COLLSIM_SOURCE_DIR) + "/build-loo-fold.yaml";
    const auto c = run_collsim(std::string("calibrate --scenario dgx-a100 --log ") + logs[1 - f] +
                               kLooFit + " -o " + out);
    INFO(c.err);
    REQUIRE(c.code == 0);
    const auto v =
        run_collsim("validate --scenario " + out + " --log " + logs[f] + " --format json");
    std::remove(out.c_str());
    INFO(v.err);
    REQUIRE(v.code == 0);
    const auto validated = nlohmann::json::parse(v.out);
    const auto& s = validated.at("summary");
    const auto& after = fold.at("after");
    CHECK(after.at("points") == s.at("points"));
    CHECK(s.at("points").get<std::size_t>() > 20);
    for (const char* part : {"below_1MiB", "from_1MiB"}) {
      INFO(part);
      CHECK(after.at(part).at("points") == s.at(part).at("points"));
      // The YAML rounds fitted values to 6 digits: equal to far better than the printed 0.1 %.
      for (const char* stat : {"median_abs_err_pct", "p90_abs_err_pct"}) {
        CHECK(after.at(part).at(stat).get<double>() ==
              Approx(s.at(part).at(stat).get<double>()).margin(0.01));
      }
    }
    pooled += s.at("points").get<std::size_t>();
  }
  CHECK(j.at("pooled").at("after").at("points") == pooled);

  // The table: one row per left-out log and the pooled summary.
  const auto t = run_collsim(std::string("calibrate --scenario dgx-a100 --log ") + kOciLog +
                             " --log " + kAwsLog + kLooFit + " --leave-one-out");
  REQUIRE(t.code == 0);
  CHECK(t.out.find("\n  oci_2x8_a100_40gb_roce_allreduce_nccl-tests.txt ") != std::string::npos);
  CHECK(t.out.find("\n  aws_2x_p4de_a100_efa_allreduce_nccl-tests.txt ") != std::string::npos);
  CHECK(t.out.find(fmt_median(j.at("pooled").at("after").at("median_abs_err_pct"))) !=
        std::string::npos);
}

TEST_CASE("collsim calibrate --leave-one-out needs two logs and no -o", "[cli][calibrate][loo]") {
  const auto one = run_collsim(std::string("calibrate --scenario dgx-a100 --log ") + kOciLog +
                               " --leave-one-out");
  CHECK(one.code == 2);
  CHECK(one.err == "collsim: error: --leave-one-out needs at least 2 --log files (each is left "
                   "out in turn), got 1\n");
  const auto with_o = run_collsim(std::string("calibrate --scenario dgx-a100 --log ") + kOciLog +
                                  " --log " + kAwsLog + " --leave-one-out -o x.yaml");
  CHECK(with_o.code == 2);
  CHECK(with_o.err == "collsim: error: --leave-one-out holds out each --log in turn and writes "
                      "no scenario: drop --holdout, --holdout-split and -o\n");
  const auto no_o = run_collsim(std::string("calibrate --scenario dgx-a100 --log ") + kOciLog);
  CHECK(no_o.code == 2);
  CHECK(no_o.err ==
        "collsim: error: -o,--output is required: the fitted scenario is written there\n");
  const auto bad_scale = run_collsim(std::string("calibrate --scenario dgx-a100 --log ") + kOciLog +
                                     " --loss-scale 0 -o x.yaml");
  CHECK(bad_scale.code == 2);
  CHECK(bad_scale.err == "collsim: error: --loss-scale must be positive, got 0\n");
  const auto bad_loss = run_collsim(std::string("calibrate --scenario dgx-a100 --log ") + kOciLog +
                                    " --loss l1 -o x.yaml");
  CHECK(bad_loss.code == 2);
  CHECK(bad_loss.err.find("l1") != std::string::npos);
  CHECK(bad_loss.err.find("squared, huber, cauchy") != std::string::npos);
}

TEST_CASE("collsim validate follows the NCCL variables a log's run set, as a scenario's nccl.env "
          "would, and stops at a bad one with its place in the log",
          "[cli][validate][env]") {
  const std::filesystem::path dir = std::filesystem::temp_directory_path();
  const std::string log = (dir / "collsim_env_a100.txt").string();
  const std::string bad = (dir / "collsim_env_bad_a100.txt").string();
  const std::string scenario = (dir / "collsim_env_a100.yaml").string();
  const std::string a100 = slurp(std::string(COLLSIM_SOURCE_DIR) + "/" + kA100Log);
  std::ofstream(log) << "$ export NCCL_PROTO=Simple NCCL_DEBUG=INFO\n" << a100;
  std::ofstream(bad) << "$ export NCCL_PROTO=LL256\n" << a100;
  std::ofstream(scenario) << "base: dgx-a100\nnccl:\n  env:\n    NCCL_PROTO: Simple\n";

  const auto from_log = run_collsim("validate --scenario dgx-a100 --log " + log + " --format json");
  INFO(from_log.err);
  REQUIRE(from_log.code == 0);
  const auto from_scenario = run_collsim("validate --scenario " + scenario + " --log " +
                                         std::string(kA100Log) + " --format json");
  REQUIRE(from_scenario.code == 0);
  const auto rows = nlohmann::json::parse(from_log.out).at("rows");
  const auto want = nlohmann::json::parse(from_scenario.out).at("rows");
  REQUIRE(rows.size() == 25);
  REQUIRE(want.size() == rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    INFO("row " << i);
    CHECK(rows[i].at("params").at("protocol") == "simple");
    CHECK(rows[i]
              .at("chosen_by")
              .get<std::string>()
              .find("with NCCL_PROTO=Simple, NCCL 2.19.3 from the log") != std::string::npos);
    CHECK(rows[i].at("params") == want[i].at("params"));
    CHECK(rows[i].at("predicted_us").get<double>() ==
          Approx(want[i].at("predicted_us").get<double>()).epsilon(1e-9));
  }
  // Without the variable, NCCL picks LL for the small sizes.
  const auto plain =
      run_collsim(std::string("validate --scenario dgx-a100 --log ") + kA100Log + " --format json");
  REQUIRE(plain.code == 0);
  CHECK(nlohmann::json::parse(plain.out).at("rows").at(0).at("params").at("protocol") == "ll");

  const auto o = run_collsim("validate --scenario dgx-a100 --log " + bad);
  CHECK(o.code == 2);
  CHECK(o.err.find(bad + ":1:10: error: NCCL_PROTO (set by the log's run): 'll256' is not one of "
                         "simple, ll, ll128") != std::string::npos);
  std::filesystem::remove(log);
  std::filesystem::remove(bad);
  std::filesystem::remove(scenario);
}

TEST_CASE("collsim validate prices a log's rows with the NCCL release the log names, as a "
          "scenario's nccl.version would",
          "[cli][validate][nccl_release]") {
  // The A100 log says nccl-library=21903: NCCL 2.19.3, whose ring LL has a quarter of the bus
  // bandwidth (2.30.7: half), so at 2 MiB it runs LL128 where 2.30.7 keeps LL.
  const std::filesystem::path dir = std::filesystem::temp_directory_path();
  const std::string tag = std::to_string(getpid());
  const std::string log = (dir / ("collsim_no_version_a100_" + tag + ".txt")).string();
  const std::string scenario = (dir / ("collsim_version_a100_" + tag + ".yaml")).string();
  std::string a100 = slurp(std::string(COLLSIM_SOURCE_DIR) + "/" + kA100Log);
  const std::string line = "nccl-headers=21903 nccl-library=21903";
  REQUIRE(a100.find(line) != std::string::npos);
  a100.replace(a100.find(line), line.size(), "");
  std::ofstream(log) << a100;
  std::ofstream(scenario) << "base: dgx-a100\nnccl: {version: 2.19.3}\n";

  const auto rows_of = [](const std::string& args) {
    const auto o = run_collsim("validate " + args + " --format json");
    INFO(o.err);
    REQUIRE(o.code == 0);
    return nlohmann::json::parse(o.out).at("rows");
  };
  const auto named = rows_of(std::string("--scenario dgx-a100 --log ") + kA100Log);
  const auto unnamed = rows_of("--scenario dgx-a100 --log " + log);
  const auto pinned = rows_of("--scenario " + scenario + " --log " + log);
  REQUIRE(named.size() == 25);
  REQUIRE(unnamed.size() == 25);
  REQUIRE(pinned.size() == 25);
  const std::size_t two_mib = 18; // 8 B x 2^18
  REQUIRE(named[two_mib].at("bytes") == 2097152);
  CHECK(named[two_mib].at("params").at("protocol") == "ll128");
  CHECK(named[two_mib].at("chosen_by").get<std::string>().starts_with("NCCL 2.19.3 tuning model"));
  CHECK(unnamed[two_mib].at("params").at("protocol") == "ll");
  CHECK(
      unnamed[two_mib].at("chosen_by").get<std::string>().starts_with("NCCL 2.30.7 tuning model"));
  for (std::size_t i = 0; i < named.size(); ++i) {
    INFO("row " << i);
    CHECK(pinned[i].at("params") == named[i].at("params"));
    CHECK(pinned[i].at("predicted_us").get<double>() ==
          Approx(named[i].at("predicted_us").get<double>()).epsilon(1e-9));
  }
  // explain names the release whose model chose.
  const auto ex = run_collsim("explain --scenario " + scenario +
                              " --ranks 8 --bytes 2097152 --collective allreduce");
  INFO(ex.err);
  REQUIRE(ex.code == 0);
  CHECK(ex.out.find("default: NCCL 2.19.3 tuning model") != std::string::npos);
  CHECK(ex.out.find("picks Ring/LL128") != std::string::npos);
  std::filesystem::remove(log);
  std::filesystem::remove(scenario);
}

TEST_CASE("collsim validate prices the host of a single-thread multi-GPU run (nccl-tests -g N)",
          "[cli][validate]") {
  // The A100 log ran `nThread 1 nGpus 8`: one thread launches eight GPUs' kernels per call, so
  // its calls come no faster than 8 x nccl.group_launch apart. At the default 4.2 us (33.6 us)
  // the host is slower than the device's 8 B LL ring (20.6 us: 6.6 us base latency and 14
  // NVLink steps of 1 us) and stands; with 2 us a launch (16 us) the device does.
  const auto run = [](const std::string& scenario) {
    const auto o = run_collsim("validate --scenario " + scenario + " --log " +
                               std::string(kA100Log) + " --format json");
    INFO(o.err);
    REQUIRE(o.code == 0);
    return nlohmann::json::parse(o.out).at("rows");
  };
  const auto host = run("dgx-a100");
  REQUIRE(host.at(0).at("bytes") == 8);
  CHECK(host.at(0).at("predicted_us").get<double>() == Approx(8 * 4.2));
  CHECK(host.at(0)
            .at("chosen_by")
            .get<std::string>()
            .find("host-bound: one thread launches 8 GPUs' kernels") != std::string::npos);
  const collsim::testing::TempScenario fast_host("fast-host",
                                                 "base: dgx-a100\nnccl:\n  group_launch: 2 us\n");
  const auto device = run(fast_host.path);
  const double small = device.at(0).at("predicted_us").get<double>();
  CHECK(small == Approx(6.6 + 14 * 1.0).epsilon(0.01));
  CHECK(small > 8 * 2.0);
  CHECK(device.at(0).at("chosen_by").get<std::string>().find("host-bound") == std::string::npos);
  // Large calls are the device's either way.
  CHECK(host.back().at("predicted_us").get<double>() ==
        Approx(device.back().at("predicted_us").get<double>()));
  CHECK(host.back().at("chosen_by").get<std::string>().find("host-bound") == std::string::npos);
}

TEST_CASE("collsim validate prices an MPI log's buffers where the log says they were",
          "[cli][validate][osu]") {
  // OSU's buffers are host memory unless -d cuda says otherwise: on a GPU machine the same row
  // is a host allreduce without it and a staged device allreduce with it (Open MPI 4.1's
  // coll/cuda copies device buffers through host memory).
  const auto log = [](const std::string& tag, const std::string& options) {
    return write_log("osu-ar-" + tag, "$ mpirun -np 8 osu_allreduce" + options +
                                          "\n# OSU MPI Allreduce Latency Test v7.2\n# Datatype: "
                                          "MPI_FLOAT.\n# Size       Avg Latency(us)\n1048576"
                                          "              500.00\n");
  };
  const std::string host = log("host", " -m 1048576");
  const std::string device = log("device", " -d cuda D D -m 1048576");
  const std::string common = "validate --scenario juwels-booster --stack openmpi-4.1 --format json";
  const auto both = run_json(common + " --log " + host + " --log " + device);
  const auto forced = run_json(common + " --buffers device --log " + host);
  std::remove(host.c_str());
  std::remove(device.c_str());
  const auto sim = [](const std::string& buffers) {
    return run_json("sim --scenario juwels-booster --stack openmpi-4.1 --algorithm auto --ranks 8 "
                    "--sizes 1MiB --format json --buffers " +
                    buffers)
        .at("results")[0]
        .at("time_us")
        .get<double>();
  };
  const auto& rows = both.at("rows");
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].at("predicted_us").get<double>() == Approx(sim("host")).epsilon(1e-12));
  CHECK(rows[1].at("predicted_us").get<double>() == Approx(sim("device")).epsilon(1e-12));
  CHECK(rows[1].at("predicted_us").get<double>() > 5 * rows[0].at("predicted_us").get<double>());
  // --buffers wins over the log.
  CHECK(forced.at("rows")[0].at("predicted_us").get<double>() ==
        Approx(sim("device")).epsilon(1e-12));
}

TEST_CASE("collsim validate predicts OSU's point-to-point logs: osu_bw per message, -W, "
          "osu_latency",
          "[cli][validate][osu]") {
  // EESSI's osu_bw between two A100s joined by 4 NVLinks (the JUWELS Booster board's pairs).
  const std::string log = "tests/data/logs/eessi_a100_nvlink_osu_bw_cuda_DD.txt";
  const auto j = run_json("validate --scenario juwels-booster --log " + log + " --format json");
  const auto& rows = j.at("rows");
  REQUIRE(rows.size() == 26); // 1 B to 32 MiB, none skipped
  for (const auto& r : rows) {
    CHECK(r.at("collective") == "osu_bw");
    CHECK(r.at("algorithm") == "osu_bw");
    CHECK(r.at("ranks") == 2);
  }
  // 32 MiB at 93130.52 MB/s: 360.29 us per message.
  const auto& last = rows.back();
  CHECK(last.at("bytes") == 33554432);
  CHECK(last.at("measured_us").get<double>() == Approx(33554432 / 93130.52).epsilon(1e-9));
  CHECK(last.at("chosen_by").get<std::string>().find("window 64") != std::string::npos);
  // Under Open MPI's UCX protocols the large messages take longer than the link's rate alone.
  const auto ucx = run_json("validate --scenario juwels-booster --log " + log +
                            " --stack openmpi-4.1 --format json");
  CHECK(ucx.at("rows").back().at("chosen_by").get<std::string>().find("stack openmpi-4.1") !=
        std::string::npos);
  CHECK(ucx.at("rows").back().at("predicted_us").get<double>() >
        last.at("predicted_us").get<double>());

  // A window from the launch line, and osu_latency (half a round trip).
  // One osu_bw row of 1 MiB at 10 GB/s behind the launch line `command`, in a file named `tag`.
  const auto bw_log = [](const std::string& tag, const std::string& command) {
    return write_log("osu-bw-" + tag, "$ mpirun -np 2 osu_bw " + command +
                                          "\n# OSU MPI Bandwidth Test v7.2\n# Size      Bandwidth "
                                          "(MB/s)\n# Datatype: MPI_CHAR.\n1048576             "
                                          "10000.00\n");
  };
  const std::string bw8 = bw_log("w8", "-W 8 -m 1048576");
  const std::string lat = write_log("osu-latency", "$ mpirun -np 2 osu_latency\n"
                                                   "# OSU MPI Latency Test v7.2\n# Size       "
                                                   "Avg Latency(us)\n# Datatype: MPI_CHAR.\n0"
                                                   "                       1.50\n"
                                                   "8                       1.60\n");
  // getopt_long's other spellings of the option: attached, and the long form with '='.
  const std::string bw4 = bw_log("w4", "-d cuda -W4 D D");
  const std::string bw16 = bw_log("w16", "--window-size=16");
  const auto w = run_json("validate --scenario textbook --log " + bw8 + " --log " + lat +
                          " --log " + bw4 + " --log " + bw16 + " --format json");
  // NCCL runs no MPI point-to-point benchmark: each row says so, naming the benchmark.
  const auto refused =
      run_json("validate --scenario textbook --stack nccl --log " + bw8 + " --format json");
  std::remove(bw8.c_str());
  std::remove(lat.c_str());
  std::remove(bw4.c_str());
  std::remove(bw16.c_str());
  REQUIRE(refused.at("skipped").size() == 1);
  CHECK(refused.at("skipped")[0].get<std::string>().find(
            "stack 'nccl' does not run OSU's osu_bw") != std::string::npos);
  const auto& wr = w.at("rows");
  REQUIRE(wr.size() == 5);
  CHECK(wr[0].at("chosen_by").get<std::string>().find("window 8") != std::string::npos);
  CHECK(wr[3].at("chosen_by").get<std::string>().find("window 4") != std::string::npos);
  CHECK(wr[4].at("chosen_by").get<std::string>().find("window 16") != std::string::npos);
  CHECK(wr[3].at("predicted_us").get<double>() ==
        Approx((4e-6 + 4 * 1048576 / 10e9 + 4 / 10e9) / 4 * 1e6).epsilon(1e-9));
  CHECK(wr[0].at("measured_us").get<double>() == Approx(104.8576).epsilon(1e-9));
  // textbook: (2 alpha + 8 m beta + 4 beta) / 8, alpha 2 us, 10 GB/s.
  CHECK(wr[0].at("predicted_us").get<double>() ==
        Approx((4e-6 + 8 * 1048576 / 10e9 + 4 / 10e9) / 8 * 1e6).epsilon(1e-9));
  // osu_latency's 0-byte row is a message without data: alpha alone.
  CHECK(wr[1].at("collective") == "osu_latency");
  CHECK(wr[1].at("bytes") == 0);
  CHECK(wr[1].at("measured_us").get<double>() == Approx(1.5));
  CHECK(wr[1].at("predicted_us").get<double>() == Approx(2.0).epsilon(1e-9));
  CHECK(wr[2].at("measured_us").get<double>() == Approx(1.6));
  CHECK(wr[2].at("predicted_us").get<double>() == Approx(2.0 + 8 / 10e9 * 1e6).epsilon(1e-9));
}
