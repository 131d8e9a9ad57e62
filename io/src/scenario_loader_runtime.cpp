// The scenario sections that say how the libraries and engines run: `simgrid`, `nccl`, `mpi`
// and `accuracy` (docs/scenario-format.md).

#include "scenario_loader_parts.hpp"

#include "collsim/algorithms/nccl_release.hpp"
#include "collsim/io/percent.hpp"

#include <cmath>

namespace collsim::io::scenario_detail {

core::AccuracySpec Loader::accuracy(const Field& section) const {
  const Located& at = section.value;
  if (!at.node.IsMap()) {
    fail(at, fmt::format("expected a map, got {}", describe(at.node)));
  }
  core::AccuracySpec out;
  out.pos = section.key_pos;
  for (const auto& f : read_map(at, kAccuracyKeys, {}).fields) {
    if (f.key == "measured_on") {
      out.measured_on = scalar(f.value, "which rows were measured, in words");
    } else {
      (f.key == "below_1MiB" ? out.below_1MiB : out.from_1MiB) = accuracy_range(f.value);
    }
  }
  return out;
}

core::AccuracyRange Loader::accuracy_range(const Located& at) const {
  if (!at.node.IsMap()) {
    fail(at, fmt::format("expected a map with keys {}, got {}", fmt::join(kAccuracyRangeKeys, ", "),
                         describe(at.node)));
  }
  core::AccuracyRange out;
  for (const auto& f : read_map(at, kAccuracyRangeKeys, kAccuracyRangeKeys).fields) {
    if (f.key == "rows") {
      out.rows = count(f.value);
    } else {
      (f.key == "median"   ? out.median_pct
       : f.key == "p90"    ? out.p90_pct
       : f.key == "slower" ? out.slower_pct
                           : out.faster_pct) = percent(f.value);
    }
  }
  // The largest |error| is the larger extreme: nothing lies above it.
  const double largest = std::max(out.slower_pct, out.faster_pct);
  if (out.median_pct > out.p90_pct || out.p90_pct > largest) {
    fail(at, fmt::format("expected median <= p90 <= the larger of slower and faster, got "
                         "median {:g} %, p90 {:g} %, slower {:g} %, faster {:g} %",
                         out.median_pct, out.p90_pct, out.slower_pct, out.faster_pct));
  }
  return out;
}

double Loader::percent(const Located& at) {
  const auto value = parse_percent(scalar(at, "a percentage like '7.4 %'"));
  if (!value) {
    fail(at, fmt::format("expected a percentage like '7.4 %', got '{}'", at.node.Scalar()));
  }
  return *value;
}

core::SimgridSpec Loader::simgrid(const Located& at, core::SimgridSpec out) const {
  if (!at.node.IsMap()) {
    fail(at, fmt::format("expected a map, got {}", describe(at.node)));
  }
  const Fields fields = read_map(at, kSimgridKeys, {});
  for (const auto& f : fields.fields) {
    const Located& v = f.value;
    if (f.key == "network_model") {
      out.network_model = one_of(v, "SimGrid network model", "a network model", kSimgridModels);
    } else if (f.key == "tcp_gamma") {
      const auto parsed = core::parse_bytes(scalar(v, "a size like '4 MiB' (0: no bound)"));
      if (!parsed.ok()) {
        fail(v, parsed.error);
      }
      out.tcp_gamma = static_cast<double>(parsed.value.value);
    } else if (f.key == "latency_factor") {
      out.latency_factor = factor(v);
    } else if (f.key == "bandwidth_factor") {
      out.bandwidth_factor = factor(v);
    } else if (f.key == "weight_s") {
      out.weight_s = real(v, "a number of at least 0", 0.0, false);
    } else if (f.key == "crosstraffic") {
      out.crosstraffic = boolean(v);
    } else if (f.key == "send_port") {
      out.send_port = one_of(v, "send port", "serial or shared", kSendPorts);
    }
  }
  return out;
}

core::NcclSpec Loader::nccl(const Located& at, core::NcclSpec out) const {
  if (!at.node.IsMap()) {
    fail(at, fmt::format("expected a map, got {}", describe(at.node)));
  }
  const Fields fields = read_map(at, kNcclKeys, {});
  for (const auto& f : fields.fields) {
    if (f.key == "call_overhead") {
      out.call_overhead = seconds(f.value);
    } else if (f.key == "net_latency") {
      out.net_latency = seconds(f.value);
    } else if (f.key == "net_step") {
      out.net_step = seconds(f.value);
    } else if (f.key == "net_step_simple") {
      out.net_step_simple = seconds(f.value);
    } else if (f.key == "group_launch") {
      out.group_launch = seconds(f.value);
    } else if (f.key == "env") {
      nccl_env(f.value, out);
    } else if (f.key == "version") {
      out.version = scalar(f.value, "an NCCL release such as 2.19.3");
      out.version_pos = f.value.pos;
      if (!algorithms::nccl::parse_release(out.version)) {
        fail(f.value, fmt::format("'{}' is not an NCCL release (expected 2.MINOR.PATCH such as "
                                  "2.19.3, or a version code such as 21903)",
                                  out.version));
      }
    } else {
      core::NcclProtocolSpec& p = f.key == "ll"      ? out.ll
                                  : f.key == "ll128" ? out.ll128
                                                     : out.simple;
      p = nccl_protocol(f.value, p);
    }
  }
  return out;
}

core::MpiSpec Loader::mpi(const Located& at, core::MpiSpec out) const {
  if (!at.node.IsMap()) {
    fail(at, fmt::format("expected a map, got {}", describe(at.node)));
  }
  const Fields fields = read_map(at, kMpiKeys, {});
  for (const auto& f : fields.fields) {
    if (f.key == "call_overhead") {
      out.call_overhead = seconds(f.value);
    } else {
      // Environment variables of the MPI library and its transports; the stacks read them
      // (stacks/mpi_env.hpp) and report bad values at the positions kept here.
      for (const auto& v : read_map(f.value, {}, {}).fields) {
        // POSIX's portable names: letters, digits and underscores, not starting with a digit
        // (Open MPI's MCA variables have lower-case letters: OMPI_MCA_coll_tuned_...).
        const bool named = !v.key.empty() && (v.key.front() < '0' || v.key.front() > '9') &&
                           std::all_of(v.key.begin(), v.key.end(), [](char c) {
                             return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
                                    (c >= '0' && c <= '9') || c == '_';
                           });
        if (!named) {
          fail(v.key_pos, v.value.path,
               fmt::format("'{}' is not an environment variable name (such as UCX_TLS or "
                           "OMPI_MCA_coll_tuned_use_dynamic_rules)",
                           v.key));
        }
        out.env[v.key] = scalar(v.value, "a value such as 16k or rc,sm");
        out.env_pos[v.key] = v.value.pos;
      }
    }
  }
  return out;
}

void Loader::nccl_env(const Located& at, core::NcclSpec& out) const {
  const Fields fields = read_map(at, {}, {});
  for (const auto& f : fields.fields) {
    if (f.key.rfind("NCCL_", 0) != 0) {
      fail(f.key_pos, f.value.path,
           fmt::format("'{}' is not an NCCL environment variable (they start with NCCL_)", f.key));
    }
    out.env[f.key] = scalar(f.value, "a value such as Ring or 16");
    out.env_pos[f.key] = f.value.pos;
  }
}

core::NcclProtocolSpec Loader::nccl_protocol(const Located& at, core::NcclProtocolSpec out) const {
  if (!at.node.IsMap()) {
    fail(at, fmt::format("expected a map, got {}", describe(at.node)));
  }
  const Fields fields = read_map(at, kNcclProtocolKeys, {});
  for (const auto& f : fields.fields) {
    if (f.key == "latency_factor") {
      out.latency_factor = factor(f.value);
    } else {
      out.efficiency_factor = share(f.value);
    }
  }
  return out;
}

} // namespace collsim::io::scenario_detail
