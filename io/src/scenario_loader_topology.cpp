// The scenario's `topology` section: uniform, cluster and system machines, the node (NVLink,
// PCIe, CPU, NICs), the network and the placement (docs/scenario-format.md, "topology").

#include "scenario_loader_parts.hpp"

#include "collsim/topologies/nic_kinds.hpp"

#include <cmath>
#include <limits>

namespace collsim::io::scenario_detail {

core::TopologySpec Loader::topology(const Field& section, const core::TopologySpec* base) const {
  const Located& at = section.value;
  if (!at.node.IsMap()) {
    fail(at, fmt::format("expected a map, got {}", describe(at.node)));
  }
  // The valid keys depend on the kind, so the kind is read first. Without one, check the keys
  // against every kind's so that a misspelt 'kind' still gets its "did you mean".
  const std::optional<Field> kind = find_key(at, "kind");
  if (!kind && base == nullptr) {
    std::vector<std::string_view> all;
    for (const auto& keys : {std::span<const std::string_view>(kUniformKeys),
                             std::span<const std::string_view>(kClusterKeys),
                             std::span<const std::string_view>(kSystemKeys)}) {
      for (const auto key : keys) {
        if (!contains(all, key)) {
          all.push_back(key);
        }
      }
    }
    (void)read_map(at, all, kTopologyRequired); // throws: 'kind' is missing
    fail(at, "missing required key 'kind'");
  }
  const std::string kind_name =
      kind ? one_of(kind->value, "topology kind", "a topology kind", kTopologyKinds) : base->kind;
  core::TopologySpec out;
  if (base != nullptr && base->kind == kind_name) {
    out = *base;
  }
  out.kind = kind_name;
  out.pos = section.key_pos;
  const auto keys_of = [](std::string_view k) -> std::span<const std::string_view> {
    if (k == "uniform") {
      return kUniformKeys;
    }
    if (k == "cluster") {
      return kClusterKeys;
    }
    return kSystemKeys;
  };
  const KeyExplainer explain = [&](std::string_view key) -> std::string {
    for (const auto other : kTopologyKinds) {
      if (other != out.kind && contains(keys_of(other), key)) {
        return fmt::format("key '{}' is not valid for a {} topology (it is a {} key)", key,
                           out.kind, other);
      }
    }
    return {};
  };
  const Fields fields = read_map(at, keys_of(out.kind), {}, explain);
  for (const auto& f : fields.fields) {
    const std::string& k = f.key;
    const Located& v = f.value;
    out.value_pos[v.path] = v.pos;
    if (k == "kind") {
      continue;
    }
    // The endpoint keys first: every kind shares them.
    if (k == "overhead") {
      out.endpoint.overhead = seconds(v);
    } else if (k == "gap") {
      out.endpoint.gap = seconds(v);
    } else if (k == "copy_bandwidth") {
      out.endpoint.copy_bandwidth = bandwidth(v);
    } else if (out.kind == "uniform") {
      if (k == "latency") {
        out.uniform.latency = seconds(v);
      } else if (k == "bandwidth") {
        out.uniform.bandwidth = bandwidth(v);
      } else if (k == "reduce_bandwidth") {
        out.uniform.reduce_bandwidth = bandwidth(v);
      }
    } else if (out.kind == "cluster") {
      cluster_key(f, out.cluster);
    } else {
      system_key(f, out);
    }
  }
  if (out.kind == "cluster") {
    check_cluster(fields, out.cluster);
  }
  return out;
}

void Loader::system_key(const Field& f, core::TopologySpec& spec) const {
  core::SystemSpec& sys = spec.system;
  if (f.key == "nodes") {
    sys.nodes = count(f.value);
  } else if (f.key == "node") {
    node_section(f.value, spec);
  } else if (f.key == "network") {
    network_section(f.value, spec);
  } else if (f.key == "placement") {
    placement_section(f.value, spec);
  }
}

std::uint32_t Loader::count0(const Located& at) {
  const std::int64_t v = integer(at, "an integer");
  if (v < 0) {
    fail(at, fmt::format("must be at least 0, got {}", v));
  }
  if (v > kMaxCount) {
    fail(at, fmt::format("must be at most {}, got {}", kMaxCount, v));
  }
  return static_cast<std::uint32_t>(v);
}

void Loader::node_section(const Located& at, core::TopologySpec& spec) const {
  core::NodeSpec& n = spec.system.node;
  const Fields fields = section(at, kNodeKeys, spec);
  for (const auto& f : fields.fields) {
    const std::string& k = f.key;
    const Located& v = f.value;
    if (k == "gpus") {
      n.gpus = count0(v);
    } else if (k == "reduce_bandwidth") {
      n.reduce_bandwidth = bandwidth(v);
    } else if (k == "nvlink") {
      nvlink_section(v, spec);
    } else if (k == "pcie") {
      pcie_section(v, spec);
    } else if (k == "cpu") {
      cpu_section(v, spec);
    } else if (k == "nics") {
      n.nics = count0(v);
    } else if (k == "nic_bandwidth") {
      n.nic_bandwidth = bandwidth(v);
    } else if (k == "nic_latency") {
      n.nic_latency = seconds(v);
    } else if (k == "nic_kind") {
      n.nic_kind = nic_kind(v);
    } else if (k == "nic_efficiency") {
      n.nic_efficiency = share(v);
    } else if (k == "nic_ports") {
      n.nic_ports = count(v);
    }
  }
  // A kind written here gives the NIC values not written beside it (in a derived scenario it
  // replaces the base's: a new kind is a new NIC).
  if (fields.find("nic_kind") != nullptr) {
    const topologies::NicKind* kind = topologies::find_nic_kind(n.nic_kind);
    if (fields.find("nic_bandwidth") == nullptr) {
      n.nic_bandwidth = kind->line_rate;
    }
    if (fields.find("nic_latency") == nullptr) {
      n.nic_latency = kind->latency;
    }
    if (fields.find("nic_efficiency") == nullptr) {
      n.nic_efficiency = kind->efficiency;
    }
  }
}

std::string Loader::nic_kind(const Located& at) {
  std::vector<std::string_view> names;
  for (const auto& k : topologies::nic_kinds()) {
    names.push_back(k.name);
  }
  return one_of(at, "NIC kind", "a NIC kind", names);
}

void Loader::nvlink_section(const Located& at, core::TopologySpec& spec) const {
  core::NvlinkSpec& nv = spec.system.node.nvlink;
  if (at.node.IsMap()) {
    if (const auto kind = find_key(at, "kind")) {
      const std::string name = one_of(kind->value, "NVLink kind", "an NVLink kind", kNvlinkKinds);
      if (name != nv.kind) {
        nv = core::NvlinkSpec{};
        nv.kind = name;
      }
    }
  }
  // Which keys each kind takes: a links_per_gpu on an all-to-all board is a mistake.
  const auto takes = [&](std::string_view key) {
    if (key == "kind" || key == "link_bandwidth" || key == "latency") {
      return true;
    }
    if (key == "links_per_pair") {
      return nv.kind == "all_to_all" || nv.kind == "bridges";
    }
    if (key == "links") {
      return nv.kind == "explicit";
    }
    return nv.kind == "switch"; // links_per_gpu, sharp, sharp_reduce_bandwidth
  };
  std::vector<std::string_view> valid;
  for (const auto key : kNvlinkKeys) {
    if (takes(key)) {
      valid.push_back(key);
    }
  }
  const KeyExplainer explain = [&](std::string_view key) -> std::string {
    if (!contains(kNvlinkKeys, key)) {
      return {};
    }
    return fmt::format("key '{}' is not valid for NVLink kind '{}'", key, nv.kind);
  };
  const Fields fields = section(at, valid, spec, explain);
  for (const auto& f : fields.fields) {
    const std::string& k = f.key;
    const Located& v = f.value;
    if (k == "link_bandwidth") {
      nv.link_bandwidth = bandwidth(v);
    } else if (k == "latency") {
      nv.latency = seconds(v);
    } else if (k == "links_per_pair") {
      nv.links_per_pair = count(v);
    } else if (k == "links_per_gpu") {
      nv.links_per_gpu = count(v);
    } else if (k == "sharp") {
      nv.sharp = boolean(v);
    } else if (k == "sharp_reduce_bandwidth") {
      nv.sharp_reduce_bandwidth = bandwidth(v);
    } else if (k == "links") {
      nv.links = nvlink_pairs(v, spec);
    }
  }
}

std::vector<core::NvlinkSpec::Pair> Loader::nvlink_pairs(const Located& at,
                                                         core::TopologySpec& spec) const {
  if (!at.node.IsSequence()) {
    fail(at,
         fmt::format("expected a list of [gpu, gpu, links] entries, got {}", describe(at.node)));
  }
  std::vector<core::NvlinkSpec::Pair> out;
  for (std::size_t i = 0; i < at.node.size(); ++i) {
    const Located e = element(at, i, at.node[i]);
    spec.value_pos[e.path] = e.pos;
    if (!e.node.IsSequence() || e.node.size() != 3) {
      fail(e, fmt::format("expected [gpu, gpu, links], got {}",
                          e.node.IsSequence() ? fmt::format("a list of {}", e.node.size())
                                              : describe(e.node)));
    }
    core::NvlinkSpec::Pair p;
    p.a = count0(element(e, 0, e.node[0]));
    p.b = count0(element(e, 1, e.node[1]));
    p.links = count(element(e, 2, e.node[2]));
    out.push_back(p);
  }
  return out;
}

void Loader::pcie_section(const Located& at, core::TopologySpec& spec) const {
  core::PcieSpec& pcie = spec.system.node.pcie;
  const Fields fields = section(at, kPcieKeys, spec);
  for (const auto& f : fields.fields) {
    const std::string& k = f.key;
    const Located& v = f.value;
    if (k == "gen") {
      const std::int64_t gen = integer(v, "a PCIe generation (3, 4, 5 or 6)");
      if (gen < 3 || gen > 6) {
        fail(v, fmt::format("PCIe gen must be 3, 4, 5 or 6, got {}", gen));
      }
      pcie.gen = static_cast<std::uint32_t>(gen);
    } else if (k == "lanes") {
      const std::int64_t lanes = integer(v, "a lane count (1, 2, 4, 8 or 16)");
      if (lanes != 1 && lanes != 2 && lanes != 4 && lanes != 8 && lanes != 16) {
        fail(v, fmt::format("PCIe lanes must be 1, 2, 4, 8 or 16, got {}", lanes));
      }
      pcie.lanes = static_cast<std::uint32_t>(lanes);
    } else if (k == "bandwidth") {
      pcie.bandwidth = bandwidth(v);
    } else if (k == "switches") {
      pcie.switches = count0(v);
    } else if (k == "p2p") {
      pcie.p2p = boolean(v);
    } else if (k == "gdr") {
      pcie.gdr = boolean(v);
    } else if (k == "latency") {
      pcie.latency = seconds(v);
    } else if (k == "switch_latency") {
      pcie.switch_latency = seconds(v);
    } else if (k == "staged_duplex_efficiency") {
      pcie.staged_duplex_efficiency = share(v);
    }
  }
}

void Loader::cpu_section(const Located& at, core::TopologySpec& spec) const {
  core::CpuSpec& cpu = spec.system.node.cpu;
  const Fields fields = section(at, kCpuKeys, spec);
  for (const auto& f : fields.fields) {
    const std::string& k = f.key;
    const Located& v = f.value;
    if (k == "sockets") {
      cpu.sockets = count(v);
    } else if (k == "numa_per_socket") {
      cpu.numa_per_socket = count(v);
    } else if (k == "cores_per_socket") {
      cpu.cores_per_socket = count(v);
    } else if (k == "memory_bandwidth") {
      cpu.memory_bandwidth = bandwidth(v);
    } else if (k == "memory_latency") {
      cpu.memory_latency = seconds(v);
    } else if (k == "inter_socket") {
      cpu.inter_socket = one_of(v, "inter-socket link", "a link kind", kInterSocketKinds);
    } else if (k == "inter_socket_bandwidth") {
      cpu.inter_socket_bandwidth = bandwidth(v);
    } else if (k == "inter_socket_latency") {
      cpu.inter_socket_latency = seconds(v);
    } else if (k == "core_bandwidth") {
      cpu.core_bandwidth = bandwidth(v);
    }
  }
}

std::vector<std::string_view> Loader::network_keys(std::string_view kind) {
  std::vector<std::string_view> keys(kNetworkCommonKeys.begin(), kNetworkCommonKeys.end());
  if (kind == "fat_tree") {
    keys.insert(keys.end(), {"rail_optimized", "levels", "radix", "taper"});
  } else if (kind == "dragonfly") {
    keys.insert(keys.end(), {"groups", "routers_per_group", "hosts_per_router",
                             "global_links_per_router", "routing"});
  } else if (kind == "dragonfly_plus") {
    keys.insert(keys.end(), {"groups", "leaves_per_group", "spines_per_group", "hosts_per_leaf",
                             "global_links_per_spine", "routing"});
  } else if (kind == "torus") {
    keys.insert(keys.end(), {"dims", "hosts_per_router"});
  }
  return keys;
}

void Loader::network_section(const Located& at, core::TopologySpec& spec) const {
  core::NetworkSpec& net = spec.system.network;
  if (at.node.IsMap()) {
    if (const auto kind = find_key(at, "kind")) {
      const std::string name = one_of(kind->value, "network kind", "a network kind", kNetworkKinds);
      if (name != net.kind) {
        net = core::NetworkSpec{};
        net.kind = name;
      }
    }
  }
  const std::vector<std::string_view> valid = network_keys(net.kind);
  const KeyExplainer explain = [&](std::string_view key) -> std::string {
    for (const auto other : kNetworkKinds) {
      const auto keys = network_keys(other);
      if (other != net.kind && std::find(keys.begin(), keys.end(), key) != keys.end()) {
        return fmt::format("key '{}' is not valid for a {} network (it is a {} key)", key, net.kind,
                           other);
      }
    }
    return {};
  };
  const Fields fields = section(at, valid, spec, explain);
  for (const auto& f : fields.fields) {
    const std::string& k = f.key;
    const Located& v = f.value;
    if (k == "link_bandwidth") {
      net.link_bandwidth = bandwidth(v);
    } else if (k == "link_latency") {
      net.link_latency = seconds(v);
    } else if (k == "switch_latency") {
      net.switch_latency = seconds(v);
    } else if (k == "sharp") {
      net.sharp = boolean(v);
    } else if (k == "sharp_reduce_bandwidth") {
      net.sharp_reduce_bandwidth = bandwidth(v);
    } else if (k == "rail_optimized") {
      net.rail_optimized = boolean(v);
    } else if (k == "levels") {
      const std::int64_t levels = integer(v, "1, 2 or 3");
      if (levels < 1 || levels > 3) {
        fail(v, fmt::format("a fat-tree has 1, 2 or 3 levels, got {}", levels));
      }
      net.levels = static_cast<std::uint32_t>(levels);
    } else if (k == "radix") {
      net.radix = count(v);
    } else if (k == "taper") {
      net.taper = ratio(v);
    } else if (k == "groups") {
      net.groups = count0(v);
    } else if (k == "routers_per_group") {
      net.routers_per_group = count(v);
    } else if (k == "hosts_per_router") {
      net.hosts_per_router = count(v);
    } else if (k == "global_links_per_router") {
      net.global_links_per_router = count(v);
    } else if (k == "leaves_per_group") {
      net.leaves_per_group = count(v);
    } else if (k == "spines_per_group") {
      net.spines_per_group = count(v);
    } else if (k == "hosts_per_leaf") {
      net.hosts_per_leaf = count(v);
    } else if (k == "global_links_per_spine") {
      net.global_links_per_spine = count(v);
    } else if (k == "routing") {
      net.routing = one_of(v, "routing", "a routing name", kRoutings);
    } else if (k == "dims") {
      net.dims = dims(v, spec);
    }
  }
}

double Loader::ratio(const Located& at) {
  const std::string text = scalar(at, "a ratio like '2:1' or a number >= 1");
  const auto colon = text.find(':');
  const auto number = [&](std::string_view part) -> std::optional<double> {
    double value = 0.0;
    const char* last = part.data() + part.size();
    auto [ptr, ec] = std::from_chars(part.data(), last, value);
    if (part.empty() || ec != std::errc{} || ptr != last || !(value > 0.0)) {
      return std::nullopt;
    }
    return value;
  };
  std::optional<double> value;
  if (colon == std::string::npos) {
    value = number(text);
  } else {
    const auto down = number(std::string_view(text).substr(0, colon));
    const auto up = number(std::string_view(text).substr(colon + 1));
    if (down && up) {
      value = *down / *up;
    }
  }
  if (!value) {
    fail(at, fmt::format("expected a ratio like '2:1' or a number >= 1, got '{}'", text));
  }
  if (*value < 1.0) {
    fail(at, fmt::format("a taper is down:up at the leaves and at least 1 (1:1 is "
                         "non-blocking), got '{}'",
                         text));
  }
  return *value;
}

std::vector<std::uint32_t> Loader::dims(const Located& at, core::TopologySpec& spec) const {
  if (!at.node.IsSequence()) {
    fail(at, fmt::format("expected a list of 2 or 3 extents like [8, 8, 8], got {}",
                         describe(at.node)));
  }
  if (at.node.size() != 2 && at.node.size() != 3) {
    fail(at, fmt::format("a torus has 2 or 3 dimensions, got {}", at.node.size()));
  }
  std::vector<std::uint32_t> out;
  for (std::size_t i = 0; i < at.node.size(); ++i) {
    const Located e = element(at, i, at.node[i]);
    spec.value_pos[e.path] = e.pos;
    const std::uint32_t extent = count(e);
    if (extent < 2) {
      fail(e, fmt::format("a torus dimension has at least 2 routers, got {}", extent));
    }
    out.push_back(extent);
  }
  return out;
}

void Loader::placement_section(const Located& at, core::TopologySpec& spec) const {
  core::PlacementSpec& pl = spec.system.placement;
  const Fields fields = section(at, kPlacementKeys, spec);
  const Field* order = fields.find("order");
  const Field* rankfile = fields.find("rankfile");
  if (order != nullptr && rankfile != nullptr) {
    fail(order->value, "give either 'order' or 'rankfile', not both (a rankfile is the order)");
  }
  if (order != nullptr) {
    pl.order = one_of(order->value, "placement order", "a placement order", kPlacementOrders);
    pl.rankfile.clear();
    pl.slots.clear();
  }
  if (const Field* rpn = fields.find("ranks_per_node")) {
    pl.ranks_per_node = count(rpn->value);
  }
  if (rankfile != nullptr) {
    pl.rankfile = scalar(rankfile->value, "a rankfile path");
    pl.order = "rankfile";
    pl.slots = load_rankfile(pl.rankfile, file_, rankfile->value.pos);
  }
}

void Loader::cluster_key(const Field& f, core::ClusterSpec& c) {
  const std::string& k = f.key;
  const Located& v = f.value;
  if (k == "nodes") {
    c.nodes = count(v);
  } else if (k == "devices_per_node") {
    c.devices_per_node = count(v);
  } else if (k == "intra_bandwidth") {
    c.intra_bandwidth = bandwidth(v);
  } else if (k == "intra_latency") {
    c.intra_latency = seconds(v);
  } else if (k == "nics_per_node") {
    c.nics_per_node = count(v);
  } else if (k == "nic_bandwidth") {
    c.nic_bandwidth = bandwidth(v);
  } else if (k == "nic_latency") {
    c.nic_latency = seconds(v);
  } else if (k == "switch_latency") {
    c.switch_latency = seconds(v);
  } else if (k == "reduce_bandwidth") {
    c.reduce_bandwidth = bandwidth(v);
  } else if (k == "node_switch_reduces") {
    c.node_switch_reduces = boolean(v);
  } else if (k == "network_switch_reduces") {
    c.network_switch_reduces = boolean(v);
  } else if (k == "switch_reduce_bandwidth") {
    c.switch_reduce_bandwidth = bandwidth(v);
  }
}

void Loader::check_cluster(const Fields& fields, const core::ClusterSpec& c) {
  if (c.nics_per_node > c.devices_per_node) {
    fail(fields.find("nics_per_node")->value,
         fmt::format("nics_per_node ({}) cannot exceed devices_per_node ({})", c.nics_per_node,
                     c.devices_per_node));
  }
  const std::uint64_t devices = std::uint64_t{c.nodes} * c.devices_per_node;
  if (devices > static_cast<std::uint64_t>(kMaxCount)) {
    fail(fields.find("nodes")->value,
         fmt::format("{} nodes x {} devices_per_node is {} devices; at most {} are supported",
                     c.nodes, c.devices_per_node, devices, kMaxCount));
  }
}

} // namespace collsim::io::scenario_detail
