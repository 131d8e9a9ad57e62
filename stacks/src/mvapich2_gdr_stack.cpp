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
// - Device messages between nodes (GDR 2.3.7 user guide, section 13.1: the "hybrid design that
//   uses pipelining and GPUDirect RDMA"): GPUDirect RDMA up to MV2_GPUDIRECT_LIMIT (8 KiB) on the
//   sending side and MV2_USE_GPUDIRECT_RECEIVE_LIMIT (128 KiB) on the receiving side; beyond
//   them the message moves through host memory in MV2_CUDA_BLOCK_SIZE blocks (256 KiB), copied
//   device-to-host, written over the network and copied host-to-device on separate streams, 8
//   blocks in flight (MVAPICH2 2.3.7 gen2/ibv_cuda_rndv.c, ibv_param.c). The network sets the
//   rate once the pipeline is full; each staged side adds its first block's copy (at PCIe's data
//   rate, after a 6.5 us asynchronous copy call) to the message's latency. collsim prices that
//   fill on every message between nodes, from the median length of those messages.
// Not modelled: GDRCOPY for messages up to 8 KiB, the per-call pointer query
// (cuPointerGetAttribute per buffer).

#include "mpi_paths.hpp"
#include "nccl_model_constants.hpp"

#include "collsim/stacks/mpi_env.hpp"

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

namespace collsim::stacks {
namespace {

using core::CollectiveKind;

/// MV2_IBA_EAGER_THRESHOLD on ConnectX HCAs.
constexpr std::uint64_t kEagerBytes = 12 * 1024;
/// MV2_GPUDIRECT_LIMIT, MV2_USE_GPUDIRECT_RECEIVE_LIMIT, MV2_CUDA_BLOCK_SIZE (GDR 2.3.7 defaults).
constexpr std::uint64_t kSendGdrLimit = 8 * 1024;
constexpr std::uint64_t kReceiveGdrLimit = 128 * 1024;
constexpr std::uint64_t kBlockBytes = 256 * 1024;

/// The median length of the schedule's messages between nodes (0: none).
std::uint64_t median_inter_node_length(const core::Schedule& s, const core::Topology& t) {
  std::vector<std::uint64_t> lengths;
  for (core::Rank r = 0; r < s.ranks(); ++r) {
    const std::uint32_t node = t.devices()[t.device_of(r)].node;
    for (core::OpId id = s.rank_begin(r); id < s.rank_end(r); ++id) {
      // The partner's node (a collapsed schedule's route peer, core/collapse.hpp): each class
      // of ranks sends alike, so its representatives' median is every rank's.
      if (s.kind(id) == core::OpKind::send && s.route_peer(id) < s.header().full_ranks() &&
          t.devices()[t.device_of(s.route_peer(id))].node != node) {
        lengths.push_back(s.length(id));
      }
    }
  }
  if (lengths.empty()) {
    return 0;
  }
  const auto mid = lengths.begin() + static_cast<std::ptrdiff_t>(lengths.size() / 2);
  std::nth_element(lengths.begin(), mid, lengths.end());
  return *mid;
}

/// The pipeline's fill for a device message of `length` bytes between nodes: the first block's
/// copy on each side that stages (see the top of this file), at the GPU's PCIe data rate.
double pipeline_fill(std::uint64_t length, double pcie_rate) {
  const double block = static_cast<double>(std::min(length, kBlockBytes));
  const double copy = detail::kCudaSyncCallSeconds + (pcie_rate > 0 ? block / pcie_rate : 0.0);
  return (length > kSendGdrLimit ? copy : 0.0) + (length > kReceiveGdrLimit ? copy : 0.0);
}

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
  return h.bytes.value / std::max<std::uint32_t>(h.full_ranks(), 1);
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
      if (limit && call_bytes(h) <= *limit && schedule.header().full_ranks() > 1 &&
          detail::stageable(schedule, ctx.topology)) {
        return detail::staged(schedule, ctx, detail::pooled_costs());
      }
      const std::uint64_t between = median_inter_node_length(schedule, ctx.topology);
      const core::Device& gpu = ctx.topology.devices()[ctx.topology.device_of(0)];
      const double pcie = gpu.host == core::kNoDevice
                              ? 0.0
                              : ctx.topology.route_cost_between(ctx.topology.device_of(0), gpu.host)
                                        .bottleneck.bytes_per_second *
                                    nccl_detail::kPciScale;
      core::Schedule out = detail::gpu_direct(std::move(schedule), ctx);
      core::Protocol p = out.header().protocol;
      p.port_per_link = false; // one progress thread, no per-peer streams
      p.inter_node_latency =
          core::Seconds{p.inter_node_latency.value + pipeline_fill(between, pcie)};
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
            "CUDA IPC) above with the fill of its 256 KiB host pipeline between nodes; host "
            "buffers eager up to 12 KiB over verbs; Open MPI 4.1's rules stand in for its "
            "unpublished tuning tables",
            "MVAPICH2-GDR 2.3.7 User Guide (sections 13.1, 14); MVAPICH2 2.3.7 "
            "src/mpi/coll/allreduce_osu.c, reduce_osu.c, "
            "src/mpid/ch3/channels/mrail/src/gen2/ibv_param.c (MV2_CUDA_USE_NAIVE and its "
            "limits), gen2/ibv_cuda_rndv.c (the host pipeline); MVAPICH2 2.3.7 User Guide "
            "section 11.24 (MV2_IBA_EAGER_THRESHOLD)",
            Chooser::ompi41};
  }
};

} // namespace

std::unique_ptr<Stack> make_mvapich2_gdr_stack() {
  return std::make_unique<Mvapich2Gdr>();
}

} // namespace collsim::stacks
