// DragonFly+ (Shpiner, Haramaty, Eliad, Zdornov, Gafni, Zahavi, "Dragonfly+: Low Cost Topology
// for Scaling Datacenters", HiPINEB 2017; hardware.md 4a [S68] [S69]), as in JUWELS Booster.
//
//   Each group is a 2-level leaf/spine fat tree: l leaves with hosts_per_leaf hosts each, s spines,
//   every leaf one link to every spine. Spines carry the global links, global_links_per_spine each;
//   a group's s * global_links_per_spine global ports are spread over the other groups as in a
//   DragonFly (GlobalWiring), so every pair of groups is joined when s * h >= groups - 1.
//
// Routing (deterministic, O(hops)):
//   minimal   leaf -> spine holding the global link to the destination group -> global link ->
//             spine -> leaf (3 switch-to-switch links, 1 global); inside a group leaf -> spine ->
//             leaf, the spine chosen by destination mod spines (D-mod-k).
//   valiant   minimal to an intermediate group (a hash of source and destination switches), then
//             minimal to the destination: at most 2 global links.

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

struct DragonflyPlusShape {
  std::uint32_t groups = 1;
  std::uint32_t leaves = 0; ///< per group
  std::uint32_t spines = 0; ///< per group
  std::uint32_t hosts = 0;  ///< per leaf
  std::uint32_t h = 0;      ///< global links per spine
  std::uint64_t max_groups = 0;
};

DragonflyPlusShape shape_of(const core::NetworkSpec& spec, std::uint64_t ports) {
  DragonflyPlusShape s;
  s.leaves = spec.leaves_per_group;
  s.spines = spec.spines_per_group;
  s.hosts = spec.hosts_per_leaf;
  s.h = spec.global_links_per_spine;
  s.max_groups = static_cast<std::uint64_t>(s.spines) * s.h + 1;
  const std::uint64_t per_group = static_cast<std::uint64_t>(s.leaves) * s.hosts;
  if (spec.groups > 0) {
    s.groups = spec.groups;
  } else if (per_group > 0) {
    s.groups = static_cast<std::uint32_t>(std::max<std::uint64_t>(
        1, std::min<std::uint64_t>((ports + per_group - 1) / per_group,
                                   std::numeric_limits<std::uint32_t>::max())));
  }
  return s;
}

class DragonflyPlusRouter final : public core::NetworkRouter {
public:
  DragonflyPlusRouter(const DragonflyPlusShape& shape, PortOrder ports, DeviceId leaf0,
                      DeviceId spine0, GlobalWiring wiring, std::vector<LinkId> global_out,
                      bool valiant)
      : s_(shape), ports_(std::move(ports)), leaf0_(leaf0), spine0_(spine0),
        wiring_(std::move(wiring)), global_out_(std::move(global_out)), valiant_(valiant) {}

  void route(const core::Topology& t, DeviceId from, DeviceId to,
             std::vector<LinkId>& path) const override {
    const Pos src = locate(t, from);
    const Pos dst = locate(t, to);
    Pos cur = src.nic ? Pos{false, false, src.index / s_.hosts} : src;
    const Pos last = dst.nic ? Pos{false, false, dst.index / s_.hosts} : dst;
    if (src.nic) {
      path.push_back(t.link(from, device(cur)));
    }
    const std::uint32_t key = dst.index;
    const std::uint32_t gs = group_of(cur);
    const std::uint32_t gd = group_of(last);
    if (valiant_ && gs != gd && s_.groups > 2) {
      const std::uint64_t a = switch_number(cur);
      const std::uint64_t b = switch_number(last);
      auto mid = static_cast<std::uint32_t>(mix_bits((a << 32) | b) % (s_.groups - 2));
      mid += mid >= std::min(gs, gd) ? 1 : 0;
      mid += mid >= std::max(gs, gd) ? 1 : 0;
      cur = to_group(t, cur, mid, key, path);
    }
    if (group_of(cur) != gd) {
      cur = to_group(t, cur, gd, key, path);
    }
    in_group(t, cur, last, key, path);
    if (dst.nic) {
      path.push_back(t.link(device(last), to));
    }
  }

  [[nodiscard]] std::string describe() const override {
    return fmt::format("dragonfly+ ({} groups x {} leaves x {} spines, {} hosts per leaf, {} "
                       "global links per spine), {}",
                       s_.groups, s_.leaves, s_.spines, s_.hosts, s_.h,
                       valiant_ ? "Valiant" : "minimal");
  }

private:
  struct Pos {
    bool nic = false;
    bool spine = false;
    std::uint32_t index = 0; ///< port, or leaf (spine) number across all groups
    bool operator==(const Pos&) const = default;
  };

  [[nodiscard]] Pos locate(const core::Topology& t, DeviceId d) const {
    if (d >= leaf0_ && d < leaf0_ + s_.groups * s_.leaves) {
      return {false, false, d - leaf0_};
    }
    if (d >= spine0_ && d < spine0_ + s_.groups * s_.spines) {
      return {false, true, d - spine0_};
    }
    const std::uint32_t port = ports_.port_of(d);
    if (port == PortOrder::kNoPort) {
      throw core::InternalError(
          fmt::format("device '{}' is not attached to the dragonfly+", t.devices()[d].name));
    }
    return {true, false, port};
  }
  [[nodiscard]] DeviceId device(Pos p) const {
    return p.spine ? spine0_ + p.index : leaf0_ + p.index;
  }
  [[nodiscard]] std::uint32_t group_of(Pos p) const {
    return p.spine ? p.index / s_.spines : p.index / s_.leaves;
  }
  /// A number per switch, for Valiant's hash.
  [[nodiscard]] std::uint64_t switch_number(Pos p) const {
    return p.spine ? static_cast<std::uint64_t>(s_.groups) * s_.leaves + p.index : p.index;
  }

  void hop(const core::Topology& t, Pos& cur, Pos next, std::vector<LinkId>& path) const {
    path.push_back(t.link(device(cur), device(next)));
    cur = next;
  }

  /// Between two switches of one group: leaf and spine are adjacent; two leaves meet at spine
  /// key mod spines, two spines at leaf key mod leaves.
  void in_group(const core::Topology& t, Pos cur, Pos target, std::uint32_t key,
                std::vector<LinkId>& path) const {
    if (cur == target) {
      return;
    }
    const std::uint32_t g = group_of(cur);
    if (cur.spine == target.spine) {
      const Pos via = cur.spine ? Pos{false, false, g * s_.leaves + key % s_.leaves}
                                : Pos{false, true, g * s_.spines + key % s_.spines};
      hop(t, cur, via, path);
    }
    hop(t, cur, target, path);
  }

  /// From switch `cur` to group `group` (not cur's): to the spine holding the global link, then
  /// the link; returns the spine it lands on.
  Pos to_group(const core::Topology& t, Pos cur, std::uint32_t group, std::uint32_t key,
               std::vector<LinkId>& path) const {
    const std::uint32_t from_group = group_of(cur);
    const auto link = wiring_.crossing(from_group, group, key);
    in_group(t, cur, Pos{false, true, from_group * s_.spines + link.out / s_.h}, key, path);
    path.push_back(global_out_[static_cast<std::size_t>(from_group) * s_.spines * s_.h + link.out]);
    return {false, true, group * s_.spines + link.in / s_.h};
  }

  DragonflyPlusShape s_;
  PortOrder ports_;
  DeviceId leaf0_;
  DeviceId spine0_;
  GlobalWiring wiring_;
  std::vector<LinkId> global_out_; ///< per group and global port: its outgoing link
  bool valiant_;
};

} // namespace

std::uint64_t dragonfly_plus_capacity(const core::NetworkSpec& spec) {
  const DragonflyPlusShape s = shape_of(spec, 0);
  const std::uint64_t groups = spec.groups > 0 ? spec.groups : s.max_groups;
  return groups * s.leaves * s.hosts;
}

void check_dragonfly_plus(const core::TopologySpec& spec, std::uint64_t ports) {
  const core::NetworkSpec& net = spec.system.network;
  const DragonflyPlusShape s = shape_of(net, ports);
  check_grouped(spec, ports,
                GroupedShape{"dragonfly+", "global_links_per_spine", "spines_per_group", s.spines,
                             s.h, "leaves", s.leaves, "hosts_per_leaf", s.hosts, s.max_groups,
                             dragonfly_plus_capacity(net)});
}

void build_dragonfly_plus(const core::NetworkSpec& spec, const HostPorts& ports,
                          core::Topology& t) {
  PortOrder order(ports, false);
  const DragonflyPlusShape s = shape_of(spec, order.size());
  if (s.leaves == 0 || s.spines == 0 || s.hosts == 0 || s.groups > s.max_groups ||
      order.size() > static_cast<std::uint64_t>(s.groups) * s.leaves * s.hosts) {
    throw core::InternalError("dragonfly+ built without check_network");
  }
  const core::Bandwidth bw = link_bandwidth(spec, ports);
  const DeviceId leaf0 = static_cast<DeviceId>(t.devices().size());
  for (std::uint32_t g = 0; g < s.groups; ++g) {
    for (std::uint32_t i = 0; i < s.leaves; ++i) {
      t.add_device(network_device(fmt::format("net/g{}/leaf{}", g, i), spec));
    }
  }
  const DeviceId spine0 = static_cast<DeviceId>(t.devices().size());
  for (std::uint32_t g = 0; g < s.groups; ++g) {
    for (std::uint32_t j = 0; j < s.spines; ++j) {
      t.add_device(network_device(fmt::format("net/g{}/spine{}", g, j), spec));
    }
  }
  for (std::uint32_t i = 0; i < order.size(); ++i) {
    t.add_duplex(order.device(i), leaf0 + i / s.hosts, ports.bandwidth, ports.latency,
                 core::LinkKind::ib);
  }
  for (std::uint32_t g = 0; g < s.groups; ++g) {
    for (std::uint32_t i = 0; i < s.leaves; ++i) {
      for (std::uint32_t j = 0; j < s.spines; ++j) {
        t.add_duplex(leaf0 + g * s.leaves + i, spine0 + g * s.spines + j, bw, spec.link_latency,
                     core::LinkKind::ib);
      }
    }
  }
  const std::uint32_t group_ports = s.spines * s.h;
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
        const DeviceId si = spine0 + i * s.spines + pi / s.h;
        const DeviceId sj = spine0 + j * s.spines + pj / s.h;
        global_out[static_cast<std::size_t>(i) * group_ports + pi] =
            t.add_link(core::Link{si, sj, bw, spec.link_latency, core::LinkKind::ib});
        global_out[static_cast<std::size_t>(j) * group_ports + pj] =
            t.add_link(core::Link{sj, si, bw, spec.link_latency, core::LinkKind::ib});
      }
    }
  }
  t.set_router(std::make_shared<DragonflyPlusRouter>(s, std::move(order), leaf0, spine0,
                                                     std::move(wiring), std::move(global_out),
                                                     spec.routing == "valiant"));
}

} // namespace collsim::topologies::detail
