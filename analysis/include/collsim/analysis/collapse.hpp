#pragma once
// Choosing a collapsed schedule (core/collapse.hpp) for a sweep point: the fewest programs whose
// times are exactly the full schedule's on this machine.

#include "collsim/algorithms/registry.hpp"
#include "collsim/core/schedule.hpp"
#include "collsim/core/topology.hpp"

#include <cstdint>
#include <functional>
#include <optional>

namespace collsim::analysis {

/// Builds the schedule the engine would run for `request` collapsed to `programs` programs
/// (generated, then lowered by the point's stack).
using CollapsedBuilder = std::function<core::Schedule(std::uint32_t programs)>;

/// The collapsed schedule to run `request` as on `topology`, or none to run every rank: that of
/// the smallest number of programs k < p (a divisor of p; a power of two for xor_blocks) such that
/// the machine is invariant under the algorithm's symmetry restricted to shifts by multiples of k.
/// Checked, for every rank x and every partner of its messages: the route (latency and bottleneck)
/// and whether it stays in the node equal those of x's representative and the matching partner; x's
/// endpoint and device kind equal its representative's; with a port per link, the messages share
/// ports alike; links inside a representative's node are crossed only by representatives. And
/// the collapsed schedule's matching is the full one's (flow control counts each rank's own
/// connections: core::fifo_credits keys them by route peer): every
/// receive its messages match is, in its rank's frame, from the sender. For the loggp engine (a
/// port state per rank, nothing shared between nodes) these make every rank's times its
/// representative's.
std::optional<core::Schedule> collapse_programs(const algorithms::AlgorithmInfo& algo,
                                                const algorithms::Request& request,
                                                const core::Topology& topology,
                                                const CollapsedBuilder& build);

} // namespace collsim::analysis
