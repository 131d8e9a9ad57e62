// The MPICH 4 stack (docs/stacks.md): MPICH 4.2 with the ch4 device over UCX (ch4:ucx).
//
// - Algorithms: ch4's default selection; for allreduce the `mpich_ch4` composition
//   (allreduce_mpich_ch4.cpp: shared-memory release_gather inside nodes, MPIR's recursive
//   doubling or reduce_scatter_allgather among node roots).
// - Host buffers: UCX's tag protocols (mpi_paths.hpp; the same UCX_RNDV_THRESH as pml ucx).
// - Device buffers: an allreduce of at most MPIR_CVAR_CH4_GPU_COLL_SWAP_BUFFER_SZ bytes (1 MiB)
//   swaps both buffers into host buffers from a pool allocated once
//   (MPIDI_Coll_host_buffer_genq_alloc in src/mpid/ch4/src/ch4_coll_impl.h, cvar in
//   ch4_init.c), runs on the host and copies the result back (MPIR_Localcopy_gpu): staged as
//   host_staging.hpp does, without the fresh pages (the pool is reused). Larger allreduces and
//   the other collectives move the device buffers through UCX's cuda transports and reduce them
//   on the GPU (MPIR_Reduce_local calls MPIR_Typerep_reduce, yaksa's GPU kernels, for built-in
//   operations: src/mpi/coll/reduce_local/reduce_local.c): GPU-direct, as openmpi-4.1+ucc.

#include "mpi_paths.hpp"

#include <utility>

namespace collsim::stacks {
namespace {

constexpr std::uint64_t kSwapBufferBytes = 1ULL << 20; // MPIR_CVAR_CH4_GPU_COLL_SWAP_BUFFER_SZ

class Mpich4 final : public detail::MpiStack {
public:
  Mpich4() : MpiStack(describe()) {}
  [[nodiscard]] core::Schedule lower(core::Schedule schedule,
                                     const LowerContext& ctx) const override {
    const core::ScheduleHeader& h = schedule.header();
    if (ctx.buffers == Buffers::device && h.collective == core::CollectiveKind::allreduce &&
        h.bytes.value <= kSwapBufferBytes && detail::stages(schedule, ctx.topology)) {
      return detail::staged(schedule, ctx, detail::pooled_costs());
    }
    return detail::over_ucx(std::move(schedule), ctx);
  }

private:
  static StackInfo describe() {
    return {"mpich-4",
            "MPICH 4.2, ch4:ucx: its default compositions (allreduce: shared-memory "
            "release_gather in each node, recursive doubling or Rabenseifner among node roots); "
            "device-buffer allreduces up to 1 MiB swapped through pooled host buffers, larger "
            "ones GPU-direct with reductions on the GPU",
            "MPICH v4.2.3 src/mpid/ch4/src/ch4_coll_impl.h, ch4_init.c "
            "(MPIR_CVAR_CH4_GPU_COLL_SWAP_BUFFER_SZ), maint/tuning/coll/ch4/generic.json, "
            "posix_generic.json, mpir/generic.json, src/mpi/coll/reduce_local/reduce_local.c; "
            "UCX v1.12 src/ucp/core/ucp_ep.c (rendezvous threshold)",
            Chooser::mpich4};
  }
};

} // namespace

std::unique_ptr<Stack> make_mpich4_stack() {
  return std::make_unique<Mpich4>();
}

} // namespace collsim::stacks
