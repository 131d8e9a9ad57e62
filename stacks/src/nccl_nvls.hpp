#pragma once
// Internal: NVLS allreduce on one node as NCCL's kernel pipelines it (nccl_nvls.cpp has the
// mechanism and its sources).

#include "collsim/core/units.hpp"
#include "collsim/stacks/nccl_model.hpp"

#include <cstdint>

namespace collsim::stacks {

/// What NCCL's three-stage NVLS pipeline adds to collsim's NVLS schedule of an allreduce of
/// `bytes` on the one node `in` describes: two stages' fill and a poll a loop after the first.
/// `start_chunk`: the chunk before NCCL's size rules, min(Simple step, NCCL_NVLS_CHUNKSIZE);
/// `poll`: the round trip of the reduce group's wait for its peers' step counters through the
/// switch; `rate`: a GPU's NVLink data rate as the engines rate the schedule's own messages.
core::Seconds nvls_pipeline_time(std::uint64_t bytes, const NcclModelInputs& in,
                                 std::uint64_t start_chunk, core::Seconds poll,
                                 core::Bandwidth rate);

} // namespace collsim::stacks
