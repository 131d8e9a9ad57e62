// One workload's step on several machines: each entry timed as `collsim workload run` times it.

#include "collsim/analysis/compare.hpp"

#include "collsim/analysis/what_if.hpp"
#include "collsim/core/errors.hpp"

#include <fmt/format.h>

namespace collsim::analysis {
namespace {

/// The phase with the most communication, and where it runs.
std::string dominant_phase(const WorkloadTiming& t, const WorkloadJob& job) {
  const PhaseTiming* top = nullptr;
  for (const auto& p : t.phases) {
    if (top == nullptr || p.total.value > top->total.value) {
      top = &p;
    }
  }
  if (top == nullptr) {
    return "-";
  }
  const bool inside = top->phase.group == core::WorkloadGroup::node || job.nodes == 1;
  return fmt::format("{} ({})", top->phase.name, inside ? "inside a node" : "across nodes");
}

} // namespace

double CompareRow::hours(std::uint64_t steps) const {
  return timing.step.value * static_cast<double>(steps) / 3600.0;
}

std::optional<double> CompareRow::cost(std::uint64_t steps) const {
  if (!price) {
    return std::nullopt;
  }
  return hours(steps) * job.nodes * *price;
}

std::vector<CompareRow> compare_machines(const std::vector<CompareEntry>& entries,
                                         const algorithms::Registry& registry,
                                         const std::string& engine, std::uint32_t threads) {
  std::vector<CompareRow> rows;
  for (const CompareEntry& e : entries) {
    if (e.workload == nullptr) {
      throw core::InternalError("compare_machines: an entry without a workload");
    }
    WorkloadJob job;
    job.nodes = e.nodes;
    job.ranks_per_node = ranks_per_node(e.scenario);
    if (!what_if_shape(e.scenario).nodes || job.ranks_per_node == 0) {
      throw core::UsageError(
          fmt::format("'{}' has a {} topology without nodes: compare runs machines of nodes "
                      "(cluster or system topologies)",
                      e.scenario.name, e.scenario.topology.kind));
    }
    CompareRow r;
    r.label = fmt::format("{} x {}", e.label.empty() ? e.scenario.name : e.label, e.nodes);
    if (e.own_workload) {
      r.label += fmt::format(" ({})", e.workload->name);
    }
    r.scenario = e.scenario.name;
    r.workload = e.workload->name;
    r.job = job;
    ValidateOptions opt;
    opt.engine = EngineChoice(engine, e.scenario);
    opt.threads = threads;
    r.timing = run_workload(e.scenario, *e.workload, job, registry, opt);
    r.price = e.price;
    r.dominant = dominant_phase(r.timing, job);
    rows.push_back(std::move(r));
  }
  return rows;
}

} // namespace collsim::analysis
