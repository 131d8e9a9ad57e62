// Calibration recovers parameters from measurements collsim itself generated, stays within its
// bounds, and writes a scenario that loads.

#include "collsim/analysis/calibrate.hpp"
#include "collsim/core/errors.hpp"
#include "collsim/io/scenario_loader.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>

using namespace collsim;

namespace {

const char* kCluster = R"(name: two-level
topology:
  kind: cluster
  nodes: 4
  devices_per_node: 2
  intra_bandwidth: 100 GB/s
  intra_latency: 1 us
  nic_bandwidth: 25 GB/s
  nic_latency: 1 us
  reduce_bandwidth: 200 GB/s
studies: [{collective: allreduce, algorithms: [ring], ranks: 8, sizes: 1MiB}]
)";

/// Measured points: collsim's own predictions on `truth` for ring allreduce in one node (2 ranks)
/// and across the 4 nodes (8 ranks), 8 B to 64 MiB.
std::vector<analysis::MeasuredPoint> synthetic(const core::Scenario& truth,
                                               const algorithms::Registry& registry) {
  std::vector<analysis::MeasuredPoint> guess;
  std::size_t line = 1;
  for (std::uint32_t ranks : {2U, 8U}) {
    for (std::uint64_t bytes = 64; bytes <= (std::uint64_t{64} << 20); bytes *= 8) {
      analysis::MeasuredPoint p;
      p.ranks = ranks;
      p.bytes = core::Bytes{bytes};
      p.time = core::Seconds{1.0}; // replaced by the prediction below
      p.file = "synthetic";
      p.line = line++;
      guess.push_back(p);
    }
  }
  analysis::ValidateOptions opt;
  opt.algorithm = "ring";
  const auto r = analysis::validate(truth, guess, registry, opt);
  REQUIRE(r.rows.size() == guess.size());
  for (std::size_t i = 0; i < guess.size(); ++i) {
    guess[i].time = r.rows[i].predicted;
  }
  return guess;
}

/// Measured points of NCCL's allreduce on one 8-GPU node, `first` to `last` bytes x `factor`:
/// collsim's own predictions on `truth`, NCCL's choice per size (validate's `auto`).
std::vector<analysis::MeasuredPoint> nccl_points(const core::Scenario& truth,
                                                 const algorithms::Registry& registry,
                                                 std::uint64_t first, std::uint64_t last,
                                                 std::uint64_t factor) {
  std::vector<analysis::MeasuredPoint> measured;
  for (std::uint64_t bytes = first; bytes <= last; bytes *= factor) {
    analysis::MeasuredPoint p;
    p.library = analysis::Library::nccl;
    p.ranks = 8;
    p.bytes = core::Bytes{bytes};
    p.time = core::Seconds{1.0}; // replaced by the prediction below
    p.file = "synthetic";
    p.line = measured.size() + 1;
    measured.push_back(p);
  }
  const auto rows = analysis::validate(truth, measured, registry, {});
  REQUIRE(rows.rows.size() == measured.size());
  for (std::size_t i = 0; i < measured.size(); ++i) {
    measured[i].time = rows.rows[i].predicted;
  }
  return measured;
}

} // namespace

TEST_CASE("calibration recovers known link parameters from collsim's own predictions",
          "[analysis][calibrate]") {
  const auto nominal = io::parse_scenario(kCluster, "two-level.yaml");
  core::Scenario truth = nominal;
  truth.topology.cluster.intra_bandwidth = core::Bandwidth{70e9};
  truth.topology.cluster.intra_latency = core::Seconds{2.5e-6};
  truth.topology.cluster.nic_bandwidth = core::Bandwidth{20e9};
  truth.topology.cluster.nic_latency = core::Seconds{1.8e-6};
  const auto registry = algorithms::make_default_registry();
  const auto measured = synthetic(truth, registry);

  analysis::CalibrateOptions opt;
  opt.algorithm = "ring";
  opt.parameters = {"topology.intra_latency", "topology.intra_bandwidth", "topology.nic_latency",
                    "topology.nic_bandwidth"};
  const auto r = analysis::calibrate(nominal, measured, {}, registry, opt);
  REQUIRE(r.parameters.size() == 4);
  CHECK(r.parameters[0].value == Approx(2.5e-6).epsilon(0.01));
  CHECK(r.parameters[1].value == Approx(70e9).epsilon(0.01));
  CHECK(r.parameters[2].value == Approx(1.8e-6).epsilon(0.01));
  CHECK(r.parameters[3].value == Approx(20e9).epsilon(0.01));
  CHECK(r.before.all.median_abs_err_pct > 10.0);
  CHECK(r.after.all.p90_abs_err_pct < 1.0);
  CHECK(r.fitted.topology.cluster.nic_bandwidth.bytes_per_second == Approx(20e9).epsilon(0.01));

  // The output loads, derived from the scenario it calibrated, with the fitted values.
  const std::string yaml = analysis::calibrated_yaml(r, "two-level.yaml", "two-level-calibrated");
  INFO(yaml);
  const std::string dir = std::string(COLLSIM_SOURCE_DIR) + "/build-calibrate-test";
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/two-level.yaml") << kCluster;
  std::ofstream(dir + "/calibrated.yaml") << yaml;
  const auto loaded = io::load_scenario(dir + "/calibrated.yaml");
  std::filesystem::remove_all(dir);
  CHECK(loaded.name == "two-level-calibrated");
  CHECK(loaded.topology.cluster.nodes == 4);
  CHECK(loaded.topology.cluster.nic_bandwidth.bytes_per_second == Approx(20e9).epsilon(0.01));
  CHECK(loaded.topology.cluster.intra_latency.value == Approx(2.5e-6).epsilon(0.01));
}

TEST_CASE("calibration keeps a bandwidth at or below its nominal rate", "[analysis][calibrate]") {
  const auto nominal = io::parse_scenario(kCluster, "two-level.yaml");
  core::Scenario faster = nominal;
  faster.topology.cluster.nic_bandwidth = core::Bandwidth{50e9}; // twice what the NIC can do
  const auto registry = algorithms::make_default_registry();
  const auto measured = synthetic(faster, registry);
  analysis::CalibrateOptions opt;
  opt.algorithm = "ring";
  opt.parameters = {"topology.nic_bandwidth"};
  const auto r = analysis::calibrate(nominal, measured, measured, registry, opt);
  CHECK(r.parameters[0].value <= 25e9);
  CHECK(r.parameters[0].upper == 25e9);
  REQUIRE(r.holdout_after.has_value());
}

TEST_CASE("calibration refuses what it cannot fit", "[analysis][calibrate]") {
  const auto nominal = io::parse_scenario(kCluster, "two-level.yaml");
  const auto registry = algorithms::make_default_registry();
  analysis::CalibrateOptions opt;
  opt.parameters = {"topology.node.nic_bandwidth"};
  std::vector<analysis::MeasuredPoint> none;
  CHECK_THROWS_WITH(analysis::calibrate(nominal, none, {}, registry, opt),
                    Catch::StartsWith("cannot fit 'topology.node.nic_bandwidth' on a cluster "
                                      "topology; the parameters calibration can fit there are: "
                                      "topology.intra_latency"));
  opt.parameters = {"topology.nic_bandwidth"};
  CHECK_THROWS_WITH(analysis::calibrate(nominal, none, {}, registry, opt),
                    "calibration needs more measured points than parameters: 0 points for 1 "
                    "parameters (topology.nic_bandwidth)");
}

TEST_CASE("calibration recovers NCCL's call overhead and protocol corrections from collsim's own "
          "predictions of NCCL's choices",
          "[analysis][calibrate][nccl]") {
  const auto nominal = io::load_scenario("dgx-a100");
  core::Scenario truth = nominal;
  truth.nccl.call_overhead = core::Seconds{20e-6};
  // Not LL's efficiency: LL's rows here are bound by the thread block's rate (llMaxBw), not by
  // the link, so the bytes LL puts on the wire do not change their time.
  truth.nccl.ll128.efficiency_factor = 0.8;
  truth.nccl.simple.efficiency_factor = 0.7;
  const auto registry = algorithms::make_default_registry();
  // One node, 8 B to 1 GiB: NCCL picks ring LL, LL128 and Simple along the way.
  const auto measured = nccl_points(truth, registry, 8, std::uint64_t{1} << 30, 4);
  analysis::CalibrateOptions opt;
  opt.parameters = {"nccl.call_overhead", "nccl.ll128.efficiency_factor",
                    "nccl.simple.efficiency_factor"};
  const auto r = analysis::calibrate(nominal, measured, {}, registry, opt);
  REQUIRE(r.parameters.size() == 3);
  CHECK(r.parameters[0].initial == 0.0); // started from 5 us: nothing to scale from 0
  CHECK(r.parameters[0].value == Approx(20e-6).epsilon(0.01));
  CHECK(r.parameters[1].value == Approx(0.8).epsilon(0.01));
  CHECK(r.parameters[2].value == Approx(0.7).epsilon(0.01));
  CHECK(r.after.all.p90_abs_err_pct < 1.0);
  CHECK(r.fitted.nccl.simple.efficiency_factor == Approx(0.7).epsilon(0.01));
  // The fitted scenario's YAML holds the corrections under nccl:, without units for factors.
  const std::string yaml = analysis::calibrated_yaml(r, "dgx-a100", "fitted");
  CHECK(yaml.find("nccl:\n  call_overhead: 20") != std::string::npos);
  CHECK(yaml.find("  simple:\n    efficiency_factor: 0.7") != std::string::npos);
  const auto reloaded = io::parse_scenario(yaml, "fitted.yaml");
  CHECK(reloaded.nccl.ll128.efficiency_factor == Approx(0.8).epsilon(0.01));
}

TEST_CASE("calibration puts a slowdown that a link and a protocol explain alike on the link",
          "[analysis][calibrate][nccl]") {
  // A DGX A100 whose NVLink moves 15 GB/s per link instead of 25, timed where NCCL runs Simple
  // rings only (64 MiB to 1 GiB): every row's wire time is bytes / (link rate x Simple's
  // efficiency), so the rows cannot tell a slower link from a less efficient Simple protocol.
  // The machine is fitted first (calibrate.cpp, "Hardware first"): the link takes the slowdown
  // and NCCL's Simple efficiency stays 1. Fitted jointly, the rank test dropped the link (the
  // first of two equal shares of the direction the rows cannot see) and put all of it on NCCL.
  const auto nominal = io::load_scenario("dgx-a100");
  core::Scenario truth = nominal;
  truth.topology.system.node.nvlink.link_bandwidth = core::Bandwidth{15e9};
  const auto registry = algorithms::make_default_registry();
  const auto measured =
      nccl_points(truth, registry, std::uint64_t{64} << 20, std::uint64_t{1} << 30, 2);
  for (const auto& row : analysis::validate(truth, measured, registry, {}).rows) {
    CHECK((row.params.count("protocol") == 1 && row.params.at("protocol") == "simple"));
  }
  analysis::CalibrateOptions opt;
  opt.parameters = {"topology.node.nvlink.link_bandwidth", "nccl.simple.efficiency_factor"};
  const auto r = analysis::calibrate(nominal, measured, {}, registry, opt);
  REQUIRE(r.parameters.size() == 2);
  CHECK(r.parameters[0].value == Approx(15e9).epsilon(0.01));
  CHECK(std::isfinite(r.parameters[0].rel_sigma)); // its own stage's uncertainty
  CHECK(r.parameters[1].value == Approx(1.0).epsilon(0.01));
  CHECK(r.after.all.p90_abs_err_pct < 1.0);
}

TEST_CASE("calibration with a robust loss stays near the truth when one measured row is 3 times "
          "too slow, where least squares is pulled away",
          "[analysis][calibrate][loss]") {
  const auto nominal = io::parse_scenario(kCluster, "two-level.yaml");
  core::Scenario truth = nominal;
  truth.topology.cluster.intra_bandwidth = core::Bandwidth{70e9};
  truth.topology.cluster.intra_latency = core::Seconds{2.5e-6};
  truth.topology.cluster.nic_bandwidth = core::Bandwidth{20e9};
  truth.topology.cluster.nic_latency = core::Seconds{1.8e-6};
  const auto registry = algorithms::make_default_registry();
  auto measured = synthetic(truth, registry);
  // One outlier: 8 ranks, 2 MiB (a NIC-bandwidth row), measured 3 times slower than the truth
  // predicts (a congested run, a mistyped unit).
  auto outlier = std::find_if(measured.begin(), measured.end(), [](const auto& p) {
    return p.ranks == 8 && p.bytes.value == (std::uint64_t{2} << 20);
  });
  REQUIRE(outlier != measured.end());
  outlier->time = core::Seconds{outlier->time.value * 3.0};

  analysis::CalibrateOptions opt;
  opt.algorithm = "ring";
  opt.parameters = {"topology.intra_latency", "topology.intra_bandwidth", "topology.nic_latency",
                    "topology.nic_bandwidth"};
  const double want[] = {2.5e-6, 70e9, 1.8e-6, 20e9};
  const auto worst_rel_error = [&](const analysis::CalibrationResult& r) {
    double worst = 0.0;
    for (std::size_t j = 0; j < 4; ++j) {
      worst = std::max(worst, std::abs(r.parameters[j].value / want[j] - 1.0));
    }
    return worst;
  };
  opt.loss = analysis::FitLoss::squared;
  const auto squared = analysis::calibrate(nominal, measured, {}, registry, opt);
  opt.loss = analysis::FitLoss::huber;
  const auto huber = analysis::calibrate(nominal, measured, {}, registry, opt);
  opt.loss = analysis::FitLoss::cauchy;
  const auto cauchy = analysis::calibrate(nominal, measured, {}, registry, opt);
  INFO("worst parameter error: squared " << worst_rel_error(squared) << ", huber "
                                         << worst_rel_error(huber) << ", cauchy "
                                         << worst_rel_error(cauchy));
  // Only two rows (8 ranks, 2 and 16 MiB) pin the NIC bandwidth, so the outlier has leverage:
  // least squares moves it by about 40 %. Huber bounds the outlier's pull (to about 7 % here);
  // Cauchy, whose weight falls with the residual, all but ignores it (below 1 %).
  CHECK(worst_rel_error(squared) > 0.2);
  CHECK(worst_rel_error(huber) < 0.1);
  CHECK(worst_rel_error(huber) < worst_rel_error(squared) / 4);
  CHECK(worst_rel_error(cauchy) < 0.02);
  CHECK(huber.loss == analysis::FitLoss::huber);
  CHECK(huber.loss_scale == 0.1);
}

TEST_CASE("calibration's loss is named squared, huber or cauchy", "[analysis][calibrate][loss]") {
  CHECK(analysis::parse_fit_loss("cauchy") == analysis::FitLoss::cauchy);
  CHECK(analysis::to_string(analysis::FitLoss::huber) == "huber");
  CHECK_THROWS_AS(analysis::parse_fit_loss("l1"), core::UnknownNameError);
}

TEST_CASE("calibration leave-one-log-out fits on the other logs and predicts the one left out",
          "[analysis][calibrate][loo]") {
  const auto nominal = io::parse_scenario(kCluster, "two-level.yaml");
  core::Scenario truth = nominal;
  truth.topology.cluster.nic_bandwidth = core::Bandwidth{20e9};
  truth.topology.cluster.nic_latency = core::Seconds{1.8e-6};
  const auto registry = algorithms::make_default_registry();
  const auto measured = synthetic(truth, registry);
  // Two "logs" of the same machine: the even and the odd sizes of each run.
  std::vector<analysis::MeasuredLog> logs{{"even.txt", {}}, {"odd.txt", {}}};
  for (std::size_t i = 0; i < measured.size(); ++i) {
    logs[i % 2].points.push_back(measured[i]);
  }
  analysis::CalibrateOptions opt;
  opt.algorithm = "ring";
  opt.parameters = {"topology.nic_latency", "topology.nic_bandwidth"};
  const auto r = analysis::leave_one_out(nominal, logs, registry, opt);
  REQUIRE(r.folds.size() == 2);
  for (std::size_t f = 0; f < 2; ++f) {
    INFO(r.folds[f].log);
    CHECK(r.folds[f].log == logs[f].name);
    CHECK(r.folds[f].fit_points == logs[1 - f].points.size());
    CHECK(r.folds[f].rows.size() == logs[f].points.size());
    CHECK(r.folds[f].after.all.points == logs[f].points.size());
    CHECK(r.folds[f].before.all.p90_abs_err_pct > 1.0); // the NIC rows, before the fit
    // Fitted without it, the left-out log is predicted as well as the truth predicts it.
    CHECK(r.folds[f].after.all.p90_abs_err_pct < 1.0);
    CHECK(r.folds[f].parameters[1].value == Approx(20e9).epsilon(0.01));
    // The rows are the left-out log's own, predicted by the fold's fitted scenario.
    core::Scenario fitted = nominal;
    for (const auto& p : r.folds[f].parameters) {
      analysis::set_parameter(fitted, p.path, p.value);
    }
    analysis::ValidateOptions vopt;
    vopt.algorithm = "ring";
    const auto v = analysis::validate(fitted, logs[f].points, registry, vopt);
    CHECK(v.summary.all.median_abs_err_pct ==
          Approx(r.folds[f].after.all.median_abs_err_pct).epsilon(1e-9));
  }
  CHECK(r.pooled_after.all.points == measured.size());
  CHECK(r.pooled_before.all.points == measured.size());
  CHECK(r.pooled_after.all.p90_abs_err_pct < 1.0);

  CHECK_THROWS_WITH(analysis::leave_one_out(nominal, std::span(logs).first(1), registry, opt),
                    "leave-one-out needs at least 2 logs (each is left out in turn), got 1");
}

TEST_CASE("calibration reports a parameter no fitted row depends on as undetermined",
          "[analysis][calibrate]") {
  const auto nominal = io::parse_scenario(kCluster, "two-level.yaml");
  core::Scenario truth = nominal;
  truth.topology.cluster.intra_bandwidth = core::Bandwidth{70e9};
  const auto registry = algorithms::make_default_registry();
  auto measured = synthetic(truth, registry);
  // Only the rows within one node (2 ranks): nothing crosses a NIC.
  std::erase_if(measured, [](const auto& p) { return p.ranks != 2; });
  analysis::CalibrateOptions opt;
  opt.algorithm = "ring";
  opt.parameters = {"topology.intra_bandwidth", "topology.nic_bandwidth"};
  const auto r = analysis::calibrate(nominal, measured, {}, registry, opt);
  REQUIRE(r.parameters.size() == 2);
  CHECK(r.parameters[0].value == Approx(70e9).epsilon(0.01));
  CHECK(std::isfinite(r.parameters[0].rel_sigma));
  CHECK(r.parameters[1].value == 25e9); // untouched: its start, the nominal rate
  CHECK(std::isinf(r.parameters[1].rel_sigma));
  const std::string yaml = analysis::calibrated_yaml(r, "two-level.yaml", "fitted");
  CHECK(yaml.find("nic_bandwidth: 25 GB/s   # fitted not determined by these logs") !=
        std::string::npos);
}

TEST_CASE("calibration keeps the scenario's value of a parameter the rows barely see",
          "[analysis][calibrate]") {
  // Rows of 2 MiB and more only: a 1 us latency is at most a tenth of a row's time, so the rows
  // fix it to no better than a factor of e (at 10 % per row); least squares would still move it
  // to absorb any error elsewhere. The bandwidths are fitted, the latency and NCCL's call overhead
  // (0 in the scenario) keep the scenario's values (docs/validation.md, leave-one-out).
  const auto nominal = io::parse_scenario(kCluster, "two-level.yaml");
  core::Scenario truth = nominal;
  truth.topology.cluster.nic_bandwidth = core::Bandwidth{20e9};
  truth.topology.cluster.intra_latency = core::Seconds{3e-6};
  const auto registry = algorithms::make_default_registry();
  auto measured = synthetic(truth, registry);
  std::erase_if(measured, [](const auto& p) { return p.bytes.value < (std::uint64_t{2} << 20); });
  REQUIRE(measured.size() == 4);
  analysis::CalibrateOptions opt;
  opt.algorithm = "ring";
  opt.parameters = {"topology.nic_bandwidth", "topology.intra_latency", "nccl.call_overhead"};
  const auto r = analysis::calibrate(nominal, measured, {}, registry, opt);
  REQUIRE(r.parameters.size() == 3);
  CHECK(r.parameters[0].value == Approx(20e9).epsilon(0.01));
  CHECK(std::isfinite(r.parameters[0].rel_sigma));
  CHECK(r.parameters[1].value == 1e-6); // the scenario's, not the truth's 3 us
  CHECK(std::isinf(r.parameters[1].rel_sigma));
  CHECK(r.parameters[2].value == 0.0); // 0 stays 0, not the 5 us the fit starts from
  CHECK(r.fitted.nccl.call_overhead.value == 0.0);
  CHECK(r.fitted.topology.cluster.intra_latency.value == 1e-6);
  // The 3 us latency is what the rows cannot pin down, so part of the error stays.
  CHECK(r.after.all.median_abs_err_pct < r.before.all.median_abs_err_pct / 2);
}
