#pragma once
// One workload's step on several machines (issue 19; docs/workload-format.md, "Comparing
// machines"): what `collsim compare` prints and the GUI's Compare tab shows.

#include "collsim/analysis/workload.hpp"

#include <optional>
#include <string>
#include <vector>

namespace collsim::analysis {

/// One machine: a scenario (or a variant of one), its node count, its workload and its price.
struct CompareEntry {
  std::string label; ///< empty: the scenario's name
  core::Scenario scenario;
  std::uint32_t nodes = 1;
  const core::Workload* workload = nullptr; ///< must outlive compare_machines
  bool own_workload = false;                ///< it names its own workload (shown in the label)
  std::optional<double> price;              ///< per node-hour
};

struct CompareRow {
  std::string label;    ///< "dgx-h100 x 64"
  std::string scenario; ///< its name
  std::string workload; ///< its name
  WorkloadJob job;
  WorkloadTiming timing;
  std::optional<double> price;
  std::string dominant; ///< the phase with the most communication, inside or across nodes

  /// Hours for `steps` steps, and their cost (hours x nodes x price) when priced.
  [[nodiscard]] double hours(std::uint64_t steps) const;
  [[nodiscard]] std::optional<double> cost(std::uint64_t steps) const;
};

/// Times the workload of every entry on its machine (run_workload). UsageError for a scenario
/// without nodes (uniform topologies) and whatever run_workload refuses.
std::vector<CompareRow> compare_machines(const std::vector<CompareEntry>& entries,
                                         const algorithms::Registry& registry,
                                         const std::string& engine, std::uint32_t threads);

} // namespace collsim::analysis
