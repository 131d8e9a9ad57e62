// Validation against measured points: errors, the fastest-algorithm choice, summaries, skips.

#include "collsim/analysis/ompi_defaults.hpp"
#include "collsim/analysis/validate.hpp"
#include "collsim/core/errors.hpp"
#include "collsim/io/scenario_loader.hpp"

#include <catch2/catch.hpp>

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
    algorithms: [ring]
    ranks: [8]
    sizes: [1 MiB]
)";

/// Ring allreduce on the textbook platform: 2(p-1) alpha + 2(p-1)/p n beta + (p-1)/p n gamma.
double ring_time(std::uint32_t p, double n) {
  return 2.0 * (p - 1) * 2e-6 + 2.0 * (p - 1) / p * n / 10e9 + (p - 1.0) / p * n / 20e9;
}

analysis::MeasuredPoint point(std::uint32_t ranks, std::uint64_t bytes, double seconds,
                              std::size_t line) {
  analysis::MeasuredPoint p;
  p.collective = core::CollectiveKind::allreduce;
  p.ranks = ranks;
  p.bytes = core::Bytes{bytes};
  p.time = core::Seconds{seconds};
  p.file = "measured.txt";
  p.line = line;
  return p;
}

} // namespace

TEST_CASE("validate compares each measured point with the named algorithm's prediction",
          "[analysis][validate]") {
  const auto scenario = io::parse_scenario(kTextbook, "textbook.yaml");
  const auto registry = algorithms::make_default_registry();
  // Measured 10 % slower than the model at 1 MiB and 64 MiB, 20 % faster at 64 KiB.
  const std::vector<analysis::MeasuredPoint> points{
      point(8, 65536, ring_time(8, 65536) / 1.25, 10),
      point(8, 1 << 20, ring_time(8, 1 << 20) * 1.1, 11),
      point(8, 64 << 20, ring_time(8, 64 << 20) * 1.1, 12)};
  analysis::ValidateOptions opt;
  opt.algorithm = "ring";
  const auto r = analysis::validate(scenario, points, registry, opt);
  REQUIRE(r.rows.size() == 3);
  CHECK(r.skipped.empty());
  CHECK(r.rows[0].algorithm == "ring");
  CHECK(r.rows[0].error_pct == Approx(25.0).epsilon(1e-9));
  CHECK(r.rows[1].error_pct == Approx(100.0 * (1 / 1.1 - 1)).epsilon(1e-9));
  CHECK(r.rows[2].predicted.value == Approx(ring_time(8, 64 << 20)).epsilon(1e-9));
  CHECK(r.summary.all.points == 3);
  CHECK(r.summary.all.median_abs_err_pct == Approx(100.0 * (1 - 1 / 1.1)).epsilon(1e-9));
  CHECK(r.summary.all.p90_abs_err_pct == Approx(25.0).epsilon(1e-9));
  CHECK(r.summary.below_1MiB.points == 1);
  CHECK(r.summary.below_1MiB.median_abs_err_pct == Approx(25.0).epsilon(1e-9));
  CHECK(r.summary.from_1MiB.points == 2);
}

TEST_CASE("validate auto without a known library takes the fastest algorithm collsim has",
          "[analysis][validate]") {
  const auto scenario = io::parse_scenario(kTextbook, "textbook.yaml");
  const auto registry = algorithms::make_default_registry();
  const std::vector<analysis::MeasuredPoint> points{point(16, 1024, 10e-6, 1),
                                                    point(16, 64 << 20, 0.02, 2)};
  const auto r = analysis::validate(scenario, points, registry, {});
  REQUIRE(r.rows.size() == 2);
  // Small messages: a latency-optimal algorithm beats the ring's 30 alpha.
  CHECK(r.rows[0].predicted.value < ring_time(16, 1024) / 2);
  CHECK(r.rows[1].predicted.value <= ring_time(16, 64 << 20) * (1 + 1e-9));
  CHECK(r.rows[0].algorithm != "ring");
}

TEST_CASE("validate skips what the scenario cannot run, with the reason", "[analysis][validate]") {
  const auto scenario = io::parse_scenario(R"(name: small
topology:
  kind: cluster
  nodes: 2
  devices_per_node: 4
studies: [{collective: allreduce, algorithms: [ring], ranks: 8, sizes: 1MiB}]
)",
                                           "small.yaml");
  const auto registry = algorithms::make_default_registry();
  const std::vector<analysis::MeasuredPoint> points{
      point(0, 1024, 1e-5, 3), point(16, 1024, 1e-5, 4), point(8, 1024, 0.0, 5),
      point(8, 1024, 1e-5, 6)};
  const auto r = analysis::validate(scenario, points, registry, {});
  REQUIRE(r.rows.size() == 1);
  CHECK(r.rows[0].measured.line == 6);
  REQUIRE(r.skipped.size() == 3);
  CHECK(r.skipped[0] == "measured.txt:3: the log does not say how many ranks ran");
  CHECK(r.skipped[1].rfind("measured.txt:4: ", 0) == 0);
  CHECK(r.skipped[1].find("16") != std::string::npos);
  CHECK(r.skipped[2] == "measured.txt:5: no measured time");
  analysis::ValidateOptions opt;
  opt.algorithm = "rign";
  CHECK_THROWS_AS(analysis::validate(scenario, points, registry, opt), core::UnknownNameError);
}

TEST_CASE("validate auto predicts what the measuring library picks: Open MPI 4.1's fixed rules for "
          "MPI points, NCCL's choice for NCCL points",
          "[analysis][validate]") {
  const auto registry = algorithms::make_default_registry();
  {
    const auto scenario = io::parse_scenario(kTextbook, "textbook.yaml");
    // 5 ranks: p < 8 row of the allreduce table, {m<16:4, m<8K:3, else:6}.
    std::vector<analysis::MeasuredPoint> points{point(5, 8, 1e-5, 1), point(5, 4096, 1e-5, 2),
                                                point(5, 1 << 20, 1e-3, 3)};
    for (auto& p : points) {
      p.library = analysis::Library::mpi;
      p.element_bytes = 4;
    }
    const auto r = analysis::validate(scenario, points, registry, {});
    REQUIRE(r.rows.size() == 3);
    // 8 B = 2 floats < 5 ranks: Open MPI's ring falls back to recursive doubling.
    CHECK(r.rows[0].algorithm == "recursive_doubling");
    CHECK(r.rows[1].algorithm == "recursive_doubling");
    CHECK(r.rows[2].algorithm == "rabenseifner");
    CHECK(r.rows[2].chosen_by.starts_with("Open MPI 4.1"));
    CHECK(r.rows[2].chosen_by.find("-> 6") != std::string::npos);
    // "fastest" ignores the library.
    analysis::ValidateOptions opt;
    opt.algorithm = "fastest";
    const auto f = analysis::validate(scenario, points, registry, opt);
    REQUIRE(f.rows.size() == 3);
    CHECK(f.rows[2].predicted.value <= r.rows[2].predicted.value);
    CHECK(f.rows[2].chosen_by == "fastest of all algorithms");
    // A log of another MPI: the fastest of the MPI algorithms.
    points[2].mpi_library = "Intel(R) MPI Library 2018 Update 4";
    const auto intel = analysis::validate(scenario, points, registry, {});
    CHECK(intel.rows[2].chosen_by == "fastest of the MPI algorithms");
  }
  {
    const auto scenario = io::load_scenario("dgx-a100");
    // One DGX A100 node: NCCL picks ring LL for small messages and ring Simple for large ones
    // (docs/library-defaults.md); collsim simulates exactly that.
    std::vector<analysis::MeasuredPoint> points{point(8, 8, 35e-6, 1),
                                                point(8, 128 << 20, 1.3e-3, 2)};
    for (auto& p : points) {
      p.library = analysis::Library::nccl;
    }
    const auto r = analysis::validate(scenario, points, registry, {});
    REQUIRE(r.rows.size() == 2);
    CHECK(r.rows[0].algorithm == "nccl_ring");
    CHECK(r.rows[0].params.at("protocol") == "ll");
    CHECK(r.rows[1].params.at("protocol") == "simple");
    CHECK(r.rows[1].chosen_by.starts_with("NCCL 2.30.7 tuning model: Ring/Simple"));
    for (const auto& row : r.rows) {
      CHECK(row.predicted.value > 0.0);
    }
  }
}
