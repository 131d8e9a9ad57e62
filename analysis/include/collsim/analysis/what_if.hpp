#pragma once
// What-if studies: change a scenario's link rates and latencies, node count and ranks per node,
// and run the same study again (collsim-gui's what-if controls). The knobs are the parameters
// calibration fits (calibrate.hpp: default_fit_parameters, get_parameter, set_parameter), so a
// knob, a calibrated scenario and a YAML path all name the same value.

#include "collsim/analysis/calibrate.hpp"
#include "collsim/core/scenario.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace collsim::analysis {

/// One value a what-if study may change.
struct WhatIfKnob {
  std::string path;  ///< scenario YAML path: "topology.node.nic_bandwidth"
  std::string label; ///< what people call it: "NIC bandwidth"
  FitParameter::Unit unit = FitParameter::Unit::bandwidth; ///< bandwidth or seconds
  double value = 0.0; ///< the scenario's value, in bytes/s or seconds
  bool operator==(const WhatIfKnob&) const = default;
};

/// The link bandwidths and latencies of the levels the scenario's ranks use (per topology kind:
/// uniform: the link; cluster: intra-node and NIC; system: NVLink or PCIe inside a GPU node, or
/// the memory path and LogGP o on CPU nodes, and the NIC), latency before bandwidth per level.
/// The reduction rate is not a knob.
std::vector<WhatIfKnob> what_if_knobs(const core::Scenario& scenario);

/// The node count and ranks per node of a scenario, where its topology kind has them.
struct WhatIfShape {
  /// cluster: ClusterSpec::nodes; system: SystemSpec::nodes (0: as many as a study needs);
  /// nullopt on a uniform topology, which has no nodes.
  std::optional<std::uint32_t> nodes;
  /// cluster: ClusterSpec::devices_per_node; system: PlacementSpec::ranks_per_node (0: every
  /// slot); nullopt on a uniform topology.
  std::optional<std::uint32_t> ranks_per_node;
  /// The most ranks a node can host (cluster: unbounded, 0; system: GPUs, or cores on CPU
  /// nodes); 0 when there is no bound.
  std::uint32_t max_ranks_per_node = 0;
  bool operator==(const WhatIfShape&) const = default;
};
WhatIfShape what_if_shape(const core::Scenario& scenario);

/// Changes to a scenario: knob values by path (bytes/s or seconds) and the node shape.
struct WhatIf {
  std::map<std::string, double> values;
  std::optional<std::uint32_t> nodes;
  std::optional<std::uint32_t> ranks_per_node;
  bool operator==(const WhatIf&) const = default;
};

/// The scenario with `what_if` applied. Throws UsageError for a path the scenario's topology kind
/// does not have (with the valid paths), a bandwidth that is not positive or a latency that is
/// negative (or either not finite), nodes or ranks per node on a uniform topology, and ranks per
/// node of 0 on a cluster or above what a system's node can host; ScenarioError when the changed
/// topology is inconsistent (topologies::validate: a network too small for the nodes).
core::Scenario apply_what_if(const core::Scenario& scenario, const WhatIf& what_if);

/// What a knob shows: GB/s (1e9 bytes/s) for bandwidths, us for seconds.
std::string_view what_if_display_unit(FitParameter::Unit unit);
/// A value in the scenario's units (bytes/s, seconds) in display units (GB/s, us), and back.
double to_display(FitParameter::Unit unit, double value);
double from_display(FitParameter::Unit unit, double shown);

} // namespace collsim::analysis
