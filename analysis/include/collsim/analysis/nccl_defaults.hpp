#pragma once
// NCCL's model of its own choice lives beside the NCCL stack (stacks/nccl_model.hpp, as
// ARCHITECTURE.md puts a library's default choice beside its stack); analysis re-exports its names
// and adds the LibraryChoice view that validation, tuning and `collsim explain` compare.

#include "collsim/analysis/library_choice.hpp"
#include "collsim/analysis/nccl_env.hpp"
#include "collsim/stacks/nccl_model.hpp"

#include <optional>

namespace collsim::analysis {

using stacks::apply_nccl_env;
using stacks::nccl_algorithm_choice;
using stacks::nccl_can_run;
using stacks::nccl_default;
using stacks::nccl_inputs;
using stacks::NcclChoice;
using stacks::NcclCost;
using stacks::NcclCpu;
using stacks::NcclGraph;
using stacks::NcclModelInputs;
using stacks::NcclPath;
using stacks::params_text;

/// NCCL's default for a call as a LibraryChoice (library "NCCL 2.30.7 tuning model", library_name
/// "Ring/LL", the reason with NCCL's estimate), or nullopt where nccl_default gives none.
std::optional<LibraryChoice> nccl_library_choice(core::CollectiveKind collective,
                                                 std::uint32_t ranks, core::Bytes bytes,
                                                 const NcclModelInputs& in);

/// The same for a choice already made (nccl_default's result).
LibraryChoice nccl_library_choice(const NcclChoice& choice);

} // namespace collsim::analysis
