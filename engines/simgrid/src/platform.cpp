#include "platform.hpp"

#include "collsim/engines/simgrid.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <fmt/ostream.h>
#include <limits>

namespace collsim::engines {
namespace detail {

Plan::Plan(const core::Topology& topology, std::vector<core::DeviceId> devices,
           std::uint32_t participants)
    : t_(topology), devices_(std::move(devices)), participants_(participants) {
  if (t_.is_full_mesh()) {
    // Rank i's port into the crossbar: up<i> carries the route latency, dn<i> none, so that a
    // route up<a>, dn<b> costs exactly the mesh's alpha and 1/beta.
    const core::RouteCost c = participants > 1 ? t_.route_cost(0, 1) : core::RouteCost{};
    for (std::uint32_t i = 0; i < participants; ++i) {
      add({fmt::format("up{}", i), c.bottleneck.bytes_per_second, c.latency.value, false});
    }
    for (std::uint32_t i = 0; i < participants; ++i) {
      add({fmt::format("dn{}", i), c.bottleneck.bytes_per_second, 0.0, false});
    }
  }
}

std::uint32_t Plan::add(PlanLink l) {
  links_.push_back(std::move(l));
  return static_cast<std::uint32_t>(links_.size() - 1);
}

std::uint32_t Plan::link_of(core::LinkId id) {
  auto it = link_index_.find(id);
  if (it == link_index_.end()) {
    const core::Link& l = t_.links()[id];
    it = link_index_
             .emplace(id, add({fmt::format("l{}", id), l.bandwidth.bytes_per_second,
                               l.latency.value, false}))
             .first;
  }
  return it->second;
}

std::uint32_t Plan::forwarding_of(core::DeviceId d) {
  auto it = forwarding_index_.find(d);
  if (it == forwarding_index_.end()) {
    it = forwarding_index_
             .emplace(
                 d, add({fmt::format("fwd{}", d), kUnbounded, t_.devices()[d].latency.value, true}))
             .first;
  }
  return it->second;
}

const PlanRoute& Plan::route(std::uint32_t a, std::uint32_t b) {
  const std::uint64_t key = (static_cast<std::uint64_t>(a) << 32) | b;
  auto it = routes_.find(key);
  if (it != routes_.end()) {
    return it->second;
  }
  PlanRoute r;
  if (t_.is_full_mesh() && a != b) {
    r.links = {a, participants_ + b};
  } else {
    const std::vector<core::LinkId> path = t_.is_full_mesh()
                                               ? std::vector<core::LinkId>{}
                                               : t_.route_between(devices_[a], devices_[b]);
    for (std::size_t i = 0; i < path.size(); ++i) {
      r.links.push_back(link_of(path[i]));
      const core::DeviceId via = t_.links()[path[i]].to;
      if (i + 1 < path.size() && t_.devices()[via].latency.value > 0.0) {
        r.links.push_back(forwarding_of(via));
      }
    }
    if (r.links.empty()) { // two participants on one device: a free local transfer
      if (local_ == 0xffffffffu) {
        local_ = add({"local", kUnbounded, 0.0, true});
      }
      r.links.push_back(local_);
    }
  }
  r.bottleneck = std::numeric_limits<double>::infinity();
  for (std::uint32_t l : r.links) {
    r.latency += links_[l].latency;
    if (!links_[l].fatpipe) {
      r.bottleneck = std::min(r.bottleneck, links_[l].bandwidth);
    }
  }
  return routes_.emplace(key, std::move(r)).first->second;
}

} // namespace detail

void write_simgrid_platform(std::ostream& out, const core::Topology& topology, std::uint32_t ranks,
                            double speed) {
  std::vector<core::DeviceId> devices;
  if (!topology.is_full_mesh()) {
    for (core::Rank r = 0; r < ranks; ++r) {
      devices.push_back(topology.device_of(r));
    }
  }
  detail::Plan plan(topology, devices, ranks);
  for (std::uint32_t a = 0; a < ranks; ++a) {
    for (std::uint32_t b = 0; b < ranks; ++b) {
      if (a != b) {
        (void)plan.route(a, b);
      }
    }
  }
  fmt::print(out, "<?xml version='1.0'?>\n"
                  "<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
                  "<!-- Written by collsim: the platform its simgrid engine builds. -->\n"
                  "<platform version=\"4.1\">\n"
                  "  <zone id=\"collsim\" routing=\"Full\">\n");
  for (std::uint32_t r = 0; r < ranks; ++r) {
    fmt::print(out, "    <host id=\"p{}\" speed=\"{}f\"/>\n", r, speed);
  }
  for (const detail::PlanLink& l : plan.links()) {
    fmt::print(out,
               "    <link id=\"{}\" bandwidth=\"{:.17g}Bps\" latency=\"{:.17g}s\" "
               "sharing_policy=\"{}\"/>\n",
               l.name, l.bandwidth, l.latency, l.fatpipe ? "FATPIPE" : "SHARED");
  }
  for (std::uint32_t a = 0; a < ranks; ++a) {
    for (std::uint32_t b = 0; b < ranks; ++b) {
      if (a == b) {
        continue;
      }
      fmt::print(out, "    <route src=\"p{}\" dst=\"p{}\" symmetrical=\"NO\">", a, b);
      for (std::uint32_t l : plan.route(a, b).links) {
        fmt::print(out, "<link_ctn id=\"{}\"/>", plan.links()[l].name);
      }
      fmt::print(out, "</route>\n");
    }
  }
  fmt::print(out, "  </zone>\n</platform>\n");
}

} // namespace collsim::engines
