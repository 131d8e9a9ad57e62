#pragma once
// A workload (issue 19; docs/workload-format.md): the collective calls of one training step or
// application iteration, in phases, as plain values. io::load_workload reads them from YAML;
// analysis::run_workload times them on a scenario.

#include "collsim/core/collective.hpp"
#include "collsim/core/errors.hpp"
#include "collsim/core/units.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace collsim::core {

/// The communicator a phase's calls run on, as a layout of the job's ranks over its nodes
/// (the job: `nodes` nodes x ranks per node).
enum class WorkloadGroup : std::uint8_t {
  world,        ///< every rank of the job (data parallelism without model parallelism)
  node,         ///< the ranks of one node (tensor parallelism inside a node); every node's group
                ///< runs at once, on its own node
  across_nodes, ///< one rank per node, the same local rank on each (data parallelism across the
                ///< nodes of a tensor-parallel job); every local rank's group runs at once
  pair          ///< two ranks on two nodes (the boundary between two pipeline stages)
};

/// One kind of collective call of a step.
struct WorkloadPhase {
  std::string name;
  CollectiveKind collective = CollectiveKind::allreduce;
  Bytes bytes{0};          ///< per call, in nccl-tests' convention (the collective's S)
  std::uint32_t calls = 1; ///< per step
  WorkloadGroup group = WorkloadGroup::world;
  /// The communicator's size when it is a part of its group (a data-parallel group of 8 of the
  /// job's 128 nodes); 0: the whole group.
  std::uint32_t ranks = 0;
  /// The share of these calls' time that can run under the step's compute (0: none, they wait
  /// for it or it for them; 1: all of it, as long as there is compute left to hide under).
  double overlap = 0.0;
  SourcePos pos; ///< where the phase is written (or the generator that made it)
  bool operator==(const WorkloadPhase&) const = default;
};

struct Workload {
  std::string name;
  std::string description;
  std::string file;
  Seconds compute{0.0}; ///< the step's compute time (forward, backward, the solver), per rank
  std::vector<WorkloadPhase> phases;
  bool operator==(const Workload&) const = default;
};

} // namespace collsim::core
