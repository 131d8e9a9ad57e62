// Joins what `nvidia-smi topo -m` and `ibstat` add to hwloc's view of a node, and decides which
// NICs carry the node's traffic.

#include "collsim/core/errors.hpp"
#include "collsim/describe/node.hpp"
#include "describe_support.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <optional>
#include <utility>

namespace collsim::describe {
namespace {

/// Connected components of the devices joined by a cell accepted by `joined`; -1 for a device
/// alone when `singletons_are_none`.
std::vector<std::int32_t> components(const TopoMatrix& m, bool (*joined)(const std::string&),
                                     bool singletons_are_none) {
  const std::size_t n = m.names.size();
  std::vector<std::size_t> parent(n);
  std::iota(parent.begin(), parent.end(), std::size_t{0});
  const auto find = [&](std::size_t x) {
    while (parent[x] != x) {
      x = parent[x] = parent[parent[x]];
    }
    return x;
  };
  std::vector<bool> linked(n, false);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      if (i != j && joined(m.cells[i][j])) {
        parent[find(i)] = find(j);
        linked[i] = linked[j] = true;
      }
    }
  }
  std::map<std::size_t, std::int32_t> ids;
  std::vector<std::int32_t> out(n, -1);
  for (std::size_t i = 0; i < n; ++i) {
    if (singletons_are_none && !linked[i]) {
      continue;
    }
    out[i] = ids.emplace(find(i), static_cast<std::int32_t>(ids.size())).first->second;
  }
  return out;
}

bool same_switch(const std::string& c) {
  return c == "PIX" || c == "PXB";
}
bool same_numa(const std::string& c) {
  return c == "PIX" || c == "PXB" || c == "PHB" || c == "NODE";
}

/// NUMA groups: devices joined by PIX, PXB, PHB or NODE share one. GPUs that see each other only
/// over NVLink show no PCIe relation, so groups with no SYS cell between any of their devices are
/// then merged (SYS is the only cell that says two devices are on different NUMA nodes).
std::vector<std::int32_t> numa_groups(const TopoMatrix& m) {
  std::vector<std::int32_t> group = components(m, same_numa, false);
  const std::size_t n = m.names.size();
  const auto separated = [&](std::int32_t a, std::int32_t b) {
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t j = 0; j < n; ++j) {
        if (group[i] == a && group[j] == b && m.cells[i][j] == "SYS") {
          return true;
        }
      }
    }
    return false;
  };
  for (bool merged = true; merged;) {
    merged = false;
    const std::int32_t count =
        group.empty() ? 0 : *std::max_element(group.begin(), group.end()) + 1;
    for (std::int32_t a = 0; a < count && !merged; ++a) {
      for (std::int32_t b = a + 1; b < count && !merged; ++b) {
        if (!separated(a, b)) {
          for (std::int32_t& g : group) {
            g = g == b ? a : (g > b ? g - 1 : g);
          }
          merged = true;
        }
      }
    }
  }
  return group;
}

/// The socket of each device of the matrix. With the NUMA Affinity column on every GPU row, the
/// GPUs' NUMA nodes say it: Linux numbers NUMA nodes socket by socket, so node k of N sits on
/// socket k x sockets / N; a NIC takes the socket of a GPU of its NUMA group (socket 0 when its
/// group has none). Without the column, each NUMA group of the matrix is a socket.
std::vector<std::int32_t> sockets_from_matrix(NodeDescription& node, const TopoMatrix& m) {
  const std::vector<std::int32_t> group = numa_groups(m);
  const std::int32_t groups = group.empty() ? 1 : *std::max_element(group.begin(), group.end()) + 1;
  std::uint32_t numa_nodes = 0;
  bool numa_given = true;
  for (std::size_t i = 0; i < m.names.size(); ++i) {
    if (m.is_gpu[i]) {
      numa_given = numa_given && !m.numa[i].empty();
      for (const std::uint32_t id : m.numa[i]) {
        numa_nodes = std::max(numa_nodes, id + 1);
      }
    }
  }
  std::vector<std::int32_t> socket(m.names.size(), 0);
  if (!numa_given) {
    if (!node.cpu_known) {
      node.sockets = static_cast<std::uint32_t>(groups);
      node.notes.push_back("no lstopo XML: one socket per NUMA group of nvidia-smi topo -m (NODE "
                           "and PHB join a group); cores per socket and NUMA domains per socket "
                           "are collsim's defaults");
    }
    for (std::size_t i = 0; i < m.names.size(); ++i) {
      socket[i] = group[i] * static_cast<std::int32_t>(node.sockets) / std::max(groups, 1);
    }
    return socket;
  }
  if (!node.cpu_known) {
    // topo -m cannot tell sockets from NUMA nodes of one socket (SYS joins both). Servers with
    // GPUs on several NUMA nodes are 2-socket as a rule (DGX-1, DGX-2, DGX A100, DGX H100, HGX).
    node.sockets = numa_nodes > 1 ? 2 : 1;
    node.numa_per_socket = (numa_nodes + node.sockets - 1) / node.sockets;
    node.notes.push_back(fmt::format(
        "no lstopo XML: {} NUMA nodes from the NUMA Affinity column of nvidia-smi topo -m, taken "
        "as {} socket{} (topo -m does not tell sockets from NUMA nodes; pass --lstopo to know)",
        numa_nodes, node.sockets, node.sockets == 1 ? "" : "s"));
  }
  const auto socket_of_numa = [&](std::uint32_t id) {
    return static_cast<std::int32_t>(std::uint64_t{id} * node.sockets / numa_nodes);
  };
  std::map<std::int32_t, std::int32_t> group_socket;
  for (std::size_t i = 0; i < m.names.size(); ++i) {
    if (m.is_gpu[i]) {
      socket[i] = socket_of_numa(m.numa[i].front());
      group_socket.emplace(group[i], socket[i]);
    }
  }
  for (std::size_t i = 0; i < m.names.size(); ++i) {
    if (!m.is_gpu[i]) {
      const auto it = group_socket.find(group[i]);
      socket[i] = it == group_socket.end() ? 0 : it->second;
    }
  }
  return socket;
}

/// The ranges of a sorted id set: 48..63, 176..191 -> {48, 63}, {176, 191}.
std::vector<std::pair<std::uint32_t, std::uint32_t>>
ranges_of(const std::vector<std::uint32_t>& ids) {
  std::vector<std::pair<std::uint32_t, std::uint32_t>> out;
  for (const std::uint32_t id : ids) {
    if (out.empty() || id != out.back().second + 1) {
      out.emplace_back(id, id);
    } else {
      out.back().second = id;
    }
  }
  return out;
}

/// Cores from the GPUs' CPU Affinity column. Linux on x86 numbers the second hardware thread of
/// core c as c + (cores in the node), so a set of two equal ranges K apart on every GPU row
/// (0-19,40-59; 48-63,176-191) says K cores of 2 threads. Otherwise the highest CPU number + 1
/// is the thread count, one thread per core (a lower bound where the CPUs without GPUs come
/// last).
void cores_from_matrix(NodeDescription& node, const TopoMatrix& m) {
  std::uint32_t threads = 0;
  std::optional<std::uint32_t> offset;
  bool smt = true;
  for (std::size_t i = 0; i < m.names.size(); ++i) {
    if (!m.is_gpu[i]) {
      continue;
    }
    if (m.cpus[i].empty()) {
      return;
    }
    threads = std::max(threads, m.cpus[i].back() + 1);
    const auto r = ranges_of(m.cpus[i]);
    const bool pair = r.size() == 2 && r[1].second - r[1].first == r[0].second - r[0].first;
    const std::uint32_t k = pair ? r[1].first - r[0].first : 0;
    smt = smt && pair && (!offset || *offset == k) && r[0].second < k;
    offset = k;
  }
  const std::uint32_t cores = smt ? *offset : threads;
  node.threads_per_core = smt ? 2 : 1;
  node.cores_per_socket = std::max<std::uint32_t>(1, cores / node.sockets);
  node.notes.push_back(fmt::format(
      "cores from the CPU Affinity column of nvidia-smi topo -m: {} cores of {} hardware "
      "thread{}{}",
      cores, node.threads_per_core, node.threads_per_core == 1 ? "" : "s",
      smt ? fmt::format(" (thread c + {} is core c's second)", cores) : " (the highest CPU + 1)"));
}

/// GPUs, NICs and switches from the matrix alone (the XML had no PCI devices).
void devices_from_matrix(NodeDescription& node, const TopoMatrix& m) {
  const std::vector<std::int32_t> sw = components(m, same_switch, true);
  const bool cpu_known = node.cpu_known;
  const std::vector<std::int32_t> socket = sockets_from_matrix(node, m);
  if (!cpu_known) {
    cores_from_matrix(node, m);
  }
  std::map<std::int32_t, std::int32_t> switch_ids;
  for (std::size_t i = 0; i < m.names.size(); ++i) {
    Attachment at;
    at.socket = socket[i];
    if (sw[i] >= 0) {
      auto [it, fresh] = switch_ids.emplace(sw[i], static_cast<std::int32_t>(switch_ids.size()));
      if (fresh) {
        node.switch_sockets.push_back(at.socket);
      }
      at.pcie_switch = it->second;
    }
    if (m.is_gpu[i]) {
      node.gpus.push_back({{}, {}, 0, at});
    } else {
      Nic nic;
      nic.name = m.names[i];
      nic.at = at;
      node.nics.push_back(nic);
    }
  }
  std::sort(node.nics.begin(), node.nics.end(),
            [](const Nic& x, const Nic& y) { return natural_less(x.name, y.name); });
  if (node.cpu_known) {
    node.notes.push_back(
        "the lstopo XML has no PCI devices: GPUs, NICs and PCIe switches come from nvidia-smi topo "
        "-m "
        "(PIX/PXB: one switch; sockets from the NUMA groups that NODE and PHB join)");
  }
}

} // namespace

void merge_topo_matrix(NodeDescription& node, const TopoMatrix& m, const std::string& source) {
  const auto gpu_count =
      static_cast<std::size_t>(std::count(m.is_gpu.begin(), m.is_gpu.end(), true));
  if (node.gpus.empty() && node.nics.empty()) {
    devices_from_matrix(node, m);
  } else if (gpu_count != node.gpus.size()) {
    throw core::UsageError(
        fmt::format("{} lists {} GPUs, the lstopo XML {}: are both from the same machine?", source,
                    gpu_count, node.gpus.size()));
  }
  std::vector<std::uint32_t> gpu_of(m.names.size(), 0);
  std::uint32_t next = 0;
  for (std::size_t i = 0; i < m.names.size(); ++i) {
    if (m.is_gpu[i]) {
      gpu_of[i] = next++;
    }
  }
  node.nvlinks.clear();
  for (std::size_t i = 0; i < m.names.size(); ++i) {
    for (std::size_t j = i + 1; j < m.names.size(); ++j) {
      const std::string& c = m.cells[i][j];
      if (m.is_gpu[i] && m.is_gpu[j] && c.rfind("NV", 0) == 0) {
        node.nvlinks.push_back(
            {gpu_of[i], gpu_of[j],
             small_number(c.substr(2)).value()}); // parse_nvidia_smi_topo checked it
      }
    }
  }
  node.nvlink_known = true;
  std::vector<std::string> unknown;
  for (std::size_t i = 0; i < m.names.size(); ++i) {
    if (!m.is_gpu[i] && std::none_of(node.nics.begin(), node.nics.end(),
                                     [&](const Nic& n) { return n.name == m.names[i]; })) {
      unknown.push_back(m.names[i]);
    }
  }
  if (!unknown.empty()) {
    node.notes.push_back(
        fmt::format("{} names NICs the lstopo XML does not have as RDMA devices: {}", source,
                    fmt::join(unknown, ", ")));
  }
  node.sources.push_back(fmt::format("nvidia-smi topo -m: {} ({} GPUs, {} NVLink pairs)", source,
                                     gpu_count, node.nvlinks.size()));
}

void merge_ibstat(NodeDescription& node, const std::vector<IbCa>& cas, const std::string& source) {
  std::vector<std::string> missing;
  std::vector<std::string> down;
  for (Nic& nic : node.nics) {
    const auto ca =
        std::find_if(cas.begin(), cas.end(), [&](const IbCa& c) { return c.name == nic.name; });
    if (ca == cas.end()) {
      missing.push_back(nic.name);
      continue;
    }
    nic.ca_type = ca->type;
    for (const IbPort& port : ca->ports) {
      if (port.state == "Active" && (!nic.rate_gbit || port.rate_gbit > *nic.rate_gbit)) {
        nic.rate_gbit = port.rate_gbit;
        nic.link_layer = port.link_layer;
      }
    }
    if (!nic.rate_gbit) {
      nic.compute = false;
      down.push_back(nic.name);
    } else if (nic.link_layer == "InfiniBand") {
      nic.infiniband = true;
    }
  }
  if (node.nics.empty()) {
    // No RDMA device in the XML: take ibstat's CAs with an active port, placed on socket 0.
    for (const IbCa& ca : cas) {
      Nic nic;
      nic.name = ca.name;
      nic.ca_type = ca.type;
      for (const IbPort& port : ca.ports) {
        if (port.state == "Active" && (!nic.rate_gbit || port.rate_gbit > *nic.rate_gbit)) {
          nic.rate_gbit = port.rate_gbit;
          nic.link_layer = port.link_layer;
        }
      }
      nic.infiniband = nic.link_layer == "InfiniBand";
      nic.compute = nic.rate_gbit.has_value();
      node.nics.push_back(nic);
    }
    node.notes.push_back(
        "the NICs come from ibstat alone (the lstopo XML has none): placed on socket 0");
  }
  if (!down.empty()) {
    node.notes.push_back(
        fmt::format("no active port in ibstat, left out: {}", fmt::join(down, ", ")));
  }
  if (!missing.empty()) {
    node.notes.push_back(
        fmt::format("not in {}: {} (rate not known)", source, fmt::join(missing, ", ")));
  }
  node.sources.push_back(fmt::format("ibstat: {} ({} CAs)", source, cas.size()));
}

void choose_compute_nics(NodeDescription& node) {
  const auto shares_gpu_switch = [&](const Nic& nic) {
    return nic.at.pcie_switch >= 0 &&
           std::any_of(node.gpus.begin(), node.gpus.end(),
                       [&](const Gpu& g) { return g.at.pcie_switch == nic.at.pcie_switch; });
  };
  const bool some = std::any_of(node.nics.begin(), node.nics.end(),
                                [&](const Nic& n) { return n.compute && shares_gpu_switch(n); });
  if (!some) {
    return;
  }
  std::vector<std::string> dropped;
  for (Nic& nic : node.nics) {
    if (nic.compute && !shares_gpu_switch(nic)) {
      nic.compute = false;
      dropped.push_back(nic.name);
    }
  }
  if (!dropped.empty()) {
    node.notes.push_back(
        fmt::format("share no PCIe switch with a GPU, left out as storage or management NICs "
                    "(NCCL picks the NICs nearest its GPUs): {}",
                    fmt::join(dropped, ", ")));
  }
}

} // namespace collsim::describe
