#include "collsim/core/engine.hpp"

#include "collsim/core/errors.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unordered_map>
#include <utility>

namespace collsim::core {

EngineError stalled_error(std::string_view engine, const Schedule& schedule, Rank r, OpId at) {
  return EngineError(fmt::format(
      "{}: {} {} stalled at operation l{} (the schedule deadlocks; run `collsim verify`)", engine,
      r < schedule.ranks() ? "rank" : "agent", r, at - schedule.rank_begin(r)));
}

EngineError unmatched_receive_error(std::string_view engine) {
  return EngineError(fmt::format("{}: a receive never completed (the schedule deadlocks)", engine));
}

std::vector<DeviceId> participant_devices(const Schedule& schedule, const Topology& topology,
                                          std::string_view engine) {
  const auto& agents = schedule.header().agents;
  if (topology.is_full_mesh()) {
    if (!agents.empty()) {
      throw EngineError(
          fmt::format("{}: the schedule has in-network agents ({}) but the topology is a full mesh "
                      "without switches",
                      engine, fmt::join(agents, ", ")));
    }
    return {};
  }
  std::vector<DeviceId> out;
  out.reserve(schedule.participants());
  for (Rank r = 0; r < schedule.ranks(); ++r) {
    out.push_back(topology.device_of(r));
  }
  for (const std::string& name : agents) {
    const auto d = topology.find_device(name);
    if (!d) {
      throw EngineError(
          fmt::format("{}: agent '{}' is not a device of the topology", engine, name));
    }
    // In-network agents run on reducing switches; host agents (a stack staging buffers through
    // host memory) on CPU sockets and NUMA domains.
    const Device& dev = topology.devices()[*d];
    if (!dev.reduces && dev.kind != DeviceKind::cpu && dev.kind != DeviceKind::numa) {
      throw EngineError(fmt::format("{}: agent '{}' is a device that cannot reduce in the network",
                                    engine, name));
    }
    out.push_back(*d);
  }
  return out;
}

std::vector<LinkLoad> link_loads(const Schedule& schedule, const Topology& topology,
                                 const std::vector<MessageTiming>& messages) {
  if (topology.is_full_mesh() || messages.empty()) {
    return {};
  }
  const std::vector<DeviceId> device = participant_devices(schedule, topology, "link loads");
  std::unordered_map<std::uint64_t, std::vector<LinkId>> routes;
  std::vector<LinkLoad> load(topology.links().size());
  std::vector<std::vector<std::pair<double, double>>> busy(topology.links().size());
  for (const MessageTiming& m : messages) {
    const Rank from = schedule.rank_of(m.send);
    const Rank to = schedule.peer(m.send);
    const std::uint64_t key = (static_cast<std::uint64_t>(from) << 32) | to;
    auto it = routes.find(key);
    if (it == routes.end()) {
      it = routes.emplace(key, topology.route_between(device[from], device[to])).first;
    }
    const std::uint64_t bytes = schedule.length(m.send);
    for (LinkId l : it->second) {
      load[l].bytes += bytes;
      ++load[l].messages;
      busy[l].emplace_back(m.start.value, m.end.value);
    }
  }
  std::vector<LinkLoad> out;
  for (LinkId l = 0; l < load.size(); ++l) {
    if (load[l].messages == 0) {
      continue;
    }
    auto& iv = busy[l];
    std::sort(iv.begin(), iv.end());
    double total = 0.0;
    double from = iv.front().first;
    double to = iv.front().second;
    for (const auto& [a, b] : iv) {
      if (a > to) {
        total += to - from;
        from = a;
        to = b;
      } else {
        to = std::max(to, b);
      }
    }
    total += to - from;
    load[l].link = l;
    load[l].busy = Seconds{total};
    out.push_back(load[l]);
  }
  return out;
}

std::string link_label(const Topology& topology, LinkId link) {
  const Link& l = topology.links().at(link);
  return fmt::format("{} -> {}", topology.devices()[l.from].name, topology.devices()[l.to].name);
}

Bandwidth algorithm_bandwidth(Bytes size, Seconds time) {
  if (time.value <= 0.0) {
    return Bandwidth{0.0};
  }
  return Bandwidth{size.as_double() / time.value};
}

Bandwidth bus_bandwidth(CollectiveKind c, std::uint32_t ranks, Bytes size, Seconds time) {
  return Bandwidth{algorithm_bandwidth(size, time).bytes_per_second * busbw_factor(c, ranks)};
}

} // namespace collsim::core
