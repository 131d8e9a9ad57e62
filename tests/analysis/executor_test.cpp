// Sweeps on an injected executor (analysis/executor.hpp): what an MPI job's executor relies on.
// A recording executor runs every point and keeps each point's bytes (save); a replaying one then
// runs only the even points of the same sweep and loads the odd ones from those bytes, as a rank
// does with points that ran elsewhere. The results must equal a plain threaded run field by
// field: a field that save or load forgot stays at its default and fails here.

#include "collsim/analysis/executor.hpp"
#include "collsim/analysis/simulate.hpp"
#include "collsim/analysis/validate.hpp"
#include "collsim/core/errors.hpp"
#include "collsim/io/scenario_loader.hpp"

#include <catch2/catch.hpp>

#include <map>
#include <stdexcept>
#include <string>

using namespace collsim;

namespace {

class RecordingExecutor final : public analysis::Executor {
public:
  mutable std::map<std::size_t, std::string> saved;
  void run(const analysis::SweepItems& items) const override {
    saved.clear();
    for (std::size_t i = 0; i < items.count; ++i) {
      items.run(i, {});
      saved[i] = items.save(i);
      if (items.done) {
        items.done(i + 1);
      }
    }
  }
};

class ReplayExecutor final : public analysis::Executor {
public:
  explicit ReplayExecutor(const RecordingExecutor& from) : from_(from) {}
  mutable std::size_t ran = 0;
  mutable std::size_t loaded = 0;
  void run(const analysis::SweepItems& items) const override {
    REQUIRE(from_.saved.size() == items.count);
    for (std::size_t i = 0; i < items.count; ++i) {
      if (i % 2 == 0) {
        items.run(i, {});
        ++ran;
      } else {
        items.load(i, from_.saved.at(i));
        ++loaded;
      }
    }
  }

private:
  const RecordingExecutor& from_;
};

/// A DGX A100 preset (two nodes at 16 ranks) with a study of MPI, NCCL and `auto` points.
core::Scenario scenario_with_study() {
  core::Scenario s =
      io::load_scenario(std::string(COLLSIM_SOURCE_DIR) + "/scenarios/dgx-a100.yaml");
  core::StudySpec study;
  study.collective = core::CollectiveKind::allreduce;
  study.algorithms = {"ring", "rabenseifner", "nccl_ring", "auto"};
  study.ranks = {4, 16};
  study.sizes = {core::Bytes{8}, core::Bytes{65536}, core::Bytes{4 << 20}};
  s.studies = {study};
  return s;
}

} // namespace

TEST_CASE("a study's points loaded from another process's bytes equal the points run here",
          "[analysis][executor]") {
  const auto scenario = scenario_with_study();
  const auto registry = algorithms::make_default_registry();
  const auto& study = scenario.studies.front();
  for (const bool loads : {false, true}) {
    CAPTURE(loads);
    const analysis::StudyResult plain =
        analysis::run_study(scenario, study, registry, {}, 1, loads);
    RecordingExecutor record;
    (void)analysis::run_study(scenario, study, registry, {}, 1, loads, &record);
    ReplayExecutor replay(record);
    std::size_t progress = 0;
    const analysis::StudyResult mixed = analysis::run_study(
        scenario, study, registry, [&](std::size_t, std::size_t) { ++progress; }, 1, loads,
        &replay);
    REQUIRE(plain.rows.size() == 24);
    CHECK(replay.loaded == 12);
    CHECK(replay.ran == 12);
    CHECK(progress == 0); // the replaying executor reports no progress: progress is its job
    REQUIRE(mixed.rows.size() == plain.rows.size());
    for (std::size_t i = 0; i < plain.rows.size(); ++i) {
      CAPTURE(i, plain.rows[i].algorithm, plain.rows[i].ranks, plain.rows[i].bytes.value);
      CHECK(mixed.rows[i] == plain.rows[i]);
    }
    CHECK(mixed.crossovers == plain.crossovers);
    REQUIRE(mixed.link_loads.size() == plain.link_loads.size());
    for (std::size_t i = 0; i < plain.link_loads.size(); ++i) {
      REQUIRE(mixed.link_loads[i].size() == plain.link_loads[i].size());
      for (std::size_t k = 0; k < plain.link_loads[i].size(); ++k) {
        const analysis::LinkReport& a = mixed.link_loads[i][k];
        const analysis::LinkReport& b = plain.link_loads[i][k];
        CHECK(a.label == b.label);
        CHECK(a.kind == b.kind);
        CHECK(a.bandwidth.bytes_per_second == b.bandwidth.bytes_per_second);
        CHECK(a.load == b.load);
        CHECK(a.utilization == b.utilization);
      }
    }
    if (loads) {
      CHECK(!plain.link_loads.front().empty()); // the check above compared something
    }
  }
}

TEST_CASE("validated rows loaded from another process's bytes equal the rows predicted here",
          "[analysis][executor]") {
  const auto scenario = scenario_with_study();
  const auto registry = algorithms::make_default_registry();
  std::vector<analysis::MeasuredPoint> points;
  for (std::uint32_t ranks : {0U, 4U, 16U}) {
    for (std::uint64_t bytes : {0ULL, 1024ULL, 1ULL << 22}) {
      analysis::MeasuredPoint p;
      p.collective = core::CollectiveKind::allreduce;
      p.ranks = ranks;
      p.bytes = core::Bytes{bytes};
      p.time = core::Seconds{1e-5 + static_cast<double>(bytes) * 1e-10};
      p.library = analysis::Library::nccl;
      p.file = "measured.txt";
      p.line = points.size() + 1;
      points.push_back(p);
    }
  }
  for (const std::string algorithm : {"auto", "fastest", "ring"}) {
    CAPTURE(algorithm);
    analysis::ValidateOptions opt;
    opt.algorithm = algorithm;
    opt.threads = 1;
    const analysis::ValidationResult plain = analysis::validate(scenario, points, registry, opt);
    RecordingExecutor record;
    opt.executor = &record;
    (void)analysis::validate(scenario, points, registry, opt);
    ReplayExecutor replay(record);
    opt.executor = &replay;
    const analysis::ValidationResult mixed = analysis::validate(scenario, points, registry, opt);
    CHECK(replay.loaded == 4);
    CHECK(mixed.skipped == plain.skipped);
    CHECK(plain.skipped.size() == 5); // no rank count (3), 0 bytes (2 more)
    REQUIRE(mixed.rows.size() == plain.rows.size());
    REQUIRE(plain.rows.size() == 4);
    for (std::size_t i = 0; i < plain.rows.size(); ++i) {
      const analysis::ValidationRow& a = mixed.rows[i];
      const analysis::ValidationRow& b = plain.rows[i];
      CHECK(a.measured.line == b.measured.line);
      CHECK(a.algorithm == b.algorithm);
      CHECK(a.params == b.params);
      CHECK(a.chosen_by == b.chosen_by);
      CHECK(a.predicted.value == b.predicted.value);
      CHECK(a.error_pct == b.error_pct);
      CHECK(a.library_estimate_us == b.library_estimate_us);
      CHECK(a.library_error_pct == b.library_error_pct);
    }
    if (algorithm == "auto") {
      CHECK(plain.rows.front().library_estimate_us > 0.0); // NCCL's estimate was compared
      CHECK(!plain.rows.front().params.empty());
    }
  }
}

TEST_CASE("a result's bytes that do not fit the point are refused, not read past",
          "[analysis][executor]") {
  const auto scenario = scenario_with_study();
  const auto registry = algorithms::make_default_registry();
  class Truncating final : public analysis::Executor {
  public:
    void run(const analysis::SweepItems& items) const override {
      items.run(0, {});
      const std::string bytes = items.save(0);
      items.load(1, std::string_view(bytes).substr(0, bytes.size() / 2));
    }
  } truncating;
  class Padding final : public analysis::Executor {
  public:
    void run(const analysis::SweepItems& items) const override {
      items.run(0, {});
      items.load(1, items.save(0) + "x");
    }
  } padding;
  const auto& study = scenario.studies.front();
  CHECK_THROWS_WITH(analysis::run_study(scenario, study, registry, {}, 1, false, &truncating),
                    Catch::Contains("truncated"));
  CHECK_THROWS_WITH(analysis::run_study(scenario, study, registry, {}, 1, false, &padding),
                    Catch::Contains("trailing bytes"));
}
