#pragma once
// Timing a workload's step on a scenario (issue 19; docs/workload-format.md): each phase's call
// predicted as `collsim expect` predicts it, on the communicator its group describes, and the
// step's time from its compute and the share of communication that hides under it.

#include "collsim/analysis/health.hpp"
#include "collsim/core/scenario.hpp"
#include "collsim/core/workload.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace collsim::analysis {

/// The job a workload runs as: `nodes` nodes of `ranks_per_node` ranks (a uniform topology,
/// which has no nodes: one node of all the ranks).
struct WorkloadJob {
  std::uint32_t nodes = 1;
  std::uint32_t ranks_per_node = 1;
};

struct PhaseTiming {
  core::WorkloadPhase phase;
  std::uint32_t ranks = 0; ///< the size of the phase's communicator
  std::string algorithm;   ///< what the library picks for one call
  algorithms::RawParams params;
  std::string chosen_by;
  core::Seconds per_call{0.0};
  core::Seconds total{0.0}; ///< calls x per_call
};

struct WorkloadTiming {
  std::vector<PhaseTiming> phases;
  core::Seconds compute{0.0};
  core::Seconds communication{0.0}; ///< every phase's total
  core::Seconds overlapped{0.0};    ///< the communication hidden under the compute
  core::Seconds exposed{0.0};       ///< communication - overlapped
  core::Seconds step{0.0};          ///< compute + exposed
};

/// The step's time: compute + communication - min(compute, hideable), where hideable is the sum
/// of each phase's overlap x its total. No overlap: compute + communication; all of it
/// overlappable: max(compute, communication).
WorkloadTiming step_time(std::vector<PhaseTiming> phases, core::Seconds compute);

/// The ranks a node of the scenario holds: its placement's ranks_per_node, else every GPU or core
/// of a node; 0 where neither says (a uniform or cluster topology without a count).
std::uint32_t ranks_per_node(const core::Scenario& scenario);

/// NCCL for GPU ranks, MPI for CPU ranks: whose choice runs a call on `ranks` ranks of the
/// scenario when no stack is named.
Library default_library(const core::Scenario& scenario, std::uint32_t ranks);

/// The scenario and rank count a phase's communicator runs on: the whole job (world), the ranks
/// of one node (node), one rank on each node (across_nodes), or one rank on each of two nodes
/// (pair); `ranks` > 0 takes that many of them. UsageError for a group the topology cannot place
/// (node groups on a uniform topology) or more ranks than the group has.
std::pair<core::Scenario, std::uint32_t> communicator(const core::Scenario& scenario,
                                                      const WorkloadJob& job,
                                                      core::WorkloadGroup group,
                                                      std::uint32_t ranks = 0);

/// Times every phase and the step. UsageError naming the phase (file:line) when collsim cannot
/// predict its call.
WorkloadTiming run_workload(const core::Scenario& scenario, const core::Workload& workload,
                            const WorkloadJob& job, const algorithms::Registry& registry,
                            const ValidateOptions& options);

} // namespace collsim::analysis
