#pragma once
// What the MPI stack tests share: CPU nodes on one switch, GPU nodes on PCIe, and a schedule
// generated, lowered by a named stack and timed on loggp.

#include "collsim/algorithms/registry.hpp"
#include "collsim/core/scenario.hpp"
#include "collsim/engines/loggp.hpp"
#include "collsim/stacks/stack.hpp"
#include "collsim/topologies/build.hpp"

#include <cstdint>

namespace collsim::testing {

/// `nodes` CPU nodes of `cores` cores (one socket, one NUMA domain), one 100 Gb/s NIC each.
inline core::TopologySpec cpu_nodes(std::uint32_t nodes, std::uint32_t cores) {
  core::TopologySpec spec;
  spec.kind = "system";
  spec.system.nodes = nodes;
  spec.system.node.cpu.sockets = 1;
  spec.system.node.cpu.numa_per_socket = 1;
  spec.system.node.cpu.cores_per_socket = cores;
  spec.system.node.cpu.memory_bandwidth = core::Bandwidth{60e9};
  spec.system.node.cpu.memory_latency = core::Seconds{0.1e-6};
  spec.system.node.nics = 1;
  spec.system.node.nic_bandwidth = core::Bandwidth{12.5e9};
  spec.endpoint.overhead = core::Seconds{0.5e-6};
  return spec;
}

/// One CPU core's memory bandwidth in gpu_nodes, B/s.
inline constexpr double kCoreBandwidth = 20e9;

/// `nodes` nodes of `gpus` GPUs on PCIe Gen4 x16 to one socket (no NVLink, no switch).
inline core::TopologySpec gpu_nodes(std::uint32_t nodes, std::uint32_t gpus) {
  core::TopologySpec spec;
  spec.kind = "system";
  spec.system.nodes = nodes;
  spec.system.node.gpus = gpus;
  spec.system.node.reduce_bandwidth = core::Bandwidth{500e9};
  spec.system.node.cpu.core_bandwidth = core::Bandwidth{kCoreBandwidth};
  return spec;
}

/// A schedule lowered by a stack and its loggp time.
struct Lowered {
  core::Schedule schedule;
  double time = 0.0;
};

/// `algorithm` of collective `c` on `p` ranks of `spec`, `n` bytes, lowered by `stack` (its
/// buffers `buffers`, the scenario's `mpi:` section `mpi`) and run on loggp.
inline Lowered lower(const char* stack, core::CollectiveKind c, const char* algorithm,
                     std::uint32_t p, std::uint64_t n, const core::TopologySpec& spec,
                     stacks::Buffers buffers = stacks::Buffers::device,
                     const core::MpiSpec* mpi = nullptr) {
  const auto registry = algorithms::make_default_registry();
  const auto& algo = registry.find(c, algorithm);
  const auto topo = topologies::build(spec, p);
  algorithms::Request req;
  req.collective = c;
  req.ranks = p;
  req.bytes = core::Bytes{n};
  req.topology = &topo;
  const auto all = stacks::default_stacks();
  stacks::LowerContext ctx{topo, {}, algo, &spec};
  ctx.buffers = buffers;
  ctx.mpi = mpi;
  Lowered out;
  out.schedule = stacks::lower(all, registry.generate(algo, req), ctx, stack);
  out.time = engines::LogGPEngine().run(out.schedule, topo, {}).time.value;
  return out;
}

} // namespace collsim::testing
