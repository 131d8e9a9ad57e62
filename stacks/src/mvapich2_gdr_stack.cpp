// The MVAPICH2-GDR stack (docs/stacks.md): a CUDA-aware MPI in the MVAPICH2-GDR mould, version
// 2.3.7 (the last release; binary-only, built on MVAPICH2 2.3.7, whose open source shows the CUDA
// paths GDR inherits). What it models, with where each fact comes from:
//
// - Reductions on device buffers (allreduce, reduce, reduce_scatter): the whole send and receive
//   buffers are copied to host memory from MPIU_Malloc (unpinned, fresh per call) by a blocking
//   cudaMemcpy, reduced on the CPU by the host algorithm, and copied back (MVAPICH2 2.3.7
//   src/mpi/coll/allreduce_osu.c MPIR_Allreduce_new_MV2, reduce_osu.c): staged as Open MPI's
//   coll/cuda is (host_staging.hpp). The GDR papers describe GPU-kernel reductions (Chu et al.,
//   CCGrid 2016), but the GDR 2.3.7 user guide documents no switch or default for them.
// - Other collectives on device buffers: "naive" staging (MV2_CUDA_USE_NAIVE=1) through
//   persistent host buffers up to a limit per collective (MVAPICH2 2.3.7
//   src/mpid/ch3/channels/mrail/src/gen2/ibv_param.c: bcast 2 MiB, allgather 1 MiB, alltoall
//   256 KiB), GPU-direct above it; gather, scatter and barrier GPU-direct.
// - GPU-direct (MVAPICH2-GDR 2.3.7 User Guide, section 13.1): GPUDirect RDMA between nodes
//   (MV2_USE_GPUDIRECT_RDMA=1), CUDA IPC inside a node (MV2_CUDA_IPC=1): the links at their data
//   rates, as UCX's cuda transports are priced (mpi_paths.hpp), but with one port per rank: the
//   library progresses its transfers from the calling thread, without UCX's per-peer streams.
// - Host buffers: MVAPICH2's own InfiniBand verbs channel, not UCX: eager up to
//   MV2_IBA_EAGER_THRESHOLD, "12 KB for ConnectX HCAs" (MVAPICH2 2.3.7 User Guide, section
//   11.24), rendezvous (RPUT, MV2_RNDV_PROTOCOL's default) above it.
// - auto: MVAPICH2-GDR chooses from per-architecture tuning tables it does not publish; Open MPI
//   4.1's fixed rules stand in (StackInfo says so).
// Not modelled: GDR's 8-chunk pipeline of 256 KiB blocks through host memory for large
// inter-node messages (MV2_CUDA_BLOCK_SIZE, MV2_USE_GPUDIRECT_RECEIVE_LIMIT 128 KiB), GDRCOPY
// for messages up to 8 KiB, the per-call pointer query (cuPointerGetAttribute per buffer).

#include "mpi_paths.hpp"

#include "collsim/stacks/mpi_env.hpp"

#include <optional>
#include <utility>

namespace collsim::stacks {
namespace {

using core::CollectiveKind;

/// MV2_IBA_EAGER_THRESHOLD on ConnectX HCAs.
constexpr std::uint64_t kEagerBytes = 12 * 1024;

/// The naive-staging limit of a collective (ibv_param.c's MV2_CUDA_*_STAGE_LIMIT defaults),
/// compared with the bytes one rank's call passes; nothing where the collective is not staged.
std::optional<std::uint64_t> naive_limit(CollectiveKind c) {
  switch (c) {
  case CollectiveKind::bcast: return 2ULL << 20;
  case CollectiveKind::allgather: return 1ULL << 20;
  case CollectiveKind::alltoall: return 256ULL << 10;
  default: return std::nullopt;
  }
}

/// The bytes one rank's call passes: the vector for bcast, one rank's block for allgather and
/// alltoall (collsim's header counts the whole gathered vector).
std::uint64_t call_bytes(const core::ScheduleHeader& h) {
  if (h.collective == CollectiveKind::bcast) {
    return h.bytes.value;
  }
  return h.bytes.value / std::max<std::uint32_t>(h.ranks, 1);
}

/// Every rank on a GPU with a host socket (what staging needs).
bool stageable(const core::Schedule& s, const core::Topology& t) {
  if (!detail::on_gpus(s, t)) {
    return false;
  }
  for (core::Rank r = 0; r < s.ranks(); ++r) {
    if (t.devices()[t.device_of(r)].host == core::kNoDevice) {
      return false;
    }
  }
  return true;
}

class Mvapich2Gdr final : public detail::MpiStack {
public:
  Mvapich2Gdr() : MpiStack(describe()) {}
  [[nodiscard]] core::Schedule lower(core::Schedule schedule,
                                     const LowerContext& ctx) const override {
    const core::ScheduleHeader& h = schedule.header();
    if (ctx.buffers == Buffers::device && detail::on_gpus(schedule, ctx.topology)) {
      if (detail::stages(schedule, ctx.topology)) {
        return detail::staged(schedule, ctx, detail::host_costs());
      }
      const auto limit = naive_limit(h.collective);
      if (limit && call_bytes(h) <= *limit && schedule.ranks() > 1 &&
          stageable(schedule, ctx.topology)) {
        return detail::staged(schedule, ctx, detail::pooled_costs());
      }
      core::Schedule out = detail::gpu_direct(std::move(schedule), ctx);
      core::Protocol p = out.header().protocol;
      p.port_per_link = false; // one progress thread, no per-peer streams
      out.set_protocol(p);
      return out;
    }
    // Host buffers: the verbs channel's eager threshold, the scenario's per-call cost.
    const MpiEnv env = parse_mpi_env(ctx.mpi);
    core::Protocol p = schedule.header().protocol;
    p.rendezvous_bytes = kEagerBytes;
    p.launch = core::Seconds{p.launch.value + env.call_overhead.value};
    schedule.set_protocol(p);
    return schedule;
  }

private:
  static StackInfo describe() {
    return {"mvapich2-gdr",
            "MVAPICH2-GDR 2.3.7 (CUDA-aware MVAPICH2): device reductions staged through fresh "
            "host memory and reduced on the CPU; bcast, allgather and alltoall staged through "
            "persistent host buffers up to 2 MiB, 1 MiB and 256 KiB, GPU-direct (GPUDirect RDMA, "
            "CUDA IPC) above; host buffers eager up to 12 KiB over verbs; Open MPI 4.1's rules "
            "stand in for its unpublished tuning tables",
            "MVAPICH2-GDR 2.3.7 User Guide (sections 13.1, 14); MVAPICH2 2.3.7 "
            "src/mpi/coll/allreduce_osu.c, reduce_osu.c, "
            "src/mpid/ch3/channels/mrail/src/gen2/ibv_param.c (MV2_CUDA_USE_NAIVE and its "
            "limits); MVAPICH2 2.3.7 User Guide section 11.24 (MV2_IBA_EAGER_THRESHOLD)",
            Chooser::ompi41};
  }
};

} // namespace

std::unique_ptr<Stack> make_mvapich2_gdr_stack() {
  return std::make_unique<Mvapich2Gdr>();
}

} // namespace collsim::stacks
