// Calibration's parameters: which scenario values can be fitted, where they live, their bounds, and
// the fitted scenario as YAML (calibrate.hpp; the fit itself is in calibrate.cpp).

#include "collsim/analysis/calibrate.hpp"
#include "collsim/analysis/health.hpp"

#include "collsim/core/errors.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <functional>

namespace collsim::analysis {
namespace {

using Unit = FitParameter::Unit;

/// A fittable value of a scenario: its YAML path, the topology kind it belongs to ("" for any),
/// its unit, where it lives, and its bounds relative to the starting value v: a bandwidth in
/// [v/100, v] (never above its nominal rate), a latency or factor in [v/100, 100 v], an
/// efficiency factor in [v/100, 1]. A latency that starts at 0 (nccl.call_overhead) starts at
/// `zero_start` instead, within [zero_start/100, 1000 zero_start]: a value of its usual order,
/// since calibration judges there whether the rows can determine it (calibrate.cpp).
struct Accessor {
  const char* path;
  const char* kind;
  Unit unit;
  std::function<double&(core::Scenario&)> ref;
  bool at_most_one = false;
  double zero_start = 0.0;
};

const std::vector<Accessor>& accessors() {
  using S = core::Scenario;
  static const std::vector<Accessor> all{
      {"topology.latency", "uniform", Unit::seconds,
       [](S& s) -> double& { return s.topology.uniform.latency.value; }},
      {"topology.bandwidth", "uniform", Unit::bandwidth,
       [](S& s) -> double& { return s.topology.uniform.bandwidth.bytes_per_second; }},
      {"topology.reduce_bandwidth", "uniform", Unit::bandwidth,
       [](S& s) -> double& { return s.topology.uniform.reduce_bandwidth.bytes_per_second; }},
      {"topology.intra_latency", "cluster", Unit::seconds,
       [](S& s) -> double& { return s.topology.cluster.intra_latency.value; }},
      {"topology.intra_bandwidth", "cluster", Unit::bandwidth,
       [](S& s) -> double& { return s.topology.cluster.intra_bandwidth.bytes_per_second; }},
      {"topology.nic_latency", "cluster", Unit::seconds,
       [](S& s) -> double& { return s.topology.cluster.nic_latency.value; }},
      {"topology.nic_bandwidth", "cluster", Unit::bandwidth,
       [](S& s) -> double& { return s.topology.cluster.nic_bandwidth.bytes_per_second; }},
      {"topology.switch_latency", "cluster", Unit::seconds,
       [](S& s) -> double& { return s.topology.cluster.switch_latency.value; }},
      {"topology.reduce_bandwidth", "cluster", Unit::bandwidth,
       [](S& s) -> double& { return s.topology.cluster.reduce_bandwidth.bytes_per_second; }},
      {"topology.node.nvlink.link_bandwidth", "system", Unit::bandwidth,
       [](S& s) -> double& {
         return s.topology.system.node.nvlink.link_bandwidth.bytes_per_second;
       }},
      {"topology.node.nvlink.latency", "system", Unit::seconds,
       [](S& s) -> double& { return s.topology.system.node.nvlink.latency.value; }},
      {"topology.node.pcie.bandwidth", "system", Unit::bandwidth,
       [](S& s) -> double& { return s.topology.system.node.pcie.bandwidth.bytes_per_second; }},
      {"topology.node.pcie.latency", "system", Unit::seconds,
       [](S& s) -> double& { return s.topology.system.node.pcie.latency.value; }},
      {"topology.node.nic_bandwidth", "system", Unit::bandwidth,
       [](S& s) -> double& { return s.topology.system.node.nic_bandwidth.bytes_per_second; }},
      {"topology.node.nic_latency", "system", Unit::seconds,
       [](S& s) -> double& { return s.topology.system.node.nic_latency.value; }},
      {"topology.node.reduce_bandwidth", "system", Unit::bandwidth,
       [](S& s) -> double& { return s.topology.system.node.reduce_bandwidth.bytes_per_second; }},
      {"topology.node.cpu.memory_bandwidth", "system", Unit::bandwidth,
       [](S& s) -> double& {
         return s.topology.system.node.cpu.memory_bandwidth.bytes_per_second;
       }},
      {"topology.node.cpu.memory_latency", "system", Unit::seconds,
       [](S& s) -> double& { return s.topology.system.node.cpu.memory_latency.value; }},
      {"topology.node.cpu.inter_socket_bandwidth", "system", Unit::bandwidth,
       [](S& s) -> double& {
         return s.topology.system.node.cpu.inter_socket_bandwidth.bytes_per_second;
       }},
      {"topology.network.link_latency", "system", Unit::seconds,
       [](S& s) -> double& { return s.topology.system.network.link_latency.value; }},
      {"topology.network.switch_latency", "system", Unit::seconds,
       [](S& s) -> double& { return s.topology.system.network.switch_latency.value; }},
      {"topology.overhead", "", Unit::seconds,
       [](S& s) -> double& { return s.topology.endpoint.overhead.value; }},
      {"topology.gap", "", Unit::seconds,
       [](S& s) -> double& { return s.topology.endpoint.gap.value; }, false, 1e-8},
      {"nccl.call_overhead", "", Unit::seconds,
       // 5 us: the order of a collective call's host cost (a CUDA kernel launch takes a few
       // microseconds of CPU time, NCCL's enqueue adds to it).
       [](S& s) -> double& { return s.nccl.call_overhead.value; }, false, 5e-6},
      {"nccl.ll.latency_factor", "", Unit::factor,
       [](S& s) -> double& { return s.nccl.ll.latency_factor; }},
      {"nccl.ll.efficiency_factor", "", Unit::factor,
       [](S& s) -> double& { return s.nccl.ll.efficiency_factor; }, true},
      {"nccl.ll128.latency_factor", "", Unit::factor,
       [](S& s) -> double& { return s.nccl.ll128.latency_factor; }},
      {"nccl.ll128.efficiency_factor", "", Unit::factor,
       [](S& s) -> double& { return s.nccl.ll128.efficiency_factor; }, true},
      {"nccl.simple.latency_factor", "", Unit::factor,
       [](S& s) -> double& { return s.nccl.simple.latency_factor; }},
      {"nccl.simple.efficiency_factor", "", Unit::factor,
       [](S& s) -> double& { return s.nccl.simple.efficiency_factor; }, true},
  };
  return all;
}

const Accessor& accessor(const std::string& path, const std::string& kind) {
  for (const Accessor& a : accessors()) {
    if (a.path == path && (std::string_view(a.kind).empty() || a.kind == kind)) {
      return a;
    }
  }
  std::vector<std::string> valid;
  for (const Accessor& a : accessors()) {
    if (std::string_view(a.kind).empty() || a.kind == kind) {
      valid.emplace_back(a.path);
    }
  }
  throw core::UsageError(fmt::format(
      "cannot fit '{}' on a {} topology; the parameters calibration can fit there are: {}", path,
      kind, fmt::join(valid, ", ")));
}

} // namespace

std::vector<std::string> fittable_parameters() {
  std::vector<std::string> out;
  for (const Accessor& a : accessors()) {
    if (std::find(out.begin(), out.end(), a.path) == out.end()) {
      out.emplace_back(a.path);
    }
  }
  return out;
}

double get_parameter(const core::Scenario& scenario, const std::string& path) {
  // The accessors hand out references for writing; this one only reads through it.
  return accessor(path, scenario.topology.kind).ref(const_cast<core::Scenario&>(scenario));
}

FitParameter::Unit parameter_unit(const core::Scenario& scenario, const std::string& path) {
  return accessor(path, scenario.topology.kind).unit;
}

void set_parameter(core::Scenario& scenario, const std::string& path, double value) {
  accessor(path, scenario.topology.kind).ref(scenario) = value;
}

namespace {

std::vector<std::string> default_link_parameters(const core::TopologySpec& t) {
  if (t.kind == "uniform") {
    std::vector<std::string> p{"topology.latency", "topology.bandwidth"};
    if (t.uniform.reduce_bandwidth.bytes_per_second > 0) {
      p.emplace_back("topology.reduce_bandwidth");
    }
    return p;
  }
  if (t.kind == "cluster") {
    std::vector<std::string> p{"topology.intra_latency", "topology.intra_bandwidth",
                               "topology.nic_latency", "topology.nic_bandwidth"};
    if (t.cluster.reduce_bandwidth.bytes_per_second > 0) {
      p.emplace_back("topology.reduce_bandwidth");
    }
    return p;
  }
  const core::NodeSpec& n = t.system.node;
  std::vector<std::string> p;
  if (n.gpus > 0) {
    if (n.nvlink.kind != "none") {
      p.emplace_back("topology.node.nvlink.latency");
      p.emplace_back("topology.node.nvlink.link_bandwidth");
    } else if (n.pcie.bandwidth.bytes_per_second > 0) {
      p.emplace_back("topology.node.pcie.latency");
      p.emplace_back("topology.node.pcie.bandwidth");
    }
  } else {
    p.emplace_back("topology.node.cpu.memory_latency");
    p.emplace_back("topology.node.cpu.memory_bandwidth");
    p.emplace_back("topology.overhead");
  }
  p.emplace_back("topology.node.nic_latency");
  p.emplace_back("topology.node.nic_bandwidth");
  if (n.reduce_bandwidth.bytes_per_second > 0) {
    p.emplace_back("topology.node.reduce_bandwidth");
  }
  return p;
}

} // namespace

std::vector<std::string> default_fit_parameters(const core::TopologySpec& t, bool nccl) {
  std::vector<std::string> p = default_link_parameters(t);
  if (nccl) {
    for (const char* extra :
         {"nccl.call_overhead", "nccl.ll.latency_factor", "nccl.ll128.latency_factor",
          "nccl.simple.latency_factor", "nccl.ll.efficiency_factor", "nccl.ll128.efficiency_factor",
          "nccl.simple.efficiency_factor"}) {
      p.emplace_back(extra);
    }
  }
  return p;
}

FitParameter fit_parameter(const core::Scenario& scenario, const std::string& path) {
  const Accessor& a = accessor(path, scenario.topology.kind);
  const double v = a.ref(const_cast<core::Scenario&>(scenario)); // read only
  if (!(v > 0.0) && a.zero_start == 0.0) {
    throw core::UsageError(fmt::format(
        "cannot fit '{}': the scenario leaves it at 0 (derived or free); give it a value first",
        path));
  }
  FitParameter f;
  f.path = path;
  f.unit = a.unit;
  f.initial = v;
  const double start = v > 0.0 ? v : a.zero_start;
  f.value = start;
  // A bandwidth can be below its nominal rate (protocol and software overheads), not above it;
  // an efficiency cannot exceed 1.
  f.lower = start / 100.0;
  f.upper = a.unit == Unit::bandwidth ? start
            : a.at_most_one           ? 1.0
            : v > 0.0                 ? start * 100.0
                                      : start * 1000.0;
  return f;
}

std::string format_fit_value(FitParameter::Unit unit, double value) {
  switch (unit) {
  case Unit::bandwidth: return fmt::format("{:.6g} GB/s", value / 1e9);
  case Unit::seconds: return fmt::format("{:.6g} us", value * 1e6);
  case Unit::factor: return fmt::format("{:.6g}", value);
  }
  return fmt::format("{:.6g}", value);
}

std::string calibrated_yaml(const CalibrationResult& r, const std::string& base,
                            const std::string& name) {
  const std::string loss =
      r.loss == FitLoss::squared
          ? std::string("squared loss")
          : fmt::format("{} loss, scale {:g}", to_string(r.loss), r.loss_scale);
  std::string out = fmt::format(
      "# Calibrated by collsim calibrate on {} measured points ({} iterations, {}): median "
      "|error| {:.1f} % before, {:.1f} % after;\n# 90th percentile {:.1f} % before, {:.1f} % "
      "after.\n",
      r.points, r.iterations, loss, r.before.all.median_abs_err_pct, r.after.all.median_abs_err_pct,
      r.before.all.p90_abs_err_pct, r.after.all.p90_abs_err_pct);
  if (r.holdout_after) {
    out += fmt::format("# Held-out logs: median |error| {:.1f} % before, {:.1f} % after.\n",
                       r.holdout_before->all.median_abs_err_pct,
                       r.holdout_after->all.median_abs_err_pct);
  }
  out += fmt::format("name: {}\nbase: {}\n", name, base);
  // The fitted values as nested maps under their paths (paths share prefixes: keep them grouped).
  // Paths sharing a prefix must be written together (a YAML map cannot repeat a key): order them
  // as a tree walk, each level's keys in the order they first appear.
  const auto first_use = [&](const std::string& prefix) {
    for (std::size_t i = 0; i < r.parameters.size(); ++i) {
      if (r.parameters[i].path.starts_with(prefix)) {
        return i;
      }
    }
    return r.parameters.size();
  };
  const auto tree_key = [&](const FitParameter* f) {
    std::vector<std::size_t> key;
    for (std::size_t dot = f->path.find('.'); dot != std::string::npos;
         dot = f->path.find('.', dot + 1)) {
      key.push_back(first_use(f->path.substr(0, dot + 1)));
    }
    key.push_back(first_use(f->path));
    return key;
  };
  std::vector<const FitParameter*> order;
  for (const FitParameter& f : r.parameters) {
    order.push_back(&f);
  }
  std::stable_sort(order.begin(), order.end(), [&](const FitParameter* a, const FitParameter* b) {
    return tree_key(a) < tree_key(b);
  });
  std::vector<std::string> open;
  for (const FitParameter* fp : order) {
    const FitParameter& f = *fp;
    std::vector<std::string> parts;
    std::size_t start = 0;
    for (std::size_t dot = f.path.find('.'); dot != std::string::npos;
         dot = f.path.find('.', start)) {
      parts.push_back(f.path.substr(start, dot - start));
      start = dot + 1;
    }
    const std::string key = f.path.substr(start);
    std::size_t common = 0;
    while (common < open.size() && common < parts.size() && open[common] == parts[common]) {
      ++common;
    }
    open.resize(common);
    for (std::size_t i = common; i < parts.size(); ++i) {
      out += fmt::format("{:{}}{}:\n", "", 2 * i, parts[i]);
      open.push_back(parts[i]);
    }
    const std::string value = format_fit_value(f.unit, f.value);
    const std::string was = format_fit_value(f.unit, f.initial);
    const std::string sigma = std::isfinite(f.rel_sigma)
                                  ? fmt::format("+/- {:.1f} %", 100.0 * f.rel_sigma)
                                  : std::string("not determined by these logs");
    out += fmt::format("{:{}}{}: {}   # fitted {}, was {}\n", "", 2 * parts.size(), key, value,
                       sigma, was);
  }
  // The measured accuracy `collsim check` takes its band from: every row the fitted scenario was
  // measured against, fitted and held out (held-out rows alone say how well it predicts; the
  // comments above give them).
  const std::size_t held = r.holdout_after ? r.holdout_after->all.points : 0;
  out += accuracy_yaml(r.measured,
                       fmt::format("{} rows of the calibration logs ({} fitted, {} held out)",
                                   r.measured.all.points, r.measured.all.points - held, held));
  return out;
}

} // namespace collsim::analysis
