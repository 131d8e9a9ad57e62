#pragma once
// Internal to analysis: what the point runner (simulate.cpp) and the study sweeps (study.cpp)
// share.

#include "collsim/algorithms/registry.hpp"
#include "collsim/core/scenario.hpp"
#include "collsim/stacks/stack.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace collsim::analysis::detail {

/// The library stacks (stacks::default_stacks), built once; immutable.
const stacks::Registry& stack_registry();

/// `auto` at one point: the library's choice as an algorithm of the registry and its parameters.
struct AutoPoint {
  const algorithms::AlgorithmInfo* algo = nullptr;
  std::map<std::string, std::int64_t> params;
  std::string shown; ///< "algorithm=nccl_ring,channels=24,protocol=simple"
};
/// `auto` (the library's choice) at one point; nullopt with `why` when the library has none.
std::optional<AutoPoint> resolve_auto(const core::Scenario& scenario, const core::Topology& topo,
                                      core::CollectiveKind collective, std::uint32_t ranks,
                                      core::Bytes bytes, const algorithms::Registry& registry,
                                      std::string* why, bool varying);

/// The study's counts and arrivals for the request's ranks and size (issue 21): a v-collective's
/// size becomes its counts' total (neighbourhood counts: S per neighbour message).
void with_imbalance(const core::StudySpec& study, algorithms::Request& req);

} // namespace collsim::analysis::detail
