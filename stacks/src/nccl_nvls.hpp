#pragma once
// Internal: NVLS allreduce on one node as NCCL's kernel pipelines it (nccl_nvls.cpp has the
// mechanism and its sources).

#include "collsim/core/units.hpp"
#include "collsim/stacks/nccl_model.hpp"

#include <cstdint>

namespace collsim::stacks {

/// What NCCL's three-stage NVLS pipeline adds to collsim's NVLS schedule of one node.
struct NvlsPipeline {
  std::uint64_t chunk = 0;    ///< NCCL's chunkSize, bytes
  std::uint64_t loops = 0;    ///< loops of nChannels x nHeads x chunk
  core::Seconds step_data{0}; ///< one loop's data on a GPU's links
  core::Seconds added{0};     ///< two stages' fill plus (loops - 1) polls
};

/// The pipeline of an NVLS allreduce of `bytes` on one node described by `in`; `poll` is the
/// round trip of the reduce group's wait for its peers' step counters through the switch;
/// `start_chunk` the chunk before NCCL's size rules, min(Simple step, NCCL_NVLS_CHUNKSIZE);
/// `efficiency` the protocol's payload share of the link (core::Protocol::efficiency: Simple's 1,
/// times a calibrated profile's factor), as the engines rate the schedule's own messages.
NvlsPipeline nvls_pipeline(std::uint64_t bytes, const NcclModelInputs& in, core::Seconds poll,
                           std::uint64_t start_chunk, double efficiency);

} // namespace collsim::stacks
