// Fat tree: a folded Clos of radix-R switches (hardware.md 4a [S71] [S72]), 1, 2 or 3 levels.
//
//   leaves      d = floor(R*T / (T+1)) ports down to NICs, u = R - d up (taper T = down:up >= 1;
//               T = 1 is full bisection, Narval's 33:7 is T = 4.7)
//   2 levels    u spines; every leaf has one link to every spine; at most R leaves: R*d hosts
//   3 levels    pods of at most R/2 leaves and u aggregation switches (every leaf of a pod one link
//               to every aggregation switch of the pod); aggregation switch j of every pod has R/2
//               links up, to cores j*(R/2) .. j*(R/2) + R/2 - 1; at most R pods: R*(R/2)*d hosts
//   1 level     one switch of R ports
//
// Only as many leaves and pods as the NICs need are built; spines and cores are always all there.
// Rail-optimized (hardware.md 4a [S73] [S20]): NICs are attached rail-major, NIC k of consecutive
// nodes on the same leaf, so same-rail traffic crosses one switch.
//
// Routing is up/down with D-mod-k (Zahavi's destination-mod-k): a route climbs only as far as the
// lowest common ancestor; at a leaf it takes up port dst mod u, at an aggregation switch up port
// (dst / u) mod (R/2), where dst is the destination's port index, so destinations spread evenly
// over the spines (cores); the way down is unique. Routes between NICs of one leaf stay on the
// leaf (2 links); across leaves 4 links; across pods 6 links. Routes to and from switches (SHARP
// agents: with `sharp` the first top-level switch reduces) climb to them the same way.

#include "collsim/core/errors.hpp"
#include "network_builders.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <memory>

namespace collsim::topologies::detail {

namespace {

using core::DeviceId;

/// The switch counts that follow from the spec, for `ports` NICs.
struct FatTreeShape {
  std::uint32_t levels = 2;
  std::uint32_t radix = 0;
  std::uint32_t down = 0; ///< leaf ports to NICs
  std::uint32_t up = 0;   ///< leaf ports to spines / aggregation switches
  std::uint32_t half = 0; ///< R/2: leaves per pod and core links per aggregation switch
  std::uint64_t capacity = 0;
  std::uint32_t leaves = 1;
  std::uint32_t pods = 1; ///< 3 levels
};

FatTreeShape shape_of(const core::NetworkSpec& spec, std::uint64_t ports) {
  FatTreeShape s;
  s.levels = spec.levels;
  s.radix = spec.radix;
  const std::uint64_t r = spec.radix;
  if (s.levels == 1) {
    s.down = spec.radix;
    s.capacity = r;
  } else {
    // The epsilon keeps exact ratios such as 33:7 on R = 40 (33 down) from rounding to 32.
    const double down = std::floor(static_cast<double>(r) * spec.taper / (spec.taper + 1.0) + 1e-9);
    s.down = static_cast<std::uint32_t>(std::clamp(down, 0.0, static_cast<double>(r)));
    s.up = spec.radix - s.down;
    s.half = spec.radix / 2;
    if (s.down >= 1 && s.up >= 1) {
      s.capacity = s.levels == 2 ? r * s.down : r * s.half * s.down;
    }
  }
  if (s.down > 0) {
    s.leaves =
        static_cast<std::uint32_t>(std::max<std::uint64_t>(1, (ports + s.down - 1) / s.down));
  }
  if (s.levels == 3 && s.half > 0) {
    s.pods = (s.leaves + s.half - 1) / s.half;
  }
  return s;
}

/// Up/down D-mod-k routing over the switches the builder added: leaves, then the middle level
/// (spines, or the aggregation switches pod by pod), then the cores, each a contiguous id range.
class FatTreeRouter final : public core::NetworkRouter {
public:
  FatTreeRouter(const FatTreeShape& shape, PortOrder ports, DeviceId leaf0, DeviceId mid0,
                std::uint32_t mids, DeviceId core0, std::uint32_t cores)
      : s_(shape), ports_(std::move(ports)), leaf0_(leaf0), mid0_(mid0), mids_(mids), core0_(core0),
        cores_(cores) {}

  void route(const core::Topology& t, DeviceId from, DeviceId to,
             std::vector<core::LinkId>& path) const override {
    Pos cur = locate(t, from);
    const Pos target = locate(t, to);
    const std::uint32_t key = target.index;
    // An up/down route has at most 2 * levels + 2 links; a switch-to-switch route that turns
    // at a leaf a few more. The bound only guards against a wiring bug.
    for (int guard = 0; !(cur == target); ++guard) {
      if (guard > 12) {
        throw core::InternalError(fmt::format("fat-tree route from '{}' to '{}' does not end",
                                              t.devices()[from].name, t.devices()[to].name));
      }
      const Pos next = below(cur, target) ? down(cur, target) : up(cur, target, key);
      path.push_back(t.link(device(cur), device(next)));
      cur = next;
    }
  }

  [[nodiscard]] std::string describe() const override {
    return fmt::format("fat tree ({} levels, radix {}, {}:{} leaf ports), up/down D-mod-k",
                       s_.levels, s_.radix, s_.down, s_.up);
  }

private:
  enum class Tier : std::uint8_t { nic, leaf, mid, core };
  struct Pos {
    Tier tier = Tier::nic;
    std::uint32_t index = 0; ///< port, leaf, spine (pod * u + j for aggregation switches), core
    bool operator==(const Pos&) const = default;
  };

  [[nodiscard]] Pos locate(const core::Topology& t, DeviceId d) const {
    if (d >= leaf0_ && d < leaf0_ + s_.leaves) {
      return {Tier::leaf, d - leaf0_};
    }
    if (d >= mid0_ && d < mid0_ + mids_) {
      return {Tier::mid, d - mid0_};
    }
    if (d >= core0_ && d < core0_ + cores_) {
      return {Tier::core, d - core0_};
    }
    const std::uint32_t port = ports_.port_of(d);
    if (port == PortOrder::kNoPort) {
      throw core::InternalError(
          fmt::format("device '{}' is not attached to the fat tree", t.devices()[d].name));
    }
    return {Tier::nic, port};
  }

  [[nodiscard]] DeviceId device(Pos p) const {
    switch (p.tier) {
    case Tier::nic: return ports_.device(p.index);
    case Tier::leaf: return leaf0_ + p.index;
    case Tier::mid: return mid0_ + p.index;
    case Tier::core: return core0_ + p.index;
    }
    throw core::InternalError("unknown fat-tree tier");
  }

  [[nodiscard]] std::uint32_t leaf_of(Pos p) const {
    return p.tier == Tier::nic ? p.index / s_.down : p.index;
  }
  /// The pod of a NIC, leaf or aggregation switch (3 levels).
  [[nodiscard]] std::uint32_t pod_of(Pos p) const {
    return p.tier == Tier::mid ? p.index / s_.up : leaf_of(p) / s_.half;
  }
  [[nodiscard]] std::uint32_t pod_leaves(std::uint32_t pod) const {
    return std::min(s_.half, s_.leaves - pod * s_.half);
  }

  /// Whether `target` lies below (or is) x, so the route descends from x.
  [[nodiscard]] bool below(Pos x, Pos target) const {
    if (x == target) {
      return true;
    }
    switch (x.tier) {
    case Tier::nic: return false;
    case Tier::leaf: return target.tier == Tier::nic && leaf_of(target) == x.index;
    case Tier::mid:
      if (target.tier != Tier::nic && target.tier != Tier::leaf) {
        return false;
      }
      return s_.levels == 2 || pod_of(target) == pod_of(x);
    case Tier::core:
      // Core c reaches aggregation switch c / (R/2) of every pod, and through it every leaf.
      return target.tier != Tier::core &&
             (target.tier != Tier::mid || target.index % s_.up == x.index / s_.half);
    }
    return false;
  }

  /// One step down from x towards target, which lies below x.
  [[nodiscard]] Pos down(Pos x, Pos target) const {
    switch (x.tier) {
    case Tier::leaf: return target;
    case Tier::mid: return target.tier == Tier::leaf ? target : Pos{Tier::leaf, leaf_of(target)};
    case Tier::core: return {Tier::mid, pod_of(target) * s_.up + x.index / s_.half};
    case Tier::nic: break;
    }
    throw core::InternalError("fat-tree route descends from a NIC");
  }

  /// One step from x towards target, which does not lie below x: up by D-mod-k on `key`, or, for
  /// a target beside x (another spine, a core x's aggregation switch does not reach), down to a
  /// leaf to climb again.
  [[nodiscard]] Pos up(Pos x, Pos target, std::uint32_t key) const {
    switch (x.tier) {
    case Tier::nic: return {Tier::leaf, leaf_of(x)};
    case Tier::leaf:
      if (s_.levels == 2) {
        return target.tier == Tier::mid ? target : Pos{Tier::mid, key % s_.up};
      } else {
        const std::uint32_t base = (x.index / s_.half) * s_.up;
        if (target.tier == Tier::mid) {
          return {Tier::mid, base + target.index % s_.up};
        }
        if (target.tier == Tier::core) {
          return {Tier::mid, base + target.index / s_.half};
        }
        return {Tier::mid, base + key % s_.up};
      }
    case Tier::mid:
      if (s_.levels == 3) {
        const std::uint32_t j = x.index % s_.up;
        if (target.tier == Tier::core && target.index / s_.half == j) {
          return target;
        }
        if (target.tier == Tier::nic || target.tier == Tier::leaf ||
            (target.tier == Tier::mid && target.index % s_.up == j)) {
          return {Tier::core, j * s_.half + (key / s_.up) % s_.half};
        }
      }
      {
        // Turn at a leaf below x: another spine, or an aggregation switch (core) of another rank.
        const std::uint32_t pod = s_.levels == 3 ? pod_of(x) : 0;
        const std::uint32_t leaves = s_.levels == 3 ? pod_leaves(pod) : s_.leaves;
        return {Tier::leaf, pod * s_.half + key % leaves};
      }
    case Tier::core:
      // Down to this core's aggregation switch in the target's pod (pod key mod pods for a core).
      return {Tier::mid, (target.tier == Tier::mid ? pod_of(target) : key % s_.pods) * s_.up +
                             x.index / s_.half};
    }
    throw core::InternalError("unknown fat-tree tier");
  }

  FatTreeShape s_;
  PortOrder ports_;
  DeviceId leaf0_;
  DeviceId mid0_;
  std::uint32_t mids_;
  DeviceId core0_;
  std::uint32_t cores_;
};

} // namespace

std::uint64_t fat_tree_capacity(const core::NetworkSpec& spec) {
  return shape_of(spec, 0).capacity;
}

void check_fat_tree(const core::TopologySpec& spec, std::uint64_t ports) {
  check_network_options(spec);
  const core::NetworkSpec& net = spec.system.network;
  if (net.levels < 1 || net.levels > 3) {
    network_error(spec, "levels",
                  fmt::format("a fat-tree has 1, 2 or 3 levels, got {}", net.levels));
  }
  const FatTreeShape s = shape_of(net, ports);
  if (net.levels > 1) {
    if (!(net.taper >= 1.0)) {
      network_error(
          spec, "taper",
          fmt::format("the taper (leaf ports down:up) must be at least 1, got {:g}", net.taper));
    }
    if (s.down < 1 || s.up < 1) {
      network_error(spec, "radix",
                    fmt::format("radix {} is too small for taper {:g}: a leaf would have {} "
                                "ports down and {} up (at least 1 each)",
                                net.radix, net.taper, s.down, s.up));
    }
  }
  if (ports > s.capacity) {
    const std::string layout =
        net.levels == 1 ? fmt::format("one switch of {} ports", net.radix)
        : net.levels == 2
            ? fmt::format("{} leaves x {} ports down", net.radix, s.down)
            : fmt::format("{} pods x {} leaves x {} ports down", net.radix, s.half, s.down);
    network_error(spec, "radix",
                  fmt::format("{} NICs do not fit a {}-level fat tree of radix {}: it attaches "
                              "at most {} ({})",
                              ports, net.levels, net.radix, s.capacity, layout));
  }
}

void build_fat_tree(const core::NetworkSpec& spec, const HostPorts& ports, core::Topology& t) {
  PortOrder order(ports, spec.rail_optimized);
  const FatTreeShape s = shape_of(spec, order.size());
  if (s.down == 0 || (s.levels > 1 && s.up == 0) || order.size() > s.capacity) {
    throw core::InternalError("fat tree built without check_network");
  }
  const core::Bandwidth bw = link_bandwidth(spec, ports);
  const auto top = [&](core::Device d, bool first) {
    d.reduces = spec.sharp && first;
    return d;
  };

  const DeviceId leaf0 = static_cast<DeviceId>(t.devices().size());
  for (std::uint32_t i = 0; i < s.leaves; ++i) {
    t.add_device(top(network_device(fmt::format("net/leaf{}", i), spec), s.levels == 1 && i == 0));
  }
  const DeviceId mid0 = static_cast<DeviceId>(t.devices().size());
  std::uint32_t mids = 0;
  if (s.levels == 2) {
    mids = s.up;
    for (std::uint32_t j = 0; j < s.up; ++j) {
      t.add_device(top(network_device(fmt::format("net/spine{}", j), spec), j == 0));
    }
  } else if (s.levels == 3) {
    mids = s.pods * s.up;
    for (std::uint32_t q = 0; q < s.pods; ++q) {
      for (std::uint32_t j = 0; j < s.up; ++j) {
        t.add_device(network_device(fmt::format("net/pod{}/agg{}", q, j), spec));
      }
    }
  }
  const DeviceId core0 = static_cast<DeviceId>(t.devices().size());
  const std::uint32_t cores = s.levels == 3 ? s.up * s.half : 0;
  for (std::uint32_t c = 0; c < cores; ++c) {
    t.add_device(top(network_device(fmt::format("net/core{}", c), spec), c == 0));
  }

  for (std::uint32_t p = 0; p < order.size(); ++p) {
    t.add_duplex(order.device(p), leaf0 + p / s.down, ports.bandwidth, ports.latency,
                 core::LinkKind::ib);
  }
  for (std::uint32_t i = 0; i < s.leaves && s.levels > 1; ++i) {
    const std::uint32_t base = s.levels == 2 ? 0 : (i / s.half) * s.up;
    for (std::uint32_t j = 0; j < s.up; ++j) {
      t.add_duplex(leaf0 + i, mid0 + base + j, bw, spec.link_latency, core::LinkKind::ib);
    }
  }
  for (std::uint32_t a = 0; a < mids && s.levels == 3; ++a) {
    const std::uint32_t j = a % s.up;
    for (std::uint32_t c = 0; c < s.half; ++c) {
      t.add_duplex(mid0 + a, core0 + j * s.half + c, bw, spec.link_latency, core::LinkKind::ib);
    }
  }
  t.set_router(
      std::make_shared<FatTreeRouter>(s, std::move(order), leaf0, mid0, mids, core0, cores));
}

} // namespace collsim::topologies::detail
