#pragma once
// The SimGrid platform of a run, as plain values: the links that routes use and the route of every
// ordered pair of participants that exchange messages. Built on demand, so that a ring on 1024
// ranks creates 1024 routes, not a million. Shared by the engine (which turns it into s4u objects)
// and the XML export (which writes it for smpirun).

#include "collsim/core/topology.hpp"

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace collsim::engines::detail {

struct PlanLink {
  std::string name;
  double bandwidth = 0.0; ///< bytes per second
  double latency = 0.0;   ///< seconds
  bool fatpipe = false;   ///< not shared: a switch's forwarding latency, a device's own loopback
};

/// A route, in plan link indices, with what the loggp engine would charge for it.
struct PlanRoute {
  std::vector<std::uint32_t> links;
  double latency = 0.0;
  double bottleneck = 0.0; ///< bytes per second (of the shared links)
};

class Plan {
public:
  /// `devices`: the device of every participant (core::participant_devices); empty on a full mesh,
  /// where `participants` ranks each get an injection and an ejection link.
  Plan(const core::Topology& topology, std::vector<core::DeviceId> devices,
       std::uint32_t participants);

  /// The route from participant a to participant b, added on first use.
  const PlanRoute& route(std::uint32_t a, std::uint32_t b);
  [[nodiscard]] const std::vector<PlanLink>& links() const { return links_; }
  [[nodiscard]] std::uint32_t participants() const { return participants_; }
  /// The routes added so far, keyed (a << 32 | b).
  [[nodiscard]] const std::unordered_map<std::uint64_t, PlanRoute>& routes() const {
    return routes_;
  }

private:
  std::uint32_t link_of(core::LinkId id);
  std::uint32_t forwarding_of(core::DeviceId d);
  std::uint32_t add(PlanLink l);

  const core::Topology& t_;
  std::vector<core::DeviceId> devices_;
  std::uint32_t participants_;
  std::vector<PlanLink> links_;
  std::unordered_map<core::LinkId, std::uint32_t> link_index_;
  std::unordered_map<core::DeviceId, std::uint32_t> forwarding_index_;
  std::uint32_t local_ = 0xffffffffu;
  std::unordered_map<std::uint64_t, PlanRoute> routes_;
};

/// A bandwidth no link reaches, for latency-only links (SimGrid wants a finite number).
inline constexpr double kUnbounded = 1e18;

} // namespace collsim::engines::detail
