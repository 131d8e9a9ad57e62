#pragma once
// The s4u objects of a run (simulation.cpp): a host per participant and the plan's links and
// routes in one zone that stores only the routes used. Internal to the engine.

#include "platform.hpp"

#include "collsim/core/scenario.hpp"

#include <simgrid/s4u.hpp>
#include <vector>

namespace collsim::engines::detail {

/// Whether SimGrid takes a route's latency as it is (CM02 without a latency factor, a TCP window
/// or weight-S), so that the engine may add it itself where flows run without it.
inline bool latency_as_given(const core::SimgridSpec& g) {
  return g.network_model == "CM02" && g.tcp_gamma <= 0.0 && !g.latency_factor &&
         g.weight_s.value_or(0.0) == 0.0;
}

/// Builds the zone; returns the participants' hosts, in participant order. Without
/// `flows_carry_latency` a flow runs without its route's latency (the engine adds it).
std::vector<simgrid::s4u::Host*> build_s4u_platform(Plan& plan, bool flows_carry_latency);

} // namespace collsim::engines::detail
