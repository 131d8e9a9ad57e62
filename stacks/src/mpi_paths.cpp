#include "mpi_paths.hpp"

#include "nccl_model_constants.hpp"

#include "collsim/stacks/mpi_env.hpp"
#include "collsim/stacks/nccl_model.hpp"
#include "collsim/stacks/nccl_stack.hpp"

#include <fmt/format.h>

namespace collsim::stacks::detail {
namespace {

/// The data rates of a GPU node's links (mpi_paths.hpp): NVLink's or PCIe's inside
/// the node, the NIC kind's between nodes.
void link_rates(core::Protocol& p, const LowerContext& ctx, std::uint32_t ranks) {
  const NcclModelInputs in = ctx.topology_spec != nullptr
                                 ? nccl_inputs(*ctx.topology_spec, ctx.topology, ranks)
                                 : nccl_inputs(ctx.topology, ranks);
  p.intra_node_efficiency =
      in.nvlink ? nccl_detail::nvlink_scale(in.compute_capability) : nccl_detail::kPciScale;
  if (ctx.topology_spec != nullptr && ctx.topology_spec->kind == "system") {
    p.inter_node_efficiency = ctx.topology_spec->system.node.nic_efficiency;
  }
}

} // namespace

core::Schedule gpu_direct(core::Schedule s, const LowerContext& ctx) {
  if (ctx.buffers != Buffers::device || !on_gpus(s, ctx.topology) || s.ranks() < 2) {
    return s;
  }
  core::Protocol p = s.header().protocol;
  p.port_per_link = true;
  link_rates(p, ctx, s.ranks());
  s.set_protocol(p);
  return s;
}

core::Schedule host_protocols(core::Schedule s, const LowerContext& ctx) {
  const MpiEnv env = parse_mpi_env(ctx.mpi);
  core::Protocol p = s.header().protocol;
  p.rendezvous_bytes = env.rendezvous_bytes;
  p.launch = core::Seconds{p.launch.value + env.call_overhead.value};
  if (env.shared_memory == SharedMemoryCopies::two && p.intra_node_overhead.value < 0) {
    // Each byte copied twice by the cores, into the shared FIFO and out of it (mpi_env.hpp):
    // half the rate of the single copy a route inside the node prices. Not where the library
    // moves data in shared memory of its own (HCOLL's basesmuma, MPICH's release_gather).
    p.intra_node_efficiency *= 0.5;
  }
  s.set_protocol(p);
  return s;
}

core::Schedule over_ucx(core::Schedule s, const LowerContext& ctx) {
  if (ctx.buffers == Buffers::device && on_gpus(s, ctx.topology)) {
    return gpu_direct(std::move(s), ctx);
  }
  return host_protocols(std::move(s), ctx);
}

core::Schedule staged(const core::Schedule& s, const LowerContext& ctx, const HostCosts& costs) {
  core::Schedule out = stage_through_host(s, ctx.topology, costs);
  core::Protocol p = out.header().protocol;
  link_rates(p, ctx, s.ranks());
  p.intra_node_efficiency = nccl_detail::kPciScale; // the staging copies cross PCIe
  out.set_protocol(p);
  return out;
}

bool MpiStack::runs(const algorithms::AlgorithmInfo& algo) const {
  return !nccl_lowering_algo(algo).has_value();
}

std::string MpiStack::refusal(const algorithms::AlgorithmInfo& algo) const {
  return fmt::format("stack '{}' runs MPI algorithms; {} is NCCL's (use --stack nccl or "
                     "openmpi-4.1+ucc+nccl)",
                     info_.name, algo.name);
}

} // namespace collsim::stacks::detail
