#pragma once
// NCCL's environment variables now live with the NCCL stack (stacks/nccl_env.hpp); these names
// keep analysis' callers unchanged.

#include "collsim/stacks/nccl_env.hpp"

namespace collsim::analysis {
using stacks::ignored_nccl_env;
using stacks::NcclEnv;
using stacks::parse_nccl_env;
} // namespace collsim::analysis
