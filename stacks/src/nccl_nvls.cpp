// NVLS allreduce on one node as NCCL's kernel pipelines it (nccl_nvls.hpp).
//
// NCCL's NVLS allreduce on one node (src/device/all_reduce.h, RunWorkElement NCCL_ALGO_NVLS,
// `oneNode`; the same from 2.18 to 2.30) runs three warp groups per channel: scatter (copy the
// input into the NVLS buffers of every head), reduce (each GPU, the head of one chunk per loop,
// multimem.ld_reduce from the multicast address and multimem.st the result back) and gather
// (copy the result out). The groups hand chunks to each other through FIFOs of NCCL_STEPS slots,
// one chunk a step, so a channel's allreduce is a three-stage pipeline over its loops of
// nHeads x chunkSize elements:
//
//     time = NCCL's latency + (L + 2) x data + (L - 1) x poll
//
// L: loops; data: one loop's bytes on a GPU's links (the 2 extra: filling the two later stages);
// poll: before every step the reduce group waits for the step counters of all GPUs, read as one
// multimem.ld_reduce.min through the switch (src/device/prims_simple.h loadStepValue with
// NvlsMinPolling), a round trip over NVLink that the group cannot overlap with its own data; the
// first step's is inside NCCL's measured latency (tuning.cc hwLat NVLS 25 us).
//
// The chunk is enqueue.cc's (algorithms::nccl::nvls_chunk_bytes): 128 KiB, shrinking to 64, 32
// and 16 KiB below 1 GiB, 64 MiB and 8 MiB on 8 H100 (16 channels x 8 heads).
//
// collsim's NVLS schedule moves whole shards through the switch agent (algorithms/allreduce/
// allreduce_nvls.cpp): n (1 + 1/S) on each GPU's links, no loops. What NCCL's pipeline adds to
// it, two stages' fill and the polls, is given to the schedule's two NVLS messages on the way
// (to the switch and back), as make_protocol shares NCCL's latency between them.

#include "nccl_nvls.hpp"

#include <algorithm>

namespace collsim::stacks {

core::Seconds nvls_pipeline_time(std::uint64_t bytes, const NcclModelInputs& in,
                                 std::uint64_t start_chunk, core::Seconds poll,
                                 core::Bandwidth rate) {
  if (bytes == 0 || rate.bytes_per_second <= 0.0) {
    return core::Seconds{0.0};
  }
  const std::uint64_t ops = std::uint64_t{std::max<std::uint32_t>(in.nvls_channels, 1)} *
                            std::max<std::uint32_t>(in.nvls.channels, 1); // nChannels x nHeads
  const std::uint64_t loop = ops * algorithms::nccl::nvls_chunk_bytes(bytes, ops, start_chunk);
  const std::uint64_t loops = (bytes + loop - 1) / loop;
  // One loop's bytes on a GPU's links each way: its part of every head's chunk out and the
  // multicast results in, plus its own head's reduced chunk in and its store out (1/S more; the
  // schedule's n (1 + 1/S)).
  const double shards = std::max<std::uint32_t>(in.local_ranks, 1);
  const double step_data =
      static_cast<double>(std::min(bytes, loop)) * (1.0 + 1.0 / shards) / rate.bytes_per_second;
  return core::Seconds{2.0 * step_data + static_cast<double>(loops - 1) * poll.value};
}

} // namespace collsim::stacks
