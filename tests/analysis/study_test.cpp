#include "collsim/analysis/simulate.hpp"
#include "collsim/core/errors.hpp"
#include "collsim/io/scenario_loader.hpp"

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <filesystem>

using namespace collsim;

namespace {
const char* kTextbook = R"(name: textbook
topology:
  kind: uniform
  latency: 2 us
  bandwidth: 10 GB/s
  reduce_bandwidth: 20 GB/s
studies:
  - collective: allreduce
    algorithms: [ring, recursive_doubling]
    ranks: [4, 8]
    sizes: 8B:1MiB:x8
)";
} // namespace

TEST_CASE("a study runs every algorithm, rank count and size, in a fixed order",
          "[analysis][study]") {
  const auto scenario = io::parse_scenario(kTextbook, "textbook.yaml");
  const auto registry = algorithms::make_default_registry();
  const auto one = analysis::run_study(scenario, scenario.studies[0], registry, {}, 1);
  const auto two = analysis::run_study(scenario, scenario.studies[0], registry, {}, 2);
  // 6 sizes (8 B .. 256 KiB, x8) x 2 rank counts x 2 algorithms.
  REQUIRE(one.rows.size() == 24);
  CHECK(one.rows == two.rows);
  CHECK(one.rows[0].algorithm == "ring");
  CHECK(one.rows[0].ranks == 4);
  CHECK(one.rows[0].bytes == core::Bytes{8});
  CHECK(one.rows[23].algorithm == "recursive_doubling");
  // Ring at 4 ranks, 8 bytes: 6 steps of 2 us + 2 bytes at 10 GB/s (+ reduce), busbw = algbw * 1.5.
  CHECK(one.rows[0].time.value == Approx(6 * 2e-6 + 6 * 2 / 10e9 + 3 * 2 / 20e9));
  CHECK(one.rows[0].busbw.bytes_per_second == Approx(one.rows[0].algbw.bytes_per_second * 1.5));
  // Small messages favour recursive doubling (2 steps vs 6), large ones the ring.
  REQUIRE_FALSE(one.crossovers.empty());
  CHECK(one.crossovers.front().winner == "recursive_doubling");
  CHECK(one.crossovers.front().from == core::Bytes{8});
}

TEST_CASE("an unknown algorithm in a scenario points at its position", "[analysis][study]") {
  std::string text = kTextbook;
  text.replace(text.find("recursive_doubling"), 18, "recursive_dubling");
  const auto scenario = io::parse_scenario(text, "textbook.yaml");
  const auto registry = algorithms::make_default_registry();
  try {
    (void)analysis::run_study(scenario, scenario.studies[0], registry);
    FAIL("expected an error");
  } catch (const core::ScenarioError& e) {
    CHECK(std::string(e.what()).starts_with(
        "textbook.yaml:9:24: error: studies[0].algorithms[1]: unknown allreduce algorithm "
        "'recursive_dubling' (did you mean 'recursive_doubling'?)"));
  }
}

TEST_CASE("a study asking for more ranks than the cluster has points at its ranks",
          "[analysis][study]") {
  const char* text = R"(name: small
topology:
  kind: cluster
  nodes: 2
  devices_per_node: 4
  intra_bandwidth: 100 GB/s
  intra_latency: 1 us
  nic_bandwidth: 25 GB/s
  nic_latency: 1 us
studies:
  - collective: allreduce
    algorithms: [ring]
    ranks: [8, 16]
    sizes: 1KiB
)";
  // The loader already knows the cluster's size.
  CHECK_THROWS_WITH(io::parse_scenario(text, "small.yaml"),
                    "small.yaml:13:12: error: studies[0].ranks: 16 ranks, but the topology has "
                    "room for 8 (nodes x devices_per_node)");
  // A study changed after loading (as the command line does) is caught when the topology is built.
  std::string fits(text);
  fits.replace(fits.find("[8, 16]"), 7, "[8]");
  auto scenario = io::parse_scenario(fits, "small.yaml");
  scenario.studies[0].ranks = {8, 16};
  const auto registry = algorithms::make_default_registry();
  CHECK_THROWS_WITH(analysis::run_study(scenario, scenario.studies[0], registry),
                    "small.yaml:13:12: error: studies[0].ranks: the cluster has 8 devices (2 nodes "
                    "x 4) but 16 ranks were requested");
}

namespace {
std::string study_error(const std::string& params_line) {
  const std::string text = std::string(R"(name: p
topology:
  kind: uniform
  latency: 2 us
  bandwidth: 10 GB/s
studies:
  - collective: bcast
    algorithms: [pipeline, binomial]
    ranks: [4]
    sizes: [1 KiB]
)") + params_line;
  const auto scenario = io::parse_scenario(text, "p.yaml");
  const auto registry = algorithms::make_default_registry();
  try {
    (void)analysis::run_study(scenario, scenario.studies[0], registry);
  } catch (const core::ScenarioError& e) {
    return e.what();
  }
  return "no error";
}
} // namespace

TEST_CASE("algorithm parameters are resolved per algorithm, errors at the value's position",
          "[analysis][study][params]") {
  CHECK(study_error("    params: {segment_size: big}\n") ==
        "p.yaml:11:28: error: studies[0].params.segment_size: pipeline: parameter "
        "'segment_size' expects an integer or a size like '64 KiB', got 'big'");
  CHECK(study_error("    params: {segment_sise: 8 KiB}\n") ==
        "p.yaml:11:28: error: studies[0].params.segment_sise: no algorithm of this study takes a "
        "parameter 'segment_sise' (did you mean 'segment_size'?); their parameters are: "
        "segment_size");
  CHECK(study_error("    params: {segment_size: 8 KiB}\n") == "no error");
}

TEST_CASE("a study on the simgrid engine runs its points in parallel children and agrees with "
          "loggp on uniform",
          "[analysis][study][simgrid]") {
  auto scenario = io::parse_scenario(kTextbook, "textbook.yaml");
  const auto registry = algorithms::make_default_registry();
  const auto loggp = analysis::run_study(scenario, scenario.studies[0], registry, {}, 2);
  scenario.studies[0].engine = "simgrid";
  std::atomic<std::size_t> progress{0};
  const auto simgrid = analysis::run_study(
      scenario, scenario.studies[0], registry,
      [&](std::size_t done, std::size_t) { progress = std::max<std::size_t>(progress, done); }, 2,
      true);
  REQUIRE(simgrid.rows.size() == loggp.rows.size());
  CHECK(progress == 24);
  for (std::size_t i = 0; i < loggp.rows.size(); ++i) {
    CHECK(simgrid.rows[i].engine == "simgrid");
    CHECK(simgrid.rows[i].time.value == Approx(loggp.rows[i].time.value).epsilon(1e-6));
  }
  // A full mesh has no links to report, but a slot per row.
  CHECK(simgrid.link_loads.size() == simgrid.rows.size());
}

TEST_CASE("link reports rank links by utilisation", "[analysis][simgrid]") {
  core::Topology t;
  const auto a = t.add_device(core::Device{.name = "a"});
  const auto b = t.add_device(core::Device{.name = "b"});
  t.add_duplex(a, b, core::Bandwidth{1e9}, core::Seconds{0}, core::LinkKind::ib);
  const std::vector<core::LinkLoad> loads{{0, 1000, 1, core::Seconds{1e-6}},
                                          {1, 4000, 2, core::Seconds{4e-6}}};
  const auto r = analysis::link_reports(t, loads, core::Seconds{8e-6});
  REQUIRE(r.size() == 2);
  CHECK(r[0].label == "b -> a");
  CHECK(r[0].kind == "ib");
  CHECK(r[0].utilization == Approx(0.5));
  CHECK(r[1].utilization == Approx(0.125));
}

TEST_CASE("the scenario's nccl section corrects NCCL's protocols and leaves MPI algorithms alone",
          "[analysis][study][nccl]") {
  const std::string study = R"(
studies:
  - collective: allreduce
    algorithms: [nccl_ring, ring]
    ranks: [8]
    sizes: [8B, 64MiB]
    params: {protocol: simple}
)";
  const std::string topology = "name: t\ntopology: {kind: uniform, latency: 2 us, bandwidth: 10 "
                               "GB/s}\n";
  const auto plain = io::parse_scenario(topology + study, "plain.yaml");
  const auto corrected = io::parse_scenario(
      topology + "nccl: {call_overhead: 10 us, simple: {efficiency_factor: 0.5}}\n" + study,
      "corrected.yaml");
  const auto registry = algorithms::make_default_registry();
  const auto a = analysis::run_study(plain, plain.studies[0], registry, {}, 1);
  const auto b = analysis::run_study(corrected, corrected.studies[0], registry, {}, 1);
  REQUIRE(a.rows.size() == 4);
  REQUIRE(b.rows.size() == 4);
  // Rows: nccl_ring 8 B, nccl_ring 64 MiB, ring 8 B, ring 64 MiB.
  // 8 B: no bandwidth to speak of, so the call overhead is the whole difference.
  CHECK(b.rows[0].time.value - a.rows[0].time.value == Approx(10e-6).epsilon(0.01));
  // 64 MiB: the wire carries twice the bytes per payload byte, so the time nearly doubles.
  const double ratio = (b.rows[1].time.value - 10e-6) / a.rows[1].time.value;
  CHECK(ratio > 1.9);
  CHECK(ratio < 2.0);
  // MPI's ring runs no NCCL protocol: unchanged.
  CHECK(b.rows[2].time == a.rows[2].time);
  CHECK(b.rows[3].time == a.rows[3].time);
}
