#include "generator_support.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <map>

namespace collsim::algorithms::detail {

std::string size_limit_refusal(const OpCounts& counts) {
  if (counts.ops > core::Schedule::kMaxOps) {
    return fmt::format("the schedule would need {} operations; a schedule holds at most {}",
                       counts.ops, core::Schedule::kMaxOps);
  }
  return {};
}

std::uint32_t NodeLayout::max_per_node() const {
  std::size_t most = 0;
  for (const auto& m : members) {
    most = std::max(most, m.size());
  }
  return static_cast<std::uint32_t>(most);
}

bool NodeLayout::uniform() const {
  return std::all_of(members.begin(), members.end(),
                     [&](const auto& m) { return m.size() == members.front().size(); });
}

NodeLayout node_layout(const Request& req) {
  NodeLayout out;
  const std::uint32_t p = req.ranks;
  out.node.resize(p);
  out.local.resize(p);
  const core::Topology* t = req.topology;
  const bool per_rank = t == nullptr || t->is_full_mesh() || t->rank_count() < p;
  std::map<std::uint32_t, std::uint32_t> index; // topology node -> node index
  for (core::Rank r = 0; r < p; ++r) {
    const std::uint32_t tn = per_rank ? r : t->node_of(r);
    const auto [it, fresh] = index.try_emplace(tn, static_cast<std::uint32_t>(out.members.size()));
    if (fresh) {
      out.members.emplace_back();
      out.topology_node.push_back(tn);
    }
    out.node[r] = it->second;
    out.local[r] = static_cast<std::uint32_t>(out.members[it->second].size());
    out.members[it->second].push_back(r);
  }
  return out;
}

std::string node_reducing_switch(const Request& req, std::uint32_t topology_node) {
  const core::Topology* t = req.topology;
  if (t == nullptr || t->is_full_mesh()) {
    return {};
  }
  for (core::DeviceId d : t->reducing_switches()) {
    const core::Device& dev = t->devices()[d];
    if (dev.kind != core::DeviceKind::network_switch && dev.node == topology_node) {
      return dev.name;
    }
  }
  return {};
}

std::string network_reducing_switch(const Request& req) {
  const core::Topology* t = req.topology;
  if (t == nullptr || t->is_full_mesh()) {
    return {};
  }
  for (core::DeviceId d : t->reducing_switches()) {
    const core::Device& dev = t->devices()[d];
    if (dev.kind == core::DeviceKind::network_switch) {
      return dev.name;
    }
  }
  return {};
}

} // namespace collsim::algorithms::detail
