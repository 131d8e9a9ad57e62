#pragma once
// Internal: NCCL's cost table entries (nccl_cost_model.cpp), for nccl_tuning.cpp.

#include "collsim/stacks/nccl_model.hpp"

#include <cstdint>

namespace collsim::stacks::nccl_detail {

/// One entry of comm->bandwidths / comm->latencies (3.3, 3.4) for collective `c`, with the enable
/// rules of ncclTopoTuneModel and updateCollCostTable; `disabled` says why bandwidth is 0.
NcclCost model_entry(core::CollectiveKind c, algorithms::nccl::Algo a, algorithms::nccl::Proto p,
                     const NcclModelInputs& in);

/// ncclTopoGetAlgoTime for one entry at `bytes` (numPipeOps = 1), `nc` the comm's channels.
void price(NcclCost& e, core::CollectiveKind c, std::uint64_t bytes, const NcclModelInputs& in,
           std::uint32_t nc);

} // namespace collsim::stacks::nccl_detail
