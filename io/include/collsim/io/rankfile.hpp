#pragma once
// Open MPI rankfiles (mpirun --rankfile, "rank N=HOST slot=SLOTS"): where each rank runs.

#include "collsim/core/scenario.hpp"

#include <string_view>
#include <vector>

namespace collsim::io {

/// Parses rankfile text. Lines are `rank N=HOST slot=SLOT` with HOST `nodeK`, `+nK` (K-th node of
/// the allocation) or any other name (numbered in order of first appearance), and SLOT `C` (a core,
/// or a GPU index on GPU nodes) or `S:C` (core C of socket S); of a list or range (`0-3`, `1,2`,
/// `0:0-3`) the first slot is where the rank runs (Open MPI binds it to all of them). `#` starts a
/// comment. Throws core::ScenarioError at the offending line and column.
std::vector<core::RankSlot> parse_rankfile(std::string_view text, std::string_view file);

} // namespace collsim::io
