#pragma once
// The s4u objects of a run (simulation.cpp): a host per participant and the plan's links and
// routes in one zone that stores only the routes used. Internal to the engine.

#include "platform.hpp"

#include <simgrid/s4u.hpp>
#include <vector>

namespace collsim::engines::detail {

/// Builds the zone; returns the participants' hosts, in participant order. Without
/// `flows_carry_latency` a flow runs without its route's latency (the engine adds it).
std::vector<simgrid::s4u::Host*> build_s4u_platform(Plan& plan, bool flows_carry_latency);

} // namespace collsim::engines::detail
