#pragma once
// Algorithms from files (issue 22): `--algorithm file:PATH`, or `file:PATH` in a study's
// `algorithms:`, names the MSCCL XML algorithm (or LogGOPSim GOAL schedule) in PATH wherever a
// built-in algorithm could be named, so that it competes in the same sweeps, tables and crossover
// charts.

#include "collsim/algorithms/registry.hpp"
#include "collsim/core/collective.hpp"
#include "collsim/core/scenario.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace collsim::io {

inline constexpr std::string_view kFileAlgorithmPrefix = "file:";

/// True for "file:PATH".
bool is_file_algorithm(std::string_view name);

/// The algorithm "file:PATH" names, for `collective`. PATH.xml is read as MSCCL XML (io/msccl.hpp)
/// once; its requests are refused unless ranks = the file's ngpus, root 0, no counts and a size
/// the runtime accepts; each request builds the runtime's tiled schedule with NCCL's ring
/// protocol for the file's proto on the request's topology (algorithms/nccl_protocol.hpp).
/// PATH.goal is a LogGOPSim GOAL schedule: one fixed schedule whatever the size (GOAL carries its
/// own message sizes), for its num_ranks only, timed as plain messages; collsim's own GOAL
/// exports are refused (name the algorithm itself). Throws ScheduleError (the file's position) or
/// UsageError (another extension, a `custom` or other collective, unreadable).
algorithms::AlgorithmInfo file_algorithm(std::string_view name, core::CollectiveKind collective);

/// Adds to `registry` every file algorithm among `names` (once each) and checks that each file
/// computes `collective`.
void add_file_algorithms(algorithms::Registry& registry, core::CollectiveKind collective,
                         const std::vector<std::string>& names);
/// The same for every study of `scenario`.
void add_file_algorithms(algorithms::Registry& registry, const core::Scenario& scenario);

} // namespace collsim::io
