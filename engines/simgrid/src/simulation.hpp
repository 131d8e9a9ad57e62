#pragma once
// The SimGrid simulation proper. It creates SimGrid's process-wide engine, so it runs only once per
// process: SimgridEngine::run calls it in a forked child.

#include "collsim/core/engine.hpp"
#include "collsim/core/scenario.hpp"

#include <cstdint>
#include <vector>

namespace collsim::engines::detail {

/// Checks what can be checked without SimGrid (rank counts, matching, agents, size limits), so
/// that such errors reach the caller without a child process. Throws EngineError.
void precheck(const core::Schedule& schedule, const core::Topology& topology);

/// Per participant of the schedule: equal keys share a node (a protocol's intra-node latency
/// applies). On a full mesh every rank is a node of its own; network switches belong to no node.
std::vector<std::uint64_t> node_keys(const core::Schedule& schedule,
                                     const core::Topology& topology);

/// The bytes the simulation of `schedule` allocates beyond the schedule: its state per operation
/// and SimGrid's platform per participant (a host, its CPU and netpoint, its routes; measured,
/// docs/benchmarks.md). What the parent reports to the point's memory meter for its child.
std::uint64_t memory_estimate(const core::Schedule& schedule, const core::RunOptions& options);

/// Runs the schedule on SimGrid in this process (once per process). Throws EngineError.
core::RunResult simulate(const core::Schedule& schedule, const core::Topology& topology,
                         const core::RunOptions& options, const core::SimgridSpec& settings);

} // namespace collsim::engines::detail
