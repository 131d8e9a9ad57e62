#pragma once
// Running algorithms on engines: one point, or a whole study (a sweep over algorithms, rank counts
// and sizes), in parallel over points with deterministic output order.

#include "collsim/algorithms/registry.hpp"
#include "collsim/analysis/executor.hpp"
#include "collsim/core/engine.hpp"
#include "collsim/core/result.hpp"
#include "collsim/core/scenario.hpp"
#include "collsim/stacks/stack.hpp"

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace collsim::analysis {

/// An engine by name with its settings (the scenario's `simgrid` section for "simgrid").
struct EngineChoice {
  std::string name = "loggp";
  core::SimgridSpec simgrid;
  core::NcclSpec nccl; ///< the scenario's corrections to NCCL's protocols (the NCCL stack's)
  core::MpiSpec mpi;   ///< what the MPI stacks read (the scenario's `mpi:` section)
  /// The scenario's topology section, where known: what NCCL's model reads beyond the graph
  /// (the CPU vendor) when it chooses an NCCL algorithm's parameters.
  std::optional<core::TopologySpec> topology;
  /// The library stack named by the scenario or `--stack` ("": each algorithm's own) and where
  /// the buffers live ("": device on GPU ranks).
  std::string stack;
  std::string buffers;
  EngineChoice() = default;
  EngineChoice(std::string_view n) : name(n) {} // NOLINT(google-explicit-constructor)
  EngineChoice(std::string_view n, core::SimgridSpec s) : name(n), simgrid(std::move(s)) {}
  /// The engine `n` with the scenario's SimGrid settings, NCCL corrections and topology.
  EngineChoice(std::string_view n, const core::Scenario& scenario)
      : name(n), simgrid(scenario.simgrid), nccl(scenario.nccl), mpi(scenario.mpi),
        topology(scenario.topology), stack(scenario.stack), buffers(scenario.buffers) {}
};

/// One engine of the registry: its name, what it is, whether it runs schedules (loggp, simgrid)
/// or prices an algorithm's closed form (analytic), and how to run a schedule on it.
struct EngineEntry {
  std::string name;
  std::string summary;
  bool messages = true; ///< runs schedules (false: needs the algorithm's closed form)
  /// Shares links among the flows that cross them (simgrid); stacks then leave that to it.
  bool shares_links = false;
  std::function<core::RunResult(const core::Schedule&, const core::Topology&,
                                const core::RunOptions&, const EngineChoice&)>
      run;
  /// Runs collapsed schedules (core/collapse.hpp): one program per class of equivalent ranks.
  bool collapses = false;
};

/// "loggp", "analytic", "simgrid".
std::vector<std::string> engine_names();
/// The engine called `engine`; UnknownNameError (valid names, closest match) otherwise.
const EngineEntry& find_engine(std::string_view engine);
/// Throws UnknownNameError for an engine collsim does not have.
void check_engine(std::string_view engine);

/// The library stacks collsim knows (stacks::default_stacks).
const stacks::Registry& stacks();
/// The stack that runs `algo`'s schedules ("nccl" for NCCL's algorithms, else "direct").
const stacks::Stack& stack_for(const algorithms::AlgorithmInfo& algo);
/// Checks the scenario's `stack:` name (ScenarioError at its position; UnknownNameError when it
/// came from the command line) and `buffers:`.
void check_stack(const core::Scenario& scenario);

/// `request` with the parameters of an NCCL algorithm that it leaves unset (`protocol`,
/// `channels`) set to what NCCL would run the algorithm with at this point
/// (nccl_algorithm_choice on the request's topology); parameters set in the request win. Other
/// algorithms, or points NCCL cannot run the algorithm at, come back unchanged. `chosen`
/// (optional) receives the values filled in, as users write them ("channels=16,protocol=simple").
algorithms::Request with_library_params(const algorithms::AlgorithmInfo& algo,
                                        algorithms::Request request, const EngineChoice& engine,
                                        std::string* chosen = nullptr);

/// Times one point: the algorithm's schedule at NCCL's own parameters where the request leaves
/// them unset (with_library_params; the row's `params` shows them), lowered by the stack that
/// runs it, on the engine. For "analytic" the algorithm must declare a closed form for the request
/// (UsageError otherwise). `run` (optional) receives the engine's full result.
/// The collapsed schedule `request` runs as on `engine` (analysis/collapse.hpp): none (every
/// rank's program) unless the engine runs collapsed schedules (loggp), the run keeps no per-rank
/// record (timeline, messages, link loads) and the algorithm and the machine share a symmetry.
std::optional<core::Schedule>
collapse_for(const algorithms::Registry& registry, const algorithms::AlgorithmInfo& algo,
             const core::Topology& topology, const EngineChoice& engine,
             const algorithms::Request& request, const core::RunOptions& options = {});

core::ResultRow simulate(const algorithms::Registry& registry,
                         const algorithms::AlgorithmInfo& algo, const core::Topology& topology,
                         const EngineChoice& engine, const algorithms::Request& request,
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

/// A link's load with what a report shows about the link.
struct LinkReport {
  std::string label; ///< "from -> to" (core::link_label)
  std::string kind;  ///< nvlink, pcie, ib, ...
  core::Bandwidth bandwidth;
  core::LinkLoad load;
  /// bytes / (bandwidth x run time): the share of the run the link would be busy at full rate.
  double utilization = 0.0;
};

struct StudyResult {
  std::vector<core::ResultRow> rows; ///< algorithm-major, then ranks, then size
  /// Per row, the links that carried traffic, most utilised first (only when run_study was asked
  /// for link loads and the engine simulates messages; empty vectors otherwise).
  std::vector<std::vector<LinkReport>> link_loads;
  std::vector<CrossoverRange> crossovers;
  std::vector<std::string> skipped; ///< "algorithm at N ranks: reason"
};

/// progress(done, total) is called from worker threads (serialised by the caller's lock-free
/// counter; the callback must be thread-safe).
using Progress = std::function<void(std::size_t done, std::size_t total)>;

/// Runs every (algorithm, ranks, size) point of a study. Algorithm names are resolved by the
/// registry (errors are ScenarioErrors at the name's position); topology size errors point at the
/// study's `ranks`. threads = 0: all hardware threads.
/// link_loads: also keep every point's link loads (StudyResult::link_loads).
/// executor: where the points run (analysis/executor.hpp; null: `threads` threads here).
StudyResult run_study(const core::Scenario& scenario, const core::StudySpec& study,
                      const algorithms::Registry& registry, const Progress& progress = {},
                      unsigned threads = 0, bool link_loads = false,
                      const Executor* executor = nullptr);

/// Several studies as one sweep: every study is checked first (errors as run_study's), then
/// their points run together, so that no study waits for the previous one's slowest point (tune
/// runs its candidates so). Studies that compare stacks run after the others, one at a time.
/// progress counts the points of all studies; results in the order of `studies`.
std::vector<StudyResult> run_studies(const core::Scenario& scenario,
                                     std::span<const core::StudySpec> studies,
                                     const algorithms::Registry& registry,
                                     const Progress& progress = {}, unsigned threads = 0,
                                     const Executor* executor = nullptr);

/// The links of a run, most utilised first (ties: by link id).
std::vector<LinkReport> link_reports(const core::Topology& topology,
                                     const std::vector<core::LinkLoad>& loads, core::Seconds time);

/// One point run in full: what `collsim sim --trace` records.
struct PointRun {
  core::Topology topology;
  core::Schedule schedule;
  core::RunResult result;
  core::ResultRow row;
};

/// Runs the first algorithm of `study` (under its first stack, where it compares stacks) at its
/// first rank count and first size with `options`
/// (names, parameters and sizes are checked as run_study checks them). For the message engines
/// only (loggp, simgrid): UsageError for "analytic".
PointRun run_point(const core::Scenario& scenario, const core::StudySpec& study,
                   const algorithms::Registry& registry, const core::RunOptions& options);

} // namespace collsim::analysis
