// A workload's step on a scenario (workload.hpp; docs/workload-format.md).

#include "collsim/analysis/workload.hpp"

#include "parallel.hpp"

#include "collsim/analysis/what_if.hpp"
#include "collsim/topologies/build.hpp"

#include <algorithm>
#include <exception>
#include <fmt/format.h>

namespace collsim::analysis {

WorkloadTiming step_time(std::vector<PhaseTiming> phases, core::Seconds compute) {
  WorkloadTiming t;
  t.compute = compute;
  double hideable = 0.0;
  for (const PhaseTiming& p : phases) {
    t.communication.value += p.total.value;
    hideable += p.phase.overlap * p.total.value;
  }
  t.overlapped = core::Seconds{std::min(compute.value, hideable)};
  t.exposed = core::Seconds{t.communication.value - t.overlapped.value};
  t.step = core::Seconds{compute.value + t.exposed.value};
  t.phases = std::move(phases);
  return t;
}

std::uint32_t ranks_per_node(const core::Scenario& scenario) {
  const WhatIfShape shape = what_if_shape(scenario);
  return shape.ranks_per_node && *shape.ranks_per_node > 0 ? *shape.ranks_per_node
                                                           : shape.max_ranks_per_node;
}

Library default_library(const core::Scenario& scenario, std::uint32_t ranks) {
  const core::Topology topo = topologies::build(scenario.topology, ranks);
  return topo.devices()[topo.device_of(0)].kind == core::DeviceKind::gpu ? Library::nccl
                                                                         : Library::mpi;
}

std::pair<core::Scenario, std::uint32_t> communicator(const core::Scenario& scenario,
                                                      const WorkloadJob& job,
                                                      core::WorkloadGroup group,
                                                      std::uint32_t ranks) {
  using core::WorkloadGroup;
  const std::uint32_t most = group == WorkloadGroup::world  ? job.nodes * job.ranks_per_node
                             : group == WorkloadGroup::node ? job.ranks_per_node
                             : group == WorkloadGroup::pair ? 2
                                                            : job.nodes;
  const char* name = group == WorkloadGroup::world  ? "world"
                     : group == WorkloadGroup::node ? "node"
                     : group == WorkloadGroup::pair ? "pair"
                                                    : "across_nodes";
  const bool too_few_nodes = group == WorkloadGroup::pair && job.nodes < 2;
  if (ranks > most || too_few_nodes) {
    throw core::UsageError(fmt::format("{} ranks of group {}: a job of {} node(s) x {} ranks has "
                                       "{} rank(s) in it",
                                       ranks == 0 ? most : ranks, name, job.nodes,
                                       job.ranks_per_node, too_few_nodes ? job.nodes : most));
  }
  const std::uint32_t size = ranks == 0 ? most : ranks;
  if (group == WorkloadGroup::world) {
    return {scenario, size};
  }
  if (!what_if_shape(scenario).nodes) {
    throw core::UsageError(fmt::format(
        "scenario '{}' has a {} topology, which has no nodes: only group world runs on it",
        scenario.name, scenario.topology.kind));
  }
  WhatIf change;
  change.ranks_per_node = group == WorkloadGroup::node ? job.ranks_per_node : 1;
  return {apply_what_if(scenario, change), size};
}

namespace {

/// One phase's call on its communicator (single-threaded: the phases run in parallel).
PhaseTiming time_phase(const core::Scenario& scenario, const core::WorkloadPhase& phase,
                       const WorkloadJob& job, const algorithms::Registry& registry,
                       ValidateOptions options) {
  std::pair<core::Scenario, std::uint32_t> placed;
  try {
    placed = communicator(scenario, job, phase.group, phase.ranks);
  } catch (const core::UsageError& e) {
    throw core::UsageError(
        fmt::format("{}: phase '{}': {}", core::to_string(phase.pos), phase.name, e.what()));
  }
  const auto& [s, ranks] = placed;
  ExpectRequest req;
  req.collective = phase.collective;
  req.ranks = ranks;
  req.sizes = {phase.bytes};
  req.library = default_library(s, ranks);
  options.threads = 1;
  const ExpectResult r = expect(s, req, registry, options);
  if (r.rows.empty()) {
    throw core::UsageError(fmt::format("{}: phase '{}': {} on {} ranks of scenario '{}': {}",
                                       core::to_string(phase.pos), phase.name,
                                       core::to_string(phase.collective), ranks, scenario.name,
                                       r.skipped.empty() ? "no prediction" : r.skipped.front()));
  }
  const ValidationRow& row = r.rows.front().row;
  return {phase,
          ranks,
          row.algorithm,
          row.params,
          row.chosen_by,
          row.predicted,
          core::Seconds{row.predicted.value * phase.calls}};
}

} // namespace

WorkloadTiming run_workload(const core::Scenario& scenario, const core::Workload& workload,
                            const WorkloadJob& job, const algorithms::Registry& registry,
                            const ValidateOptions& options) {
  const std::size_t n = workload.phases.size();
  std::vector<PhaseTiming> phases(n);
  std::vector<std::exception_ptr> failed(n);
  // The phases are independent predictions: one per worker thread. The first failing phase in
  // the file is the one reported, whichever thread met it first.
  detail::parallel_for(n, options.threads, [&](std::size_t i) {
    try {
      phases[i] = time_phase(scenario, workload.phases[i], job, registry, options);
    } catch (...) {
      failed[i] = std::current_exception();
    }
  });
  for (const std::exception_ptr& e : failed) {
    if (e) {
      std::rethrow_exception(e);
    }
  }
  return step_time(std::move(phases), workload.compute);
}

} // namespace collsim::analysis
