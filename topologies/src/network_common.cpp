// What the structured network builders share (network_builders.hpp): errors at the user's value,
// the options only some kinds take, the order NICs are attached in, and the global wiring of
// DragonFly groups.

#include "collsim/core/errors.hpp"
#include "network_builders.hpp"

#include <algorithm>
#include <fmt/format.h>

namespace collsim::topologies::detail {

void network_error(const core::TopologySpec& spec, const std::string& key, std::string message) {
  const std::string path = "topology.network." + key;
  throw core::ScenarioError(spec.where(path), path, std::move(message));
}

void check_network_options(const core::TopologySpec& spec) {
  const core::NetworkSpec& net = spec.system.network;
  // SHARP aggregation runs in InfiniBand switches of a tree (hardware.md 3d [S48]).
  if (net.sharp && net.kind != "switch" && net.kind != "fat_tree") {
    network_error(
        spec, "sharp",
        fmt::format("SHARP needs an InfiniBand fat-tree or switch, not a {} network", net.kind));
  }
  // Rails: NIC i of every server on leaf i (hardware.md 4a [S73]); only a fat-tree has leaves.
  if (net.rail_optimized && net.kind != "fat_tree") {
    network_error(spec, "rail_optimized",
                  fmt::format("rail_optimized needs a fat_tree network, not {}", net.kind));
  }
}

PortOrder::PortOrder(const HostPorts& ports, bool rail_major) {
  const std::size_t nodes = ports.nics.size();
  const std::size_t per_node = nodes == 0 ? 0 : ports.nics.front().size();
  devices_.reserve(nodes * per_node);
  if (rail_major) {
    for (std::size_t k = 0; k < per_node; ++k) {
      for (std::size_t n = 0; n < nodes; ++n) {
        devices_.push_back(ports.nics[n].at(k));
      }
    }
  } else {
    for (const auto& node : ports.nics) {
      devices_.insert(devices_.end(), node.begin(), node.end());
    }
  }
  sorted_.reserve(devices_.size());
  for (std::uint32_t i = 0; i < devices_.size(); ++i) {
    sorted_.emplace_back(devices_[i], i);
  }
  std::sort(sorted_.begin(), sorted_.end());
}

std::uint32_t PortOrder::port_of(core::DeviceId d) const {
  const auto it = std::lower_bound(sorted_.begin(), sorted_.end(),
                                   std::pair<core::DeviceId, std::uint32_t>{d, 0});
  return it != sorted_.end() && it->first == d ? it->second : kNoPort;
}

GlobalWiring::GlobalWiring(std::uint32_t groups, std::uint32_t ports)
    : groups_(groups), extra_rank_(groups, 0xffffffffu) {
  if (groups < 2) {
    return;
  }
  base_ = ports / (groups - 1);
  const std::uint32_t rest = ports % (groups - 1);
  // The rest go to offsets 1, g-1, 2, g-2, ... in mirrored pairs (a link towards +o is the other
  // group's link towards -o), and to g/2 (its own mirror) when g is even and one port is left.
  for (std::uint32_t o = 1; o <= rest / 2; ++o) {
    extra_rank_[o] = extras_++;
    extra_rank_[groups - o] = extras_++;
  }
  if (groups % 2 == 0 && rest % 2 == 1) {
    extra_rank_[groups / 2] = extras_++;
  }
}

std::uint32_t GlobalWiring::copies(std::uint32_t offset) const {
  return base_ + (extra_rank_[offset] != 0xffffffffu ? 1 : 0);
}

std::uint32_t GlobalWiring::port(std::uint32_t offset, std::uint32_t copy) const {
  if (copy < base_) {
    return copy * (groups_ - 1) + (offset - 1);
  }
  return base_ * (groups_ - 1) + extra_rank_[offset];
}

GlobalWiring::Crossing GlobalWiring::crossing(std::uint32_t from, std::uint32_t to,
                                              std::uint32_t key) const {
  const std::uint32_t offset = (to + groups_ - from) % groups_;
  const std::uint32_t copy = key % copies(offset);
  return {port(offset, copy), port(groups_ - offset, copy)};
}

std::uint32_t GlobalWiring::used_ports() const {
  return groups_ < 2 ? 0 : base_ * (groups_ - 1) + extras_;
}

void check_grouped(const core::TopologySpec& spec, std::uint64_t ports, const GroupedShape& s) {
  check_network_options(spec);
  const core::NetworkSpec& net = spec.system.network;
  if (net.routing != "minimal" && net.routing != "valiant") {
    network_error(spec, "routing",
                  fmt::format("expected minimal or valiant routing, got '{}'", net.routing));
  }
  if (net.groups > s.max_groups) {
    network_error(spec, s.global_key,
                  fmt::format("{} groups need {} global links per group to join every pair of "
                              "groups, but {} {} x {} {} = {}",
                              net.groups, net.groups - 1, s.carriers_key, s.carriers, s.global_key,
                              s.h, static_cast<std::uint64_t>(s.carriers) * s.h));
  }
  if (ports <= s.capacity) {
    return;
  }
  if (net.groups > 0) {
    network_error(spec, "groups",
                  fmt::format("{} NICs do not fit a {} of {} groups x {} {} x {} {} = {} ports",
                              ports, s.kind, net.groups, s.units, s.units_name, s.hosts,
                              s.hosts_key, s.capacity));
  }
  network_error(spec, s.global_key,
                fmt::format("{} NICs do not fit a {} of {} {} x {} {} per group: at most {} x {} "
                            "+ 1 = {} groups, {} ports",
                            ports, s.kind, s.units, s.units_name, s.hosts, s.hosts_key,
                            s.carriers_key, s.global_key, s.max_groups, s.capacity));
}

std::uint64_t mix_bits(std::uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

} // namespace collsim::topologies::detail
