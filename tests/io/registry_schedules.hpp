#pragma once
// Every registered algorithm's schedule at a few points, for the interchange tests (GOAL, Chakra):
// without a topology (every rank its own node) and on 16 ranks of two DGX H100 nodes, where the
// NCCL, hierarchical and in-network (NVLink SHARP agent) algorithms take their own shapes.

#include "collsim/algorithms/registry.hpp"
#include "collsim/io/scenario_loader.hpp"
#include "collsim/topologies/build.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace collsim::testing {

/// Calls `f(algo, p, schedule)` for every registered algorithm at each rank count of `ranks`
/// (none: no topology; 16: two DGX H100 nodes), S = 4096 p bytes, default parameters; points the
/// registry refuses are skipped.
template <class F>
void for_each_registered_schedule(const std::vector<std::uint32_t>& ranks, F f) {
  static const algorithms::Registry registry = algorithms::make_default_registry();
  static const core::Topology nodes = topologies::build(io::load_scenario("dgx-h100").topology, 16);
  for (const auto* algo : registry.list()) {
    for (const std::uint32_t p : ranks) {
      algorithms::Request req;
      req.collective = algo->collective;
      req.ranks = p;
      req.bytes = core::Bytes{std::uint64_t{p} * 4096};
      req.topology = p == 16 ? &nodes : nullptr;
      req.params = algorithms::resolve_params(*algo, {});
      if (!registry.refusal(*algo, req).empty()) {
        continue;
      }
      f(*algo, p, registry.generate(*algo, req));
    }
  }
}

} // namespace collsim::testing
