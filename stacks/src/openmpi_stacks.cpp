// The Open MPI 4.1 stacks (docs/stacks.md): what Open MPI 4.1 with pml ucx runs, alone, with UCC
// (coll/ucc), and with UCC's NCCL team layer.
//
// - openmpi-4.1: coll/tuned's algorithms. On GPU buffers, coll/cuda wraps the reductions
//   (allreduce, reduce, reduce_scatter): it stages both buffers through freshly malloc'ed host
//   memory and reduces on the CPU (host_staging.hpp; ompi/mca/coll/cuda/coll_cuda_allreduce.c,
//   coll_cuda_reduce.c, coll_cuda_reduce_scatter_block.c in v4.1.x). The other collectives move
//   GPU buffers through UCX directly (cuda_ipc inside a node, GPUDirect RDMA between nodes:
//   UCX's cuda transports), as the direct stack prices them.
// - openmpi-4.1+ucc: coll/ucc hands the call to UCC 1.1, whose tl/ucp runs its algorithms over
//   UCX on the device buffers and reduces with ec/cuda on the GPU (src/components/tl/ucp,
//   src/components/ec/cuda): GPU-direct, reductions at the GPU's rate.
// GPU-direct over UCX (both stacks, device buffers): mpi_paths.hpp.
// - openmpi-4.1+ucc+nccl: UCC's tl/nccl calls NCCL (src/components/tl/nccl/tl_nccl_coll.c): the
//   NCCL stack's lowering.
// Per-call software overheads (library entry, UCC's task set-up and progress) are not modelled
// yet: the JSC study measured UCC over NCCL at about 0.5 % of a 1e9-byte allreduce.

#include "mpi_paths.hpp"

#include "collsim/stacks/mpi_env.hpp"
#include "collsim/stacks/nccl_stack.hpp"
#include "collsim/stacks/stack.hpp"

#include <fmt/format.h>

#include <utility>

namespace collsim::stacks {
namespace {

using detail::MpiStack;

/// Open MPI 4.1 over pml ucx whose collective component runs the schedule on host memory: on
/// device buffers coll/cuda stages the reductions (host_staging.hpp); the rest over UCX.
class StagingMpiStack : public MpiStack {
public:
  using MpiStack::MpiStack;
  [[nodiscard]] core::Schedule lower(core::Schedule schedule,
                                     const LowerContext& ctx) const override {
    if (ctx.buffers == Buffers::device && detail::stages(schedule, ctx.topology)) {
      return detail::staged(schedule, ctx, detail::host_costs());
    }
    return detail::over_ucx(std::move(schedule), ctx);
  }
};

class OpenMpi41 final : public StagingMpiStack {
public:
  OpenMpi41() : StagingMpiStack(describe()) {}

private:
  static StackInfo describe() {
    return {
        "openmpi-4.1",
        "Open MPI 4.1, pml ucx, coll/tuned: on GPU buffers coll/cuda stages reductions through "
        "fresh host memory and reduces on one CPU core; other collectives GPU-direct over UCX; "
        "on CPU ranks one core's copies and reductions; on AWS EFA pml cm over libfabric's efa",
        "Open MPI v4.1.x ompi/mca/coll/cuda (coll_cuda_allreduce.c, coll_cuda_reduce.c, "
        "coll_cuda_reduce_scatter_block.c), ompi/mca/coll/tuned/coll_tuned_decision_fixed.c; "
        "glibc mallopt(3); CUDA C++ Best Practices Guide (pageable copies); NVIDIA GDRCopy README "
        "(cudaMemcpy's call overhead); UCX v1.12 src/uct/cuda/cuda_ipc (per-peer streams); on "
        "AWS EFA libfabric v1.18.0 prov/efa/src/rdm (rxr_msg.c, rxr_env.c), prov/shm (smr_ep.c)",
        Chooser::ompi41};
  }
};

class OpenMpi41Ucc final : public MpiStack {
public:
  OpenMpi41Ucc() : MpiStack(describe()) {}
  [[nodiscard]] core::Schedule lower(core::Schedule schedule,
                                     const LowerContext& ctx) const override {
    // Reductions by ec/cuda at the GPU's rate; each step's reduce_multi is a kernel launch that
    // the host waits for (UCC v1.1.0 ec_cuda_executor_interruptible.c runs
    // ucc_mc_cuda_reduce_multi, which ends in cudaStreamSynchronize: mc_cuda_reduce_multi.cu).
    const bool device = ctx.buffers == Buffers::device && detail::on_gpus(schedule, ctx.topology);
    if (!device) {
      return detail::over_ucx(std::move(schedule), ctx);
    }
    // The steps' calls first: UCX's copies after the short messages' receives would hide which
    // reduction continues a step.
    core::Schedule s = detail::after_reductions(detail::gpu_direct(std::move(schedule), ctx),
                                                core::Seconds{detail::kCudaSyncCallSeconds});
    return detail::ucx_device_protocols(std::move(s), ctx);
  }

private:
  static StackInfo describe() {
    return {"openmpi-4.1+ucc",
            "Open MPI 4.1 with coll/ucc: UCC 1.1's tl/ucp algorithms over UCX on the "
            "device buffers, reductions on the GPU (ec/cuda)",
            "UCC v1.1.0 src/components/tl/ucp (allreduce.h, bcast.h, alltoall.h, "
            "reduce_scatter.h, tl_ucp.c: default selection and radices), src/components/tl/cuda "
            "(tl_cuda.h: its score and collectives), src/components/ec/cuda; Open MPI v4.1.x "
            "ompi/mca/coll/ucc; UCX v1.12 "
            "src/uct/cuda/cuda_ipc (per-peer streams)",
            Chooser::ucc};
  }
};

/// Open MPI 4.1 with coll/hcoll (HPC-X): HCOLL takes the collectives it implements
/// (coll_hcoll priority 90 over coll/tuned's 30: ompi/mca/coll/hcoll/coll_hcoll_component.c);
/// its allreduce is the `hcoll` algorithm (allreduce_hcoll.cpp), the others are priced as
/// Open MPI 4.1 runs them. Its point-to-point level (bcol ucx_p2p) sends over UCX like pml ucx.
/// On GPU buffers it prices what openmpi-4.1 does [unverified for HCOLL's CUDA support].
class Hpcx final : public StagingMpiStack {
public:
  Hpcx() : StagingMpiStack(describe()) {}

private:
  static StackInfo describe() {
    return {"hpcx",
            "HPC-X: Open MPI 4.1 with coll/hcoll: HCOLL's hierarchical allreduce (shared-memory "
            "fan-in and fan-out around recursive doubling among node leaders, in 4 KiB "
            "fragments, two in flight); other collectives as openmpi-4.1",
            "HCOLL as Open MPI v1.8.8 coll/ml, bcol/basesmuma, bcol/ptpcoll (its open ancestor); "
            "Open MPI v4.1.x ompi/mca/coll/hcoll; NVIDIA HPC-X documentation (HCOLL); UCX v1.12 "
            "src/ucp/core/ucp_context.c, ucp_ep.c (rendezvous threshold)",
            Chooser::hcoll};
  }
};

/// Open MPI 5.0 with pml ucx: coll/han (priority 35) runs the collectives on communicators that
/// span nodes (coll_han_module.c disables it on one node), coll/tuned the rest with 4.1's fixed
/// rules (v5.0.9 coll_tuned_decision_fixed.c); coll/cuda still stages reductions on GPU
/// buffers (v5.0.9 ompi/mca/coll/cuda).
class OpenMpi50 final : public StagingMpiStack {
public:
  OpenMpi50() : StagingMpiStack(describe()) {}

private:
  static StackInfo describe() {
    return {"openmpi-5.0",
            "Open MPI 5.0, pml ucx: coll/han's segmented allreduce across nodes (coll/tuned "
            "inside them, libnbc between them), coll/tuned otherwise; on GPU buffers coll/cuda "
            "stages reductions as in 4.1",
            "Open MPI v5.0.9 ompi/mca/coll/han (coll_han_allreduce.c, coll_han_component.c, "
            "coll_han_module.c), ompi/mca/coll/libnbc (nbc_ireduce.c, nbc_ibcast.c), "
            "ompi/mca/coll/tuned/coll_tuned_decision_fixed.c, ompi/mca/coll/cuda; UCX v1.12 "
            "src/ucp/core/ucp_ep.c (rendezvous threshold)",
            Chooser::ompi50};
  }
};

class OpenMpi41UccNccl final : public Stack {
public:
  OpenMpi41UccNccl() : nccl_(make_nccl_stack()) {}
  [[nodiscard]] const StackInfo& info() const override { return info_; }
  [[nodiscard]] bool runs(const algorithms::AlgorithmInfo& algo) const override {
    return nccl_->runs(algo);
  }
  [[nodiscard]] std::string refusal(const algorithms::AlgorithmInfo& algo) const override {
    return fmt::format("stack '{}' hands every call to NCCL; {} is not one of NCCL's "
                       "algorithms (use --stack openmpi-4.1+ucc)",
                       info_.name, algo.name);
  }
  /// The NCCL stack's lowering plus the MPI library's and UCC's per-call cost (the scenario's
  /// mpi.call_overhead: MPI_Allreduce's entry, coll/ucc's and UCC's task set-up before tl/nccl
  /// posts the NCCL call; none by default). The JSC study measured UCC over NCCL at about 0.5 %
  /// of a 1e9-byte allreduce on 8 GPUs.
  [[nodiscard]] core::Schedule lower(core::Schedule schedule,
                                     const LowerContext& ctx) const override {
    core::Schedule s = nccl_->lower(std::move(schedule), ctx);
    const MpiEnv env = parse_mpi_env(ctx.mpi);
    if (env.call_overhead.value > 0) {
      core::Protocol p = s.header().protocol;
      p.launch = core::Seconds{p.launch.value + env.call_overhead.value};
      s.set_protocol(p);
    }
    return s;
  }

private:
  std::unique_ptr<Stack> nccl_;
  StackInfo info_{"openmpi-4.1+ucc+nccl",
                  "Open MPI 4.1 with coll/ucc and UCC's NCCL team layer: NCCL runs the call",
                  "UCC v1.1.0 src/components/tl/nccl (tl_nccl_coll.c); the nccl stack's sources",
                  Chooser::nccl};
};

} // namespace

std::unique_ptr<Stack> make_openmpi41_stack() {
  return std::make_unique<OpenMpi41>();
}
std::unique_ptr<Stack> make_openmpi41_ucc_stack() {
  return std::make_unique<OpenMpi41Ucc>();
}
std::unique_ptr<Stack> make_openmpi41_ucc_nccl_stack() {
  return std::make_unique<OpenMpi41UccNccl>();
}
std::unique_ptr<Stack> make_hpcx_stack() {
  return std::make_unique<Hpcx>();
}
std::unique_ptr<Stack> make_openmpi50_stack() {
  return std::make_unique<OpenMpi50>();
}

} // namespace collsim::stacks
