#pragma once
// Topology builders: a TopologySpec (plain values from the scenario) becomes a core::Topology.

#include "collsim/core/scenario.hpp"
#include "collsim/core/topology.hpp"

#include <string>
#include <vector>

namespace collsim::topologies {

/// The builder kinds collsim knows, for messages and `collsim --help`.
std::vector<std::string> builder_kinds();

/// Builds the topology for a study with `ranks` ranks, mapped block-wise (rank i on device i).
/// Throws core::UsageError when the topology cannot host `ranks` ranks, core::UnknownNameError for
/// an unknown kind.
core::Topology build(const core::TopologySpec& spec, std::uint32_t ranks);

/// The textbook model: every pair of ranks joined by its own link.
core::Topology build_uniform(const core::UniformSpec& u, const core::EndpointSpec& e,
                             std::uint32_t ranks);
/// N nodes x G devices, a switch per node, NICs to one non-blocking network switch.
core::Topology build_cluster(const core::ClusterSpec& c, const core::EndpointSpec& e,
                             std::uint32_t ranks);
/// Real systems: GPU or CPU nodes (NVLink, NVSwitch, PCIe tree, sockets and NUMA domains, NICs)
/// joined by a network (switch, fat-tree, DragonFly, DragonFly+, torus), ranks placed by
/// spec.system.placement.
core::Topology build_system(const core::TopologySpec& spec, std::uint32_t ranks);
/// The checks between values of a topology that the loader cannot make key by key (a rankfile
/// naming a node the system does not have, a network too small for the nodes' NICs); throws
/// core::ScenarioError at the offending value. io::load_scenario calls it.
void validate(const core::TopologySpec& spec);
/// How many ranks the topology can host (0: as many as asked, nodes are added on demand).
std::uint64_t rank_capacity(const core::TopologySpec& spec);

/// The memory bandwidth one core of `cpu` reaches alone: cpu.core_bandwidth where set, else
/// Little's law, 24 cache lines of 64 B in flight over cpu.memory_latency [unverified: server
/// cores sustain 12-20 outstanding L1 misses plus their L2 prefetches; 24 lines over 100 ns is
/// 15.4 GB/s]; never more than its NUMA domain's. A core copies at half of it (one read, one
/// write) and reduces at a third (two reads, one write): a host process staging GPU buffers
/// (stacks/host_staging.hpp) and an MPI library's CPU ranks (stacks/mpi_paths.hpp).
core::Bandwidth core_memory_bandwidth(const core::CpuSpec& cpu);

} // namespace collsim::topologies
