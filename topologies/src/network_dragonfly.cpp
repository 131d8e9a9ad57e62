// DragonFly (Kim, Dally, Scott, Abts, "Technology-Driven, Highly-Scalable Dragonfly Topology",
// ISCA 2008; hardware.md 4a [S66] [S67]).
//
//   g groups of a routers; each router has p hosts, a - 1 local links (a group is all-to-all) and
//   h global links: radix k = p + (a-1) + h. A group's a*h global ports are spread over the other
//   groups (GlobalWiring: floor(a*h / (g-1)) links to every other group, the rest mirrored), so
//   every pair of groups is joined when a*h >= g - 1: at most g = a*h + 1 groups,
//   N = a*p*(a*h + 1) hosts. Balanced: a = 2p = 2h.
//
// Routing (deterministic, O(hops)):
//   minimal   local hop to the router holding the global link to the destination group, the
//             global link, local hop to the destination router: at most 1 global link and at
//             most 3 router-to-router links. With several links to a group, the destination
//             router picks one.
//   valiant   minimal to an intermediate group (Valiant's random group; here a hash of the
//             source and destination routers, so runs are reproducible), then minimal to the
//             destination: at most 2 global links, 5 router-to-router links. Traffic inside a
//             group takes its direct local link.

#include "collsim/core/errors.hpp"
#include "network_builders.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <limits>
#include <memory>

namespace collsim::topologies::detail {

namespace {

using core::DeviceId;
using core::LinkId;

constexpr LinkId kNoLink = std::numeric_limits<LinkId>::max();

struct DragonflyShape {
  std::uint32_t groups = 1;
  std::uint32_t a = 0; ///< routers per group
  std::uint32_t p = 0; ///< hosts per router
  std::uint32_t h = 0; ///< global links per router
  std::uint64_t max_groups = 0;
};

DragonflyShape shape_of(const core::NetworkSpec& spec, std::uint64_t ports) {
  DragonflyShape s;
  s.a = spec.routers_per_group;
  s.p = spec.hosts_per_router;
  s.h = spec.global_links_per_router;
  s.max_groups = static_cast<std::uint64_t>(s.a) * s.h + 1;
  const std::uint64_t per_group = static_cast<std::uint64_t>(s.a) * s.p;
  if (spec.groups > 0) {
    s.groups = spec.groups;
  } else if (per_group > 0) {
    s.groups = static_cast<std::uint32_t>(std::max<std::uint64_t>(
        1, std::min<std::uint64_t>((ports + per_group - 1) / per_group,
                                   std::numeric_limits<std::uint32_t>::max())));
  }
  return s;
}

class DragonflyRouter final : public core::NetworkRouter {
public:
  DragonflyRouter(const DragonflyShape& shape, PortOrder ports, DeviceId router0,
                  GlobalWiring wiring, std::vector<LinkId> global_out, bool valiant)
      : s_(shape), ports_(std::move(ports)), router0_(router0), wiring_(std::move(wiring)),
        global_out_(std::move(global_out)), valiant_(valiant) {}

  void route(const core::Topology& t, DeviceId from, DeviceId to,
             std::vector<LinkId>& path) const override {
    const std::uint32_t src_port = port_of(from);
    const std::uint32_t dst_port = port_of(to);
    const std::uint32_t src = src_port == PortOrder::kNoPort ? router_of(t, from) : src_port / s_.p;
    const std::uint32_t dst = dst_port == PortOrder::kNoPort ? router_of(t, to) : dst_port / s_.p;
    if (src_port != PortOrder::kNoPort) {
      path.push_back(t.link(from, router0_ + src));
    }
    const std::uint32_t gs = src / s_.a;
    const std::uint32_t gd = dst / s_.a;
    std::uint32_t cur = src;
    if (valiant_ && gs != gd && s_.groups > 2) {
      // An intermediate group other than the source's and the destination's.
      auto mid = static_cast<std::uint32_t>(
          mix_bits((static_cast<std::uint64_t>(src) << 32) | dst) % (s_.groups - 2));
      mid += mid >= std::min(gs, gd) ? 1 : 0;
      mid += mid >= std::max(gs, gd) ? 1 : 0;
      cur = to_group(t, cur, mid, dst, path);
    }
    if (cur / s_.a != gd) {
      cur = to_group(t, cur, gd, dst, path);
    }
    if (cur != dst) {
      path.push_back(t.link(router0_ + cur, router0_ + dst));
    }
    if (dst_port != PortOrder::kNoPort) {
      path.push_back(t.link(router0_ + dst, to));
    }
  }

  [[nodiscard]] std::string describe() const override {
    return fmt::format("dragonfly ({} groups x {} routers, {} hosts and {} global links per "
                       "router), {}",
                       s_.groups, s_.a, s_.p, s_.h, valiant_ ? "Valiant" : "minimal");
  }

private:
  [[nodiscard]] std::uint32_t port_of(DeviceId d) const {
    return d >= router0_ && d < router0_ + s_.groups * s_.a ? PortOrder::kNoPort
                                                            : ports_.port_of(d);
  }
  [[nodiscard]] std::uint32_t router_of(const core::Topology& t, DeviceId d) const {
    if (d < router0_ || d >= router0_ + s_.groups * s_.a) {
      throw core::InternalError(
          fmt::format("device '{}' is not attached to the dragonfly", t.devices()[d].name));
    }
    return d - router0_;
  }

  /// From router `cur` to group `group` (not cur's): a local hop to the router holding the
  /// global link, then the link; returns the router it lands on. `key` picks among parallel links.
  std::uint32_t to_group(const core::Topology& t, std::uint32_t cur, std::uint32_t group,
                         std::uint32_t key, std::vector<LinkId>& path) const {
    const std::uint32_t from_group = cur / s_.a;
    const auto link = wiring_.crossing(from_group, group, key);
    const std::uint32_t gateway = from_group * s_.a + link.out / s_.h;
    if (gateway != cur) {
      path.push_back(t.link(router0_ + cur, router0_ + gateway));
    }
    path.push_back(global_out_[static_cast<std::size_t>(from_group) * s_.a * s_.h + link.out]);
    return group * s_.a + link.in / s_.h;
  }

  DragonflyShape s_;
  PortOrder ports_;
  DeviceId router0_;
  GlobalWiring wiring_;
  std::vector<LinkId> global_out_; ///< per group and global port: its outgoing link
  bool valiant_;
};

} // namespace

std::uint64_t dragonfly_capacity(const core::NetworkSpec& spec) {
  const DragonflyShape s = shape_of(spec, 0);
  const std::uint64_t groups = spec.groups > 0 ? spec.groups : s.max_groups;
  return groups * s.a * s.p;
}

void check_dragonfly(const core::TopologySpec& spec, std::uint64_t ports) {
  const core::NetworkSpec& net = spec.system.network;
  const DragonflyShape s = shape_of(net, ports);
  check_grouped(spec, ports,
                GroupedShape{"dragonfly", "global_links_per_router", "routers_per_group", s.a, s.h,
                             "routers", s.a, "hosts_per_router", s.p, s.max_groups,
                             dragonfly_capacity(net)});
}

void build_dragonfly(const core::NetworkSpec& spec, const HostPorts& ports, core::Topology& t) {
  PortOrder order(ports, false);
  const DragonflyShape s = shape_of(spec, order.size());
  if (s.a == 0 || s.p == 0 || s.groups > s.max_groups ||
      order.size() > static_cast<std::uint64_t>(s.groups) * s.a * s.p) {
    throw core::InternalError("dragonfly built without check_network");
  }
  const core::Bandwidth bw = link_bandwidth(spec, ports);
  const DeviceId router0 = static_cast<DeviceId>(t.devices().size());
  for (std::uint32_t g = 0; g < s.groups; ++g) {
    for (std::uint32_t r = 0; r < s.a; ++r) {
      t.add_device(network_device(fmt::format("net/g{}/r{}", g, r), spec));
    }
  }
  for (std::uint32_t i = 0; i < order.size(); ++i) {
    t.add_duplex(order.device(i), router0 + i / s.p, ports.bandwidth, ports.latency,
                 core::LinkKind::ib);
  }
  // Local links: every group all-to-all.
  for (std::uint32_t g = 0; g < s.groups; ++g) {
    const DeviceId first = router0 + g * s.a;
    for (std::uint32_t r1 = 0; r1 < s.a; ++r1) {
      for (std::uint32_t r2 = r1 + 1; r2 < s.a; ++r2) {
        t.add_duplex(first + r1, first + r2, bw, spec.link_latency, core::LinkKind::ib);
      }
    }
  }
  // Global links: copy c towards offset o leaves group i at port(o, c) and arrives at group
  // i + o at port(g - o, c); each link is added once, from the lower-numbered group.
  const std::uint32_t group_ports = s.a * s.h;
  GlobalWiring wiring(s.groups, group_ports);
  std::vector<LinkId> global_out(static_cast<std::size_t>(s.groups) * group_ports, kNoLink);
  for (std::uint32_t i = 0; i < s.groups; ++i) {
    for (std::uint32_t o = 1; o < s.groups; ++o) {
      const std::uint32_t j = (i + o) % s.groups;
      if (j < i) {
        continue;
      }
      for (std::uint32_t c = 0; c < wiring.copies(o); ++c) {
        const std::uint32_t pi = wiring.port(o, c);
        const std::uint32_t pj = wiring.port(s.groups - o, c);
        const DeviceId ri = router0 + i * s.a + pi / s.h;
        const DeviceId rj = router0 + j * s.a + pj / s.h;
        global_out[static_cast<std::size_t>(i) * group_ports + pi] =
            t.add_link(core::Link{ri, rj, bw, spec.link_latency, core::LinkKind::ib});
        global_out[static_cast<std::size_t>(j) * group_ports + pj] =
            t.add_link(core::Link{rj, ri, bw, spec.link_latency, core::LinkKind::ib});
      }
    }
  }
  t.set_router(std::make_shared<DragonflyRouter>(s, std::move(order), router0, std::move(wiring),
                                                 std::move(global_out), spec.routing == "valiant"));
}

} // namespace collsim::topologies::detail
