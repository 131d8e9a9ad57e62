#include "in_network_support.hpp"

#include <fmt/format.h>

namespace collsim::algorithms::detail::innet {

Fabric fabric_of(const Request& req) {
  Fabric f;
  f.layout = node_layout(req);
  f.topology = req.topology != nullptr && !req.topology->is_full_mesh();
  f.node_switch.reserve(f.layout.nodes());
  for (std::uint32_t k = 0; k < f.layout.nodes(); ++k) {
    f.node_switch.push_back(node_reducing_switch(req, f.layout.topology_node[k]));
  }
  f.network_switch = network_reducing_switch(req);
  return f;
}

std::string network_switch_refusal(const Fabric& f, std::string_view what) {
  if (f.layout.nodes() <= 1 || !f.network_switch.empty()) {
    return {};
  }
  if (!f.topology) {
    return fmt::format("{} reduces in the network switch (InfiniBand SHARP) when the ranks span "
                       "more than one node; without a topology every rank is a node of its own "
                       "({} nodes) and there is no reducing switch",
                       what, f.layout.nodes());
  }
  return fmt::format("{} reduces in the network switch (InfiniBand SHARP) when the ranks span "
                     "more than one node ({} here); the topology has no reducing network switch",
                     what, f.layout.nodes());
}

std::string node_switch_refusal(const Fabric& f, std::string_view what) {
  if (!f.topology) {
    return fmt::format("{} reduces in each node's NVSwitch (NVLink SHARP); without a topology "
                       "there is no reducing switch",
                       what);
  }
  for (std::uint32_t k = 0; k < f.layout.nodes(); ++k) {
    if (f.node_switch[k].empty()) {
      return fmt::format("{} reduces in each node's NVSwitch (NVLink SHARP); topology node {} (of "
                         "rank {}) has no reducing switch",
                         what, f.layout.topology_node[k], f.layout.members[k].front());
    }
  }
  return {};
}

std::string local_ranks_refusal(const Fabric& f, std::uint32_t most, std::string_view what,
                                std::string_view limit) {
  for (std::uint32_t k = 0; k < f.layout.nodes(); ++k) {
    if (f.layout.members[k].size() > most) {
      return fmt::format("{} takes at most {} ranks per node ({}); the node of rank {} holds {}",
                         what, most, limit, f.layout.members[k].front(),
                         f.layout.members[k].size());
    }
  }
  return {};
}

std::int64_t param_or(const Request& req, const std::string& name, std::int64_t fallback) {
  const auto it = req.params.find(name);
  return it == req.params.end() ? fallback : it->second;
}

} // namespace collsim::algorithms::detail::innet
