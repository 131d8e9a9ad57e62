#pragma once
// Running algorithms on engines: one point, or a whole study (a sweep over algorithms, rank counts
// and sizes), in parallel over points with deterministic output order.

#include "collsim/algorithms/registry.hpp"
#include "collsim/core/engine.hpp"
#include "collsim/core/result.hpp"
#include "collsim/core/scenario.hpp"

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace collsim::analysis {

/// "loggp", "analytic".
std::vector<std::string> engine_names();
/// Throws UnknownNameError for an engine collsim does not have.
void check_engine(std::string_view engine);

/// Times one point. For "analytic" the algorithm must declare a closed form for the request
/// (UsageError otherwise). `run` (optional) receives the engine's full result.
core::ResultRow simulate(const algorithms::Registry& registry,
                         const algorithms::AlgorithmInfo& algo, const core::Topology& topology,
                         std::string_view engine, const algorithms::Request& request,
                         core::RunResult* run = nullptr, const core::RunOptions& options = {});

/// The fastest algorithm for each contiguous size range at one rank count.
struct CrossoverRange {
  core::CollectiveKind collective = core::CollectiveKind::allreduce;
  std::uint32_t ranks = 0;
  core::Bytes from{0};
  core::Bytes to{0};
  std::string winner;
  std::string runner_up;    ///< empty when only one algorithm ran
  double min_speedup = 0.0; ///< over the range: smallest runner-up time / winner time
  double max_speedup = 0.0;
  bool operator==(const CrossoverRange&) const = default;
};
/// Groups rows by (collective, ranks), finds the winner per size, and merges neighbouring sizes
/// with the same winner. Rows are compared at equal (collective, ranks, bytes).
std::vector<CrossoverRange> crossovers(const std::vector<core::ResultRow>& rows);

struct StudyResult {
  std::vector<core::ResultRow> rows; ///< algorithm-major, then ranks, then size
  std::vector<CrossoverRange> crossovers;
  std::vector<std::string> skipped; ///< "algorithm at N ranks: reason"
};

/// progress(done, total) is called from worker threads (serialised by the caller's lock-free
/// counter; the callback must be thread-safe).
using Progress = std::function<void(std::size_t done, std::size_t total)>;

/// Runs every (algorithm, ranks, size) point of a study. Algorithm names are resolved by the
/// registry (errors are ScenarioErrors at the name's position); topology size errors point at the
/// study's `ranks`. threads = 0: all hardware threads.
StudyResult run_study(const core::Scenario& scenario, const core::StudySpec& study,
                      const algorithms::Registry& registry, const Progress& progress = {},
                      unsigned threads = 0);

} // namespace collsim::analysis
