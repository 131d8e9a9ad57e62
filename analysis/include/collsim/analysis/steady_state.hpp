#pragma once
// Timing a long chunk pipeline from a bounded number of its loops (issue 23). NCCL's algorithms
// cut a message into loops of identical chunk steps (AlgorithmInfo::loop_bytes): an 8 GiB
// NVLS-tree allreduce on 16 GPUs is 4096 loops. Once the pipeline is full, every operation of a
// loop runs exactly as the same operation some loops earlier, shifted by a fixed time: the run
// of S loops then gives the run of N > S loops by moving its last loops N - S loops later.
//
// How it is made exact rather than assumed: the steady state is found in one run of S loops from
// the operations' own times. For a period P (1, 2, 4, 8, 16 or 32 loops) and a shift D, every
// operation of every participant in a window of loops must end exactly D later P loops on, and
// start D later or at the same time (a receive posted at the start; within 1e-9 of the run's
// time). The window is at least as long as the longest reach of a
// dependency in loops (program order, data dependencies and matched messages), so the state
// that the later loops depend on repeats as a whole and the run continues periodically: the
// engines are deterministic functions of that state. The window lies after a warm-up of that
// reach and before the last loops, whose program differs (the pipeline drains). Where no period
// is found, or where S loops would not save at least half of the run, the point runs in full.
//
// The run of S loops is the request with bytes - (N - S) L bytes and Request::chunk_basis set to
// the full message, so that NCCL's size-dependent chunk sizes stay those of the full message;
// NCCL's channel and protocol choice must already be pinned in the request's parameters
// (with_library_params).

#include "collsim/algorithms/registry.hpp"
#include "collsim/core/engine.hpp"
#include "collsim/core/result.hpp"
#include "collsim/core/schedule.hpp"
#include "collsim/core/topology.hpp"

#include <cstdint>
#include <functional>
#include <optional>

namespace collsim::analysis {

/// What a steady-state run found.
struct SteadyState {
  std::uint64_t loops = 0;     ///< the request's loops of AlgorithmInfo::loop_bytes
  std::uint64_t run_loops = 0; ///< the loops of the run it was timed from
  std::uint32_t period = 0;    ///< loops after which every operation repeats
  double shift = 0.0;          ///< seconds every operation moves per period
};

/// The schedule an engine runs for a request (the stack's lowering).
using LowerRequest = std::function<core::Schedule(const algorithms::Request&)>;
/// Runs a lowered schedule on the engine with the options given.
using RunSchedule = std::function<core::RunResult(const core::Schedule&, const core::RunOptions&)>;

/// The result of running `request` in full on `topology`, from a run of fewer loops where the
/// algorithm has loops (AlgorithmInfo::loop_bytes) and the run finds their steady state; nullopt
/// otherwise (then run it in full). No per-operation record (options.timeline or
/// options.messages: nullopt): the result has the time, every rank's finish, the operation,
/// message and byte counts of the full schedule and, with options.link_loads, every link's
/// bytes, messages and busy time (one period's stretch of time added per period; nullopt where
/// two stretches differ).
std::optional<core::RunResult>
steady_state_run(const algorithms::AlgorithmInfo& algo, const algorithms::Request& request,
                 const core::Topology& topology, const LowerRequest& lower, const RunSchedule& run,
                 const core::RunOptions& options = {}, SteadyState* found = nullptr);

} // namespace collsim::analysis
