// What the simulation knows of its participants without SimGrid (simulation.hpp): the checks the
// parent runs before the engine forks its child, the memory the child will take, and the node each
// participant is on.

#include "simulation.hpp"

#include "simulation_state.hpp"

#include "collsim/core/errors.hpp"
#include "collsim/core/verify.hpp"

#include <fmt/format.h>

namespace collsim::engines::detail {

using namespace simgrid_state;

std::uint64_t memory_estimate(const core::Schedule& s, const core::RunOptions& opt) {
  const std::uint64_t n = s.participants();
  // The state, the partner and the matching's receive index of every operation.
  std::uint64_t per_op = sizeof(OpState) + 2 * sizeof(OpId);
  if (s.header().protocol.fifo_slots > 0) {
    per_op += sizeof(OpId) + 1;
  }
  if (opt.messages || opt.link_loads) {
    per_op += 2 * sizeof(double);
  }
  return per_op * s.op_count() + n * kPlatformBytesPerParticipant;
}

void precheck(const core::Schedule& s, const core::Topology& t) {
  if (t.rank_count() < s.ranks()) {
    throw core::EngineError(fmt::format(
        "simgrid: the schedule has {} ranks but the topology only {}", s.ranks(), t.rank_count()));
  }
  if (s.participants() > kMaxParticipants) {
    throw core::EngineError(fmt::format(
        "simgrid: {} participants is more than the SimGrid engine takes ({}: its time grows "
        "with the square of the participants); use --engine loggp",
        s.participants(), kMaxParticipants));
  }
  if (core::match_messages(s, [](OpId, OpId) {}) != 0) {
    throw core::EngineError("simgrid: the schedule has unmatched messages (run `collsim verify`)");
  }
  (void)core::participant_devices(s, t, "simgrid");
}

std::vector<std::uint64_t> node_keys(const core::Schedule& s, const core::Topology& t) {
  std::vector<std::uint64_t> keys(s.participants());
  const auto devices = core::participant_devices(s, t, "simgrid");
  for (Rank r = 0; r < s.participants(); ++r) {
    keys[r] = (std::uint64_t{1} << 40) + r;
    if (!devices.empty()) {
      const core::Device& d = t.devices()[devices[r]];
      if (d.kind != core::DeviceKind::network_switch) {
        keys[r] = d.node;
      }
    }
  }
  return keys;
}

} // namespace collsim::engines::detail
