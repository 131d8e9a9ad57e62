#include "collsim/analysis/what_if.hpp"

#include "collsim/core/errors.hpp"
#include "collsim/topologies/build.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <utility>

namespace collsim::analysis {
namespace {

using Unit = FitParameter::Unit;

/// People's names for the knobs' YAML paths.
constexpr std::array<std::pair<std::string_view, std::string_view>, 14> kLabels{{
    {"topology.latency", "link latency"},
    {"topology.bandwidth", "link bandwidth"},
    {"topology.intra_latency", "intra-node latency"},
    {"topology.intra_bandwidth", "intra-node bandwidth"},
    {"topology.nic_latency", "NIC latency"},
    {"topology.nic_bandwidth", "NIC bandwidth"},
    {"topology.node.nvlink.latency", "NVLink latency"},
    {"topology.node.nvlink.link_bandwidth", "NVLink bandwidth per link"},
    {"topology.node.pcie.latency", "PCIe latency"},
    {"topology.node.pcie.bandwidth", "PCIe bandwidth"},
    {"topology.node.cpu.memory_latency", "memory latency"},
    {"topology.node.cpu.memory_bandwidth", "memory bandwidth per socket"},
    {"topology.node.nic_latency", "NIC latency"},
    {"topology.node.nic_bandwidth", "NIC bandwidth"},
}};

std::string label_of(const std::string& path) {
  for (const auto& [p, label] : kLabels) {
    if (p == path) {
      return std::string(label);
    }
  }
  if (path == "topology.overhead") {
    return "LogGP overhead o";
  }
  return path;
}

bool is_reduce_rate(const std::string& path) {
  return path.ends_with("reduce_bandwidth");
}

std::uint32_t slots_per_node(const core::NodeSpec& n) {
  return n.gpus > 0 ? n.gpus : n.cpu.sockets * n.cpu.cores_per_socket;
}

} // namespace

std::vector<WhatIfKnob> what_if_knobs(const core::Scenario& scenario) {
  std::vector<WhatIfKnob> out;
  for (const std::string& path : default_fit_parameters(scenario.topology, false)) {
    if (is_reduce_rate(path)) {
      continue;
    }
    const Unit unit = parameter_unit(scenario, path);
    if (unit == Unit::factor) {
      continue;
    }
    out.push_back({path, label_of(path), unit, get_parameter(scenario, path)});
  }
  return out;
}

WhatIfShape what_if_shape(const core::Scenario& scenario) {
  const core::TopologySpec& t = scenario.topology;
  WhatIfShape s;
  if (t.kind == "cluster") {
    s.nodes = t.cluster.nodes;
    s.ranks_per_node = t.cluster.devices_per_node;
  } else if (t.kind == "system") {
    s.nodes = t.system.nodes;
    s.ranks_per_node = t.system.placement.ranks_per_node;
    s.max_ranks_per_node = slots_per_node(t.system.node);
  }
  return s;
}

core::Scenario apply_what_if(const core::Scenario& scenario, const WhatIf& what_if) {
  core::Scenario out = scenario;
  for (const auto& [path, value] : what_if.values) {
    // parameter_unit throws UsageError with the valid paths for one the topology does not have.
    const Unit unit = parameter_unit(scenario, path);
    if (!std::isfinite(value)) {
      throw core::UsageError(fmt::format("what-if: {} must be a finite number", path));
    }
    if (unit == Unit::bandwidth && !(value > 0.0)) {
      throw core::UsageError(
          fmt::format("what-if: {} must be a positive bandwidth, got {} GB/s", path, value / 1e9));
    }
    if (unit != Unit::bandwidth && value < 0.0) {
      throw core::UsageError(fmt::format("what-if: {} cannot be negative, got {}", path,
                                         format_fit_value(unit, value)));
    }
    set_parameter(out, path, value);
  }
  core::TopologySpec& t = out.topology;
  if ((what_if.nodes || what_if.ranks_per_node) && t.kind != "cluster" && t.kind != "system") {
    throw core::UsageError(fmt::format(
        "what-if: a {} topology has no nodes; node count and ranks per node apply to cluster and "
        "system topologies",
        t.kind));
  }
  if (t.kind == "cluster") {
    if (what_if.nodes) {
      t.cluster.nodes = *what_if.nodes;
    }
    if (what_if.ranks_per_node) {
      if (*what_if.ranks_per_node == 0) {
        throw core::UsageError("what-if: a cluster node needs at least 1 rank (devices_per_node)");
      }
      t.cluster.devices_per_node = *what_if.ranks_per_node;
    }
  } else if (t.kind == "system") {
    if (what_if.nodes) {
      t.system.nodes = *what_if.nodes;
    }
    if (what_if.ranks_per_node) {
      const std::uint32_t slots = slots_per_node(t.system.node);
      if (*what_if.ranks_per_node > slots) {
        throw core::UsageError(fmt::format("what-if: {} ranks per node, but a node has {} {}",
                                           *what_if.ranks_per_node, slots,
                                           t.system.node.gpus > 0 ? "GPUs" : "cores"));
      }
      t.system.placement.ranks_per_node = *what_if.ranks_per_node;
    }
    topologies::validate(t);
  }
  return out;
}

std::string_view what_if_display_unit(FitParameter::Unit unit) {
  switch (unit) {
  case Unit::bandwidth: return "GB/s";
  case Unit::seconds: return "us";
  case Unit::factor: return "";
  }
  return "";
}

double to_display(FitParameter::Unit unit, double value) {
  switch (unit) {
  case Unit::bandwidth: return value / 1e9;
  case Unit::seconds: return value * 1e6;
  case Unit::factor: return value;
  }
  return value;
}

double from_display(FitParameter::Unit unit, double shown) {
  switch (unit) {
  case Unit::bandwidth: return shown * 1e9;
  case Unit::seconds: return shown / 1e6;
  case Unit::factor: return shown;
  }
  return shown;
}

} // namespace collsim::analysis
