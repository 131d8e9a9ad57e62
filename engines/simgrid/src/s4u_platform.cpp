#include "s4u_platform.hpp"

#include "simulation_state.hpp"

#include <fmt/format.h>
#include <simgrid/kernel/routing/NetPoint.hpp>
#include <simgrid/kernel/routing/NetZoneImpl.hpp>

#include <unordered_map>

namespace collsim::engines::detail {

using simgrid_state::kCores;
using simgrid_state::kSpeed;
namespace sg4 = simgrid::s4u;
namespace routing = simgrid::kernel::routing;

namespace {

/// A zone that stores only the routes given to it, by pair of netpoints. SimGrid's Full zone
/// (kernel/routing/FullZone.cpp, 3.32) allocates a route slot for every ordered pair of its
/// netpoints when it seals: 8 B x participants^2, 32 GiB at 65536 participants, though a
/// schedule uses a few routes per participant (a ring 2, recursive doubling log2 p). collsim
/// computes every route itself (per pair: fat-tree up/down, ECMP, DragonFly), so a hierarchy
/// of SimGrid zones, which routes by zone and gateway, could not hold them; this keeps them
/// exactly, in memory proportional to the routes used.
class SparseZone final : public routing::NetZoneImpl {
public:
  SparseZone(const std::string& name, bool carry_latency)
      : NetZoneImpl(name), carry_latency_(carry_latency) {}

  void get_local_route(const routing::NetPoint* src, const routing::NetPoint* dst,
                       routing::Route* into, double* latency) override {
    const auto it = routes_.find(key(src, dst));
    if (it == routes_.end()) {
      // Never reached: the engine adds the route of every message before the run.
      throw std::logic_error("collsim's SimGrid zone has no route for a message");
    }
    into->link_list_.insert(into->link_list_.end(), it->second.links.begin(),
                            it->second.links.end());
    if (latency != nullptr) {
      *latency += it->second.latency;
    }
  }

  void add_route(routing::NetPoint* src, routing::NetPoint* dst, routing::NetPoint* /*gw_src*/,
                 routing::NetPoint* /*gw_dst*/, const std::vector<sg4::LinkInRoute>& link_list,
                 bool /*symmetrical*/) override {
    Stored& r = routes_[key(src, dst)];
    r.links.clear();
    r.latency = 0.0;
    for (const sg4::LinkInRoute& l : link_list) {
      r.links.push_back(l.get_link()->get_impl());
      r.latency += carry_latency_ ? l.get_link()->get_latency() : 0.0;
    }
  }

private:
  struct Stored {
    std::vector<simgrid::kernel::resource::StandardLinkImpl*> links;
    double latency = 0.0; // the links' latencies, summed as the Full zone sums them
  };
  static std::uint64_t key(const routing::NetPoint* a, const routing::NetPoint* b) {
    return (static_cast<std::uint64_t>(a->id()) << 32) | static_cast<std::uint32_t>(b->id());
  }
  std::unordered_map<std::uint64_t, Stored> routes_;
  bool carry_latency_ = true; // a route's flows pay its links' latency (else the engine adds it)
};

} // namespace

std::vector<sg4::Host*> build_s4u_platform(Plan& plan, bool flows_carry_latency) {
  // The first zone created is SimGrid's root (NetZoneImpl's constructor makes it so).
  sg4::NetZone* zone = (new SparseZone("collsim", flows_carry_latency))->get_iface();
  std::vector<sg4::Host*> hosts;
  hosts.reserve(plan.participants());
  for (std::uint32_t r = 0; r < plan.participants(); ++r) {
    sg4::Host* h = zone->create_host(fmt::format("p{}", r), kSpeed);
    h->set_core_count(kCores);
    h->seal();
    hosts.push_back(h);
  }
  std::vector<sg4::Link*> links;
  links.reserve(plan.links().size());
  for (const PlanLink& pl : plan.links()) {
    sg4::Link* l = zone->create_link(pl.name, pl.bandwidth);
    l->set_latency(pl.latency);
    l->set_sharing_policy(pl.fatpipe ? sg4::Link::SharingPolicy::FATPIPE
                                     : sg4::Link::SharingPolicy::SHARED);
    l->seal();
    links.push_back(l);
  }
  for (const auto& [key, route] : plan.routes()) {
    std::vector<sg4::LinkInRoute> in_route;
    in_route.reserve(route.links.size());
    for (std::uint32_t l : route.links) {
      in_route.emplace_back(links[l]);
    }
    zone->add_route(hosts[key >> 32]->get_netpoint(), hosts[key & 0xffffffffu]->get_netpoint(),
                    nullptr, nullptr, in_route, false);
  }
  zone->seal();
  return hosts;
}

} // namespace collsim::engines::detail
