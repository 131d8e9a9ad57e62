#pragma once
// Internal: the data paths the MPI stacks share (docs/stacks.md): device buffers moved by UCX
// directly between GPUs, host buffers under UCX's tag protocols, device buffers staged through
// host memory, and the base of every stack that runs MPI's (not NCCL's) algorithms.
//
// GPU-direct over UCX (device buffers): inside a node UCX's cuda_ipc copies each peer's data on a
// CUDA stream of its own ("per-peer stream", stream_d2d[] in src/uct/cuda/cuda_ipc/
// cuda_ipc_iface.h, UCX v1.12), so transfers to different peers overlap on their own links: a
// port per link, as NCCL's channels. The links carry data at their data rate (NVLink's and
// PCIe's packet overhead, the same physical figures the NCCL stack uses), and between nodes
// GPUDirect RDMA at the NIC kind's transport efficiency.

#include "host_staging.hpp"

#include "collsim/stacks/stack.hpp"

#include <string>
#include <utility>

namespace collsim::stacks::detail {

/// Device buffers moved by UCX directly between GPUs (see the top of this file); `s` unchanged
/// on host buffers or ranks that are not GPUs.
core::Schedule gpu_direct(core::Schedule s, const LowerContext& ctx);

/// Host buffers moved by the fabric's point-to-point protocols, the library's per-call cost at
/// the start of every rank: UCX's tag protocols (stacks/mpi_env.hpp: rendezvous above the
/// threshold), or on AWS EFA libfabric's efa provider (Open MPI's pml cm with mtl ofi, MPICH's
/// ch4:ofi; UCX has no EFA transport): eager and medium messages, windowed long-CTS and RDMA
/// read between nodes, eager and read handshakes through two copies inside a node
/// (mpi_paths.cpp, efa_protocols).
core::Schedule host_protocols(core::Schedule s, const LowerContext& ctx);

/// Whether the scenario's NICs are AWS EFA (`nic_kind: efa`), whose MPI transport is libfabric.
bool over_efa(const LowerContext& ctx);

/// The data path of an MPI library over UCX that runs the schedule as generated: GPU-direct on
/// device buffers with UCX's protocols for GPU memory (ucx_device_protocols), UCX's tag
/// protocols on host buffers.
core::Schedule over_ucx(core::Schedule s, const LowerContext& ctx);

/// UCX's protocols for GPU memory (UCX v1.12 with GDRCopy, its gdr_copy transport): a message up
/// to the rendezvous threshold (UCX_RNDV_THRESH) goes eagerly through host memory, the sender's
/// CPU reading it out of the GPU through GDRCopy's mapping and the receiver's CPU writing it in
/// (eager_copies); a longer one by rendezvous (a handshake, then GPU to GPU: cuda_ipc inside a
/// node, GPUDirect RDMA between nodes).
core::Schedule ucx_device_protocols(core::Schedule s, const LowerContext& ctx);

/// `s` with UCX's copies on GPU memory (see ucx_device_protocols). Every message of at most
/// `eager_bytes` is copied by the CPUs of the ranks (not agents) through GDRCopy: before a send,
/// its read out of the GPU (gdr_read), each rank's reads one after another (one progress thread);
/// after a receive, its write into the GPU (gdr_write), which what depended on the receive waits
/// for. A longer message between two GPUs of a node of `t` is one cuda_ipc copy
/// (cuMemcpyDtoDAsync, src/uct/cuda/cuda_ipc/cuda_ipc_ep.c) on the pair's own stream: each copy
/// starts (kCudaIpcCopySeconds) after the pair's previous copy has moved its data, so a pair's
/// copies take start + data one after another. `s` itself where there is neither.
core::Schedule ucx_copies(core::Schedule s, std::uint64_t eager_bytes, const core::Topology& t);
/// GDRCopy's read of `bytes` out of GPU memory and its write into it (host_staging.hpp's figures).
core::Seconds gdr_read(std::uint64_t bytes);
core::Seconds gdr_write(std::uint64_t bytes);

/// The schedule staged through host memory (host_staging.hpp) at `costs`: the DMA over PCIe at
/// its data rate and the network at the NIC kind's; one port per rank (the copies are
/// synchronous, one after another).
core::Schedule staged(const core::Schedule& s, const LowerContext& ctx, const HostCosts& costs);

/// `s` with a host-blocking GPU call of `seconds` after each reduction step of every participant:
/// after a reduction (recv_reduce or reduce) that no further reduction into the same range
/// continues (a library that reduces all of a step's copies in one call, UCC's reduce_multi, pays
/// the call once per step). What depended on the reduction waits for the call. `s` itself where
/// it has no reduction.
core::Schedule after_reductions(core::Schedule s, core::Seconds seconds);

/// A stack whose library runs the MPI algorithms (every one but NCCL's).
class MpiStack : public Stack {
public:
  explicit MpiStack(StackInfo info) : info_(std::move(info)) {}
  [[nodiscard]] const StackInfo& info() const override { return info_; }
  [[nodiscard]] bool runs(const algorithms::AlgorithmInfo& algo) const override;
  [[nodiscard]] std::string refusal(const algorithms::AlgorithmInfo& algo) const override;

private:
  StackInfo info_;
};

} // namespace collsim::stacks::detail
