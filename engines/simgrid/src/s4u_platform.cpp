#include "s4u_platform.hpp"

#include "simulation_state.hpp"

#include <fmt/format.h>

namespace collsim::engines::detail {

using simgrid_state::kCores;
using simgrid_state::kSpeed;
namespace sg4 = simgrid::s4u;

std::vector<sg4::Host*> build_s4u_platform(Plan& plan) {
  auto* zone = sg4::create_full_zone("collsim");
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
