#pragma once
// Staging device buffers through host memory (docs/stacks.md, "Host staging"): how an MPI
// library without a GPU path for an operation runs it on GPU buffers. Open MPI 4.1's coll/cuda
// (ompi/mca/coll/cuda/coll_cuda_allreduce.c, the same in v5.0.x; coll/accelerator on the main
// branch) wraps coll/tuned's reductions: it mallocs host buffers, copies the send and the receive
// buffer from the device (cudaMemcpy, synchronous), runs the host algorithm on them with
// reductions on the calling CPU core, and copies the result back.
//
// The lowered schedule has one host agent per rank, at the rank's GPU's CPU socket: the rank
// sends its buffers to its agent over the GPU's PCIe route (the DMA), the agents run the
// algorithm among themselves, and each agent sends the result back. The agents reduce and copy
// at the socket's rates (one core's: topologies' system builder sets them on the socket's
// endpoint); what else the host does (the pageable copies, page faults) is booked as calc
// operations, and the engines charge an agent's shared-memory copy of each message to another
// agent of its node before the message leaves (core::Protocol::agents_copy): the agents' programs
// are the algorithm's, copied whole (core::Schedule::append_program), not rebuilt.

#include "collsim/core/schedule.hpp"
#include "collsim/core/topology.hpp"

#include <cstdint>

namespace collsim::stacks::detail {

/// A synchronous CUDA call that waits for the GPU (cudaMemcpy; a kernel launch followed by
/// cudaStreamSynchronize): "a cudaMemcpy can incur in a 6-7us overhead" (NVIDIA GDRCopy README,
/// "What is inside").
inline constexpr double kCudaSyncCallSeconds = 6.5e-6;

/// The CPU's copies through GDRCopy's mapping of GPU memory (NVIDIA GDRCopy README, the sample
/// output of gdrcopy_copylat and gdrcopy_copybw on a DGX-1V's V100): reading GPU memory takes
/// 0.9 us for a byte (gdr_copy_from_mapping, 1 B: 0.9069 us; the BAR is read without prefetch)
/// and runs at 530 MB/s (copybw "read BW", 128 KiB); writing takes 0.09 us (gdr_copy_to_mapping,
/// 1 B: 0.0889 us) and runs at 9.6 GB/s (copybw "write BW", write-combining).
inline constexpr double kGdrReadSeconds = 0.9069e-6;
inline constexpr double kGdrReadBytesPerSecond = 530.135e6;
inline constexpr double kGdrWriteSeconds = 0.0889e-6;
inline constexpr double kGdrWriteBytesPerSecond = 9638.54e6;

/// The start of one copy engine copy between two GPUs of a node: a small peer-to-peer copy over
/// NVLink takes 1.8-2.3 us (p2pBandwidthLatencyTest on a 4-GPU NVLink node, NVIDIA/cuda-samples
/// issue 230; hardware.md [S29]). UCX's cuda_ipc pays it per message, its copies to one peer
/// queued on one stream.
inline constexpr double kCudaIpcCopySeconds = 2.0e-6;

/// What the OS adds to staging into freshly allocated host memory.
struct HostCosts {
  /// Time per byte to fault in freshly mapped memory on first touch (kernel entry, page
  /// allocation and zeroing per 4 KiB page).
  double fault_seconds_per_byte = 0.0;
  /// Buffers at least this large come from a fresh mmap on every call (glibc's malloc).
  std::uint64_t mmap_threshold = 0;
};

/// Linux's and glibc's (see host_staging.cpp).
HostCosts host_costs();

/// Staging buffers a library allocates once and reuses (MPICH's GPU swap pool, MVAPICH2's naive
/// staging buffers): no page faults, no fresh mmap.
HostCosts pooled_costs();

/// True where every rank of `s` sits on a GPU of `t`.
bool on_gpus(const core::Schedule& s, const core::Topology& t);

/// True where every rank of `s` sits on a GPU that has a host socket (what staging needs).
bool stageable(const core::Schedule& s, const core::Topology& t);

/// True where the stack must stage: stageable, and a collective coll/cuda wraps (allreduce,
/// reduce, reduce_scatter).
bool stages(const core::Schedule& s, const core::Topology& t);

/// `s` run on host copies of its ranks' buffers (see the top of this file). Out of place, as MPI
/// benchmarks call it: the receive buffer is staged in too. UsageError when the schedule already
/// has in-network agents.
core::Schedule stage_through_host(const core::Schedule& s, const core::Topology& t,
                                  const HostCosts& costs);

} // namespace collsim::stacks::detail
