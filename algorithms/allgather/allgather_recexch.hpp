#pragma once
// Internal: the generator shared by allgather recexch_doubling and recexch_halving (MPICH
// MPIR_Allgather_intra_recexch with recexch_type distance doubling / distance halving); see
// allgather_recexch.cpp for the schedule.

#include "collsim/algorithms/registry.hpp"

namespace collsim::algorithms::detail {

/// The AlgorithmInfo of MPICH's recursive-exchange allgather; `halving` picks the variant.
AlgorithmInfo describe_allgather_recexch(bool halving);

} // namespace collsim::algorithms::detail
