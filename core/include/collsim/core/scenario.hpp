#pragma once
// A scenario as plain values (ARCHITECTURE.md, "Data flow"): what io::load_scenario produces and
// what topologies::build and the analysis layer consume. Source positions travel with the values
// so that later stages (a study asking for more ranks than the topology has) can still point at
// the user's file:line:column.

#include "collsim/core/collective.hpp"
#include "collsim/core/errors.hpp"
#include "collsim/core/units.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace collsim::core {

/// Parameters of the `uniform` builder: every pair of ranks joined by its own link.
struct UniformSpec {
  Seconds latency{2e-6};         ///< alpha, per message
  Bandwidth bandwidth{10e9};     ///< 1/beta
  Bandwidth reduce_bandwidth{0}; ///< 1/gamma (0 = reductions are free)
  bool operator==(const UniformSpec&) const = default;
};

/// Parameters of the `cluster` builder: N nodes x G devices; each device has a link to its node's
/// switch; each node has NICs joined to one non-blocking network switch.
struct ClusterSpec {
  std::uint32_t nodes = 0; ///< 0: as many as the study's ranks need
  std::uint32_t devices_per_node = 1;
  Bandwidth intra_bandwidth{100e9}; ///< device <-> node switch, per direction
  Seconds intra_latency{1e-6};
  std::uint32_t nics_per_node = 1;
  Bandwidth nic_bandwidth{25e9}; ///< NIC <-> network switch, per direction
  Seconds nic_latency{1e-6};     ///< per NIC link (a route crosses two)
  Seconds switch_latency{0.0};   ///< added once per inter-node route, inside the switch
  Bandwidth reduce_bandwidth{0};
  /// In-network reduction: the node switch is an NVSwitch with NVLink SHARP (NVLS), and/or the
  /// network switch reduces (InfiniBand SHARP); switches reduce at switch_reduce_bandwidth
  /// (0 = as fast as data arrives).
  bool node_switch_reduces = false;
  bool network_switch_reduces = false;
  Bandwidth switch_reduce_bandwidth{0};
  bool operator==(const ClusterSpec&) const = default;
};

/// Endpoint parameters shared by every builder (LogGP o and g, local copy rate).
struct EndpointSpec {
  Seconds overhead{0.0};
  Seconds gap{0.0};
  Bandwidth copy_bandwidth{0};
  bool operator==(const EndpointSpec&) const = default;
};

struct TopologySpec {
  std::string kind = "uniform"; ///< "uniform" or "cluster"
  UniformSpec uniform;
  ClusterSpec cluster;
  EndpointSpec endpoint;
  SourcePos pos; ///< where the `topology` section starts
  bool operator==(const TopologySpec&) const = default;
};

/// A sweep of sizes and rank counts for one collective and some algorithms.
struct StudySpec {
  std::string name; ///< optional label
  CollectiveKind collective = CollectiveKind::allreduce;
  std::vector<std::string> algorithms;  ///< names or aliases, resolved by the registry
  std::vector<SourcePos> algorithm_pos; ///< position of each name
  std::vector<std::uint32_t> ranks;
  std::vector<Bytes> sizes;
  std::uint32_t root = 0;
  std::string engine = "loggp";
  /// Algorithm parameters as written (name -> "65536", "64 KiB" or a choice name); the registry
  /// resolves them per algorithm (algorithms::resolve_params).
  std::map<std::string, std::string> params;
  std::map<std::string, SourcePos> param_pos; ///< position of each parameter's value
  SourcePos pos;                              ///< the study's first line
  SourcePos ranks_pos;
  SourcePos sizes_pos;
  SourcePos engine_pos;
  bool operator==(const StudySpec&) const = default;
};

struct Scenario {
  std::string name;
  std::string description;
  std::string file; ///< the path it was loaded from (for messages)
  TopologySpec topology;
  std::vector<StudySpec> studies;
  bool operator==(const Scenario&) const = default;
};

} // namespace collsim::core
