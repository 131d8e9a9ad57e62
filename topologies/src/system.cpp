// `system`: real machines. Each node is built as the hardware is wired (hardware.md sections 1, 2
// and 6): sockets (CPU root complexes) joined by inter-socket links (UPI, Infinity Fabric), NUMA
// domains under each socket, and either cores (CPU nodes: a rank per core) or GPUs (a rank per GPU)
// under PCIe switches or directly on the root complexes, NVLink between GPUs (all-to-all boards,
// NVSwitch with optional NVLink SHARP, bridges in pairs, or an explicit per-pair list such as
// DGX-1's hybrid cube-mesh), and NICs on the PCIe tree. The nodes' NICs join the network
// (network.cpp). A study with P ranks uses the first ceil(P / ranks_per_node) nodes (a contiguous
// allocation), and ranks are placed on their GPUs or cores by the placement order or a rankfile.

#include "collsim/core/errors.hpp"
#include "collsim/topologies/build.hpp"
#include "collsim/topologies/network.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <limits>
#include <map>
#include <set>

namespace collsim::topologies {
namespace {

using core::Bandwidth;
using core::Device;
using core::DeviceId;
using core::DeviceKind;
using core::LinkKind;
using core::Seconds;

/// PCIe per-lane rate per direction after line coding (hardware.md section 2: x16 gives 15.75,
/// 31.5, 63 and 121 GB/s for gen 3 to 6).
double pcie_lane_rate(std::uint32_t gen) {
  switch (gen) {
  case 3: return 15.75e9 / 16;
  case 4: return 31.5e9 / 16;
  case 5: return 63e9 / 16;
  case 6: return 121e9 / 16;
  default: break;
  }
  throw core::InternalError(fmt::format("PCIe gen {} has no rate", gen));
}

/// Ranks a node can host: its GPUs, or its cores on a CPU node.
std::uint32_t slots_per_node(const core::NodeSpec& n) {
  return n.gpus > 0 ? n.gpus : n.cpu.sockets * n.cpu.cores_per_socket;
}

std::uint32_t ranks_per_node(const core::SystemSpec& s) {
  return s.placement.ranks_per_node != 0 ? s.placement.ranks_per_node : slots_per_node(s.node);
}

/// The devices of one built node that the placement and the network need.
struct BuiltNode {
  std::vector<DeviceId> slots;       ///< rank-hosting devices (GPUs or cores), in index order
  std::vector<std::uint32_t> domain; ///< the NUMA domain (CPU) or socket (GPU) of each slot
  std::vector<DeviceId> nics;
};

class NodeBuilder {
public:
  NodeBuilder(const core::TopologySpec& spec, core::Topology& t) : n_(spec.system.node), t_(t) {
    ep_.overhead = spec.endpoint.overhead;
    ep_.gap = spec.endpoint.gap;
    ep_.copy_bandwidth = spec.endpoint.copy_bandwidth;
    ep_.reduce_bandwidth = n_.reduce_bandwidth;
    const double numa_bw = n_.cpu.memory_bandwidth.bytes_per_second / n_.cpu.numa_per_socket;
    if (n_.gpus == 0 && n_.reduce_bandwidth.bytes_per_second == 0) {
      // A CPU reduction reads two operands and writes one: a third of the memory bandwidth of the
      // rank's NUMA domain (hardware.md section 7).
      ep_.reduce_bandwidth = Bandwidth{numa_bw / 3};
    }
    if (n_.gpus > 0 && ep_.copy_bandwidth.bytes_per_second == 0 &&
        ep_.reduce_bandwidth.bytes_per_second > 0) {
      // A GPU's local copy (NCCL's one-rank collectives, an algorithm's own block) reads one
      // operand and writes one, half the memory bandwidth, where a reduction reads two and
      // writes one: the presets derive reduce_bandwidth as a third of HBM (hardware.md), so the
      // copy runs at 1.5 times it. It is not free, as it was.
      ep_.copy_bandwidth = Bandwidth{1.5 * ep_.reduce_bandwidth.bytes_per_second};
    }
    numa_bandwidth_ = Bandwidth{numa_bw};
    // A host process on one core of a socket (a library staging GPU buffers through host
    // memory, stacks/host_staging.hpp) copies at half the core's memory bandwidth (one read, one
    // write) and reduces at a third (two reads, one write): core_memory_bandwidth.
    const double core_bw = core_memory_bandwidth(n_.cpu).bytes_per_second;
    host_.copy_bandwidth = Bandwidth{core_bw / 2};
    host_.reduce_bandwidth = Bandwidth{core_bw / 3};
    pcie_bandwidth_ = n_.pcie.bandwidth.bytes_per_second > 0
                          ? n_.pcie.bandwidth
                          : Bandwidth{pcie_lane_rate(n_.pcie.gen) * n_.pcie.lanes};
  }

  BuiltNode build(std::uint32_t node) {
    node_ = node;
    BuiltNode out;
    const core::CpuSpec& cpu = n_.cpu;
    std::vector<DeviceId> sockets;
    std::vector<DeviceId> numas;
    for (std::uint32_t s = 0; s < cpu.sockets; ++s) {
      sockets.push_back(add(fmt::format("cpu{}", s), DeviceKind::cpu, core::kNoDevice, host_));
      for (std::uint32_t d = 0; d < cpu.numa_per_socket; ++d) {
        const DeviceId numa = add(fmt::format("cpu{}/numa{}", s, d), DeviceKind::numa);
        t_.add_duplex(numa, sockets.back(), numa_bandwidth_, cpu.memory_latency * 0.5,
                      LinkKind::memory);
        numas.push_back(numa);
      }
    }
    // Sockets all-to-all (two-socket boards have one link bundle; UPI and xGMI are full duplex).
    for (std::uint32_t a = 0; a < cpu.sockets; ++a) {
      for (std::uint32_t b = a + 1; b < cpu.sockets; ++b) {
        t_.add_duplex(sockets[a], sockets[b], cpu.inter_socket_bandwidth, cpu.inter_socket_latency,
                      LinkKind::upi);
      }
    }
    if (n_.gpus == 0) {
      build_cores(sockets, numas, out);
    } else {
      build_gpus(sockets, out);
    }
    return out;
  }

private:
  DeviceId add(const std::string& local, DeviceKind kind, DeviceId egress = core::kNoDevice,
               const core::EndpointParams& ep = {}, DeviceId host = core::kNoDevice) {
    Device d;
    d.name = fmt::format("node{}/{}", node_, local);
    d.kind = kind;
    d.node = node_;
    d.egress = egress;
    d.endpoint = ep;
    d.host = host;
    return t_.add_device(std::move(d));
  }

  DeviceId add_nic(std::uint32_t k) { return add(fmt::format("nic{}", k), DeviceKind::nic); }

  /// CPU node: NICs on the sockets' root complexes (NIC k on socket k*S/K), cores under their
  /// NUMA domains; a core leaves the node through a NIC of its own socket when it has one.
  void build_cores(const std::vector<DeviceId>& sockets, const std::vector<DeviceId>& numas,
                   BuiltNode& out) {
    const core::CpuSpec& cpu = n_.cpu;
    std::vector<std::vector<DeviceId>> socket_nics(cpu.sockets);
    for (std::uint32_t k = 0; k < n_.nics; ++k) {
      const DeviceId nic = add_nic(k);
      const std::uint32_t s = k * cpu.sockets / n_.nics;
      t_.add_duplex(nic, sockets[s], pcie_bandwidth_, n_.pcie.latency, LinkKind::pcie);
      socket_nics[s].push_back(nic);
      out.nics.push_back(nic);
    }
    const std::uint32_t per_numa = std::max(1U, cpu.cores_per_socket / cpu.numa_per_socket);
    const std::uint32_t cores = cpu.sockets * cpu.cores_per_socket;
    for (std::uint32_t c = 0; c < cores; ++c) {
      const std::uint32_t s = c / cpu.cores_per_socket;
      const std::uint32_t d =
          std::min(cpu.numa_per_socket - 1, (c % cpu.cores_per_socket) / per_numa);
      DeviceId egress = core::kNoDevice;
      if (!socket_nics[s].empty()) {
        egress = socket_nics[s][c % socket_nics[s].size()];
      } else if (!out.nics.empty()) {
        egress = out.nics[static_cast<std::size_t>(c) * out.nics.size() / cores];
      }
      const std::uint32_t numa = s * cpu.numa_per_socket + d;
      // A core's host is its socket: libraries group ranks by it (HCOLL's basesmsocket level).
      const DeviceId core =
          add(fmt::format("core{}", c), DeviceKind::core, egress, ep_, sockets[s]);
      t_.add_duplex(core, numas[numa], numa_bandwidth_, cpu.memory_latency * 0.5, LinkKind::memory);
      out.slots.push_back(core);
      out.domain.push_back(numa);
    }
  }

  /// GPU node: PCIe switches on the root complexes (switch i on socket i*S/W), GPUs and NICs
  /// spread evenly over the switches (or the sockets without switches), NVLink between GPUs. A GPU
  /// leaves the node through a NIC under its own PCIe switch when there is one (the affinity NCCL
  /// and the system vendors set up: DGX A100 pairs each GPU with the HDR NIC of its switch, S16).
  void build_gpus(const std::vector<DeviceId>& sockets, BuiltNode& out) {
    const core::PcieSpec& pcie = n_.pcie;
    const std::uint32_t g = n_.gpus;
    const std::uint32_t s = static_cast<std::uint32_t>(sockets.size());
    // The attachment points: PCIe switches, or the root complexes themselves.
    std::vector<DeviceId> ports;
    std::vector<std::uint32_t> port_socket;
    if (pcie.switches > 0) {
      for (std::uint32_t i = 0; i < pcie.switches; ++i) {
        const std::uint32_t sock = i * s / pcie.switches;
        Device sw;
        sw.name = fmt::format("node{}/pcie{}", node_, i);
        sw.kind = DeviceKind::pcie_switch;
        sw.node = node_;
        sw.latency = pcie.switch_latency;
        const DeviceId id = t_.add_device(std::move(sw));
        t_.add_duplex(id, sockets[sock], pcie_bandwidth_, pcie.latency, LinkKind::pcie);
        ports.push_back(id);
        port_socket.push_back(sock);
      }
    } else {
      ports = sockets;
      for (std::uint32_t i = 0; i < s; ++i) {
        port_socket.push_back(i);
      }
    }
    const auto port_count = static_cast<std::uint32_t>(ports.size());
    std::vector<std::vector<DeviceId>> port_nics(port_count);
    for (std::uint32_t k = 0; k < n_.nics; ++k) {
      const DeviceId nic = add_nic(k);
      const std::uint32_t p = k * port_count / n_.nics;
      t_.add_duplex(nic, ports[p], pcie_bandwidth_, pcie.latency, LinkKind::pcie);
      port_nics[p].push_back(nic);
      out.nics.push_back(nic);
    }
    std::vector<std::uint32_t> seen_on_port(port_count, 0);
    const bool p2p = pcie.p2p || n_.nvlink.kind != "none";
    for (std::uint32_t i = 0; i < g; ++i) {
      const std::uint32_t p = i * port_count / g;
      const std::uint32_t local = seen_on_port[p]++;
      DeviceId egress = core::kNoDevice;
      if (!port_nics[p].empty()) {
        egress = port_nics[p][local % port_nics[p].size()];
      } else if (!out.nics.empty()) {
        egress = out.nics[static_cast<std::size_t>(i) * out.nics.size() / g];
      }
      Device gpu;
      gpu.name = fmt::format("node{}/gpu{}", node_, i);
      gpu.kind = DeviceKind::gpu;
      gpu.node = node_;
      gpu.egress = egress;
      gpu.endpoint = ep_;
      gpu.host = sockets[port_socket[p]];
      gpu.p2p = p2p;
      gpu.gdr = pcie.gdr;
      const DeviceId id = t_.add_device(std::move(gpu));
      t_.add_duplex(id, ports[p], pcie_bandwidth_, pcie.latency, LinkKind::pcie);
      out.slots.push_back(id);
      out.domain.push_back(port_socket[p]);
    }
    build_nvlink(out.slots, out.nics.empty() ? core::kNoDevice : out.nics.front());
    // A host process on a socket (a stack staging GPU buffers through host memory) leaves the
    // node through a NIC under that socket, as UCX picks the device closest to the process.
    for (std::uint32_t sock = 0; sock < s; ++sock) {
      DeviceId egress = out.nics.empty() ? core::kNoDevice : out.nics.front();
      for (std::uint32_t p = 0; p < port_count; ++p) {
        if (port_socket[p] == sock && !port_nics[p].empty()) {
          egress = port_nics[p].front();
          break;
        }
      }
      if (egress != core::kNoDevice) {
        t_.set_egress(sockets[sock], egress);
      }
    }
  }

  /// `egress`: where an NVSwitch taking part in a schedule (NVLS-tree) reaches other nodes.
  void build_nvlink(const std::vector<DeviceId>& gpus, DeviceId egress) {
    const core::NvlinkSpec& nv = n_.nvlink;
    const auto g = static_cast<std::uint32_t>(gpus.size());
    const auto pair = [&](std::uint32_t a, std::uint32_t b, std::uint32_t links) {
      t_.add_duplex(gpus[a], gpus[b], Bandwidth{nv.link_bandwidth.bytes_per_second * links},
                    nv.latency, LinkKind::nvlink);
    };
    if (nv.kind == "none") {
      return;
    }
    if (nv.kind == "all_to_all") {
      for (std::uint32_t a = 0; a < g; ++a) {
        for (std::uint32_t b = a + 1; b < g; ++b) {
          pair(a, b, nv.links_per_pair);
        }
      }
    } else if (nv.kind == "bridges") {
      for (std::uint32_t a = 0; a + 1 < g; a += 2) {
        pair(a, a + 1, nv.links_per_pair);
      }
    } else if (nv.kind == "explicit") {
      for (const auto& l : nv.links) {
        pair(l.a, l.b, l.links);
      }
    } else if (nv.kind == "switch") {
      // The NVSwitch chips of a node form one plane that every GPU stripes its links over
      // (DGX A100: 2 links to each of 6 switches, S16), so they are modelled as one switch with a
      // links_per_gpu-wide port per GPU; half the GPU-to-GPU latency on each side.
      Device sw;
      sw.name = fmt::format("node{}/nvswitch", node_);
      sw.kind = DeviceKind::nvswitch;
      sw.node = node_;
      sw.reduces = nv.sharp;
      sw.egress = egress;
      sw.endpoint.reduce_bandwidth = nv.sharp_reduce_bandwidth;
      const DeviceId id = t_.add_device(std::move(sw));
      for (const DeviceId gpu : gpus) {
        t_.add_duplex(gpu, id, Bandwidth{nv.link_bandwidth.bytes_per_second * nv.links_per_gpu},
                      nv.latency * 0.5, LinkKind::nvlink);
      }
    } else {
      throw core::InternalError(fmt::format("unknown NVLink kind '{}'", nv.kind));
    }
  }

  const core::NodeSpec& n_;
  core::Topology& t_;
  core::EndpointParams ep_;
  core::EndpointParams host_; ///< a host process on a socket
  Bandwidth numa_bandwidth_;
  Bandwidth pcie_bandwidth_;
  std::uint32_t node_ = 0;
};

/// Slot order of the `numa` placement: round-robin over the NUMA domains (GPU nodes: sockets) of
/// a node, as Open MPI's --map-by numa does.
std::vector<std::uint32_t> numa_order(const std::vector<std::uint32_t>& domain) {
  std::map<std::uint32_t, std::uint32_t> seen;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> key; // (index inside domain, domain)
  for (const std::uint32_t d : domain) {
    key.emplace_back(seen[d]++, d);
  }
  std::vector<std::uint32_t> order(domain.size());
  for (std::uint32_t i = 0; i < order.size(); ++i) {
    order[i] = i;
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](std::uint32_t a, std::uint32_t b) { return key[a] < key[b]; });
  return order;
}

/// Where each rank goes: (node, slot) pairs.
std::vector<std::pair<std::uint32_t, std::uint32_t>>
place(const core::TopologySpec& spec, std::uint32_t ranks, std::uint32_t nodes,
      const std::vector<std::uint32_t>& node0_domains) {
  const core::SystemSpec& sys = spec.system;
  const core::PlacementSpec& pl = sys.placement;
  const std::uint32_t rpn = ranks_per_node(sys);
  std::vector<std::pair<std::uint32_t, std::uint32_t>> out(ranks);
  if (pl.order == "rankfile") {
    const std::uint32_t cores = sys.node.cpu.cores_per_socket;
    std::vector<bool> placed(ranks, false);
    std::set<std::pair<std::uint32_t, std::uint32_t>> taken;
    for (const auto& line : pl.slots) {
      if (line.rank >= ranks) {
        continue; // a rankfile written for a larger job
      }
      std::uint32_t slot = line.slot;
      if (line.socket >= 0 && sys.node.gpus == 0) {
        slot = static_cast<std::uint32_t>(line.socket) * cores + line.slot;
      }
      if (!taken.emplace(line.node, slot).second) {
        throw core::ScenarioError(
            line.pos, "topology.placement.rankfile",
            fmt::format("rank {} is placed on node {} slot {}, which another rank already has",
                        line.rank, line.node, slot));
      }
      out[line.rank] = {line.node, slot};
      placed[line.rank] = true;
    }
    for (std::uint32_t r = 0; r < ranks; ++r) {
      if (!placed[r]) {
        throw core::UsageError(
            fmt::format("the rankfile '{}' does not place rank {} (a study of {} ranks needs "
                        "ranks 0 to {})",
                        pl.rankfile, r, ranks, ranks - 1));
      }
    }
    return out;
  }
  const std::vector<std::uint32_t> order =
      pl.order == "numa" ? numa_order(node0_domains) : std::vector<std::uint32_t>{};
  for (std::uint32_t r = 0; r < ranks; ++r) {
    std::uint32_t node = r / rpn;
    std::uint32_t local = r % rpn;
    if (pl.order == "cyclic") {
      node = r % nodes;
      local = r / nodes;
    }
    out[r] = {node, order.empty() ? local : order[local]};
  }
  return out;
}

} // namespace

core::Topology build_system(const core::TopologySpec& spec, std::uint32_t ranks) {
  const core::SystemSpec& sys = spec.system;
  const std::uint32_t slots = slots_per_node(sys.node);
  const std::uint32_t rpn = ranks_per_node(sys);
  std::uint32_t nodes = (ranks + rpn - 1) / rpn;
  if (sys.placement.order == "rankfile") {
    nodes = 0;
    for (const auto& line : sys.placement.slots) {
      if (line.rank < ranks) {
        nodes = std::max(nodes, line.node + 1);
      }
    }
  }
  if (sys.nodes != 0 && nodes > sys.nodes) {
    throw core::UsageError(fmt::format(
        "the system has {} nodes x {} ranks per node = {} rank slots but {} ranks were requested",
        sys.nodes, rpn, std::uint64_t{sys.nodes} * rpn, ranks));
  }
  if (nodes > 1 && sys.node.nics == 0) {
    throw core::UsageError(fmt::format(
        "{} ranks need {} nodes, but the nodes have no NIC (nics: 0): they cannot reach each other",
        ranks, nodes));
  }
  if (sys.node.nics > 0 && sys.nodes == 0) {
    // validate() could only check the network for one node; now the node count is known.
    check_network(spec, std::uint64_t{nodes} * sys.node.nics);
  }
  core::Topology t;
  NodeBuilder builder(spec, t);
  std::vector<BuiltNode> built;
  built.reserve(nodes);
  HostPorts ports;
  ports.bandwidth = sys.node.nic_bandwidth;
  ports.latency = sys.node.nic_latency;
  for (std::uint32_t n = 0; n < nodes; ++n) {
    built.push_back(builder.build(n));
    ports.nics.push_back(built.back().nics);
  }
  if (sys.node.nics > 0 && nodes > 0) {
    build_network(sys.network, ports, t);
  }
  const auto where = place(spec, ranks, nodes,
                           built.empty() ? std::vector<std::uint32_t>{} : built.front().domain);
  std::vector<DeviceId> rank_device(ranks);
  for (std::uint32_t r = 0; r < ranks; ++r) {
    const auto [node, slot] = where[r];
    if (slot >= slots) {
      throw core::InternalError(fmt::format("rank {} placed on slot {} of {}", r, slot, slots));
    }
    rank_device[r] = built[node].slots[slot];
  }
  t.map_ranks(std::move(rank_device));
  return t;
}

std::uint64_t rank_capacity(const core::TopologySpec& spec) {
  if (spec.kind == "cluster" && spec.cluster.nodes != 0) {
    return std::uint64_t{spec.cluster.nodes} * spec.cluster.devices_per_node;
  }
  if (spec.kind == "system" && spec.system.nodes != 0 &&
      spec.system.placement.order != "rankfile") {
    return std::uint64_t{spec.system.nodes} * ranks_per_node(spec.system);
  }
  return 0;
}

void validate(const core::TopologySpec& spec) {
  if (spec.kind != "system") {
    return;
  }
  const core::SystemSpec& sys = spec.system;
  const core::NodeSpec& n = sys.node;
  const std::uint32_t slots = slots_per_node(n);
  const auto fail = [&](const std::string& path, std::string message) {
    throw core::ScenarioError(spec.where(path), path, std::move(message));
  };
  if (n.gpus > 0) {
    const core::NvlinkSpec& nv = n.nvlink;
    if (nv.kind == "explicit") {
      if (nv.links.empty()) {
        fail("topology.node.nvlink.links",
             "an explicit NVLink topology needs a 'links' list of [gpu, gpu, links]");
      }
      std::set<std::pair<std::uint32_t, std::uint32_t>> pairs;
      for (std::size_t i = 0; i < nv.links.size(); ++i) {
        const auto& l = nv.links[i];
        const std::string path = fmt::format("topology.node.nvlink.links[{}]", i);
        if (l.a >= n.gpus || l.b >= n.gpus) {
          fail(path, fmt::format("GPU {} does not exist: the node has {} GPUs (0 to {})",
                                 std::max(l.a, l.b), n.gpus, n.gpus - 1));
        }
        if (l.a == l.b) {
          fail(path, fmt::format("an NVLink joins two different GPUs, got {} and {}", l.a, l.b));
        }
        if (!pairs.emplace(std::min(l.a, l.b), std::max(l.a, l.b)).second) {
          fail(path, fmt::format("GPUs {} and {} are listed twice", l.a, l.b));
        }
      }
    } else if (nv.kind == "bridges" && n.gpus % 2 != 0) {
      fail("topology.node.nvlink.kind",
           fmt::format("NVLink bridges join GPUs in pairs, but the node has {} GPUs", n.gpus));
    }
    if (nv.sharp && nv.kind != "switch") {
      fail("topology.node.nvlink.sharp",
           fmt::format("NVLink SHARP needs an NVSwitch (nvlink kind 'switch'), got '{}'", nv.kind));
    }
  } else if (n.nvlink.kind != "none") {
    fail("topology.node.nvlink.kind", "a node without GPUs (gpus: 0) cannot have NVLink");
  }
  if (n.cpu.numa_per_socket > n.cpu.cores_per_socket && n.gpus == 0) {
    fail("topology.node.cpu.numa_per_socket",
         fmt::format("{} NUMA domains per socket but only {} cores per socket",
                     n.cpu.numa_per_socket, n.cpu.cores_per_socket));
  }
  const core::PlacementSpec& pl = sys.placement;
  if (pl.ranks_per_node > slots) {
    fail("topology.placement.ranks_per_node",
         fmt::format("{} ranks per node, but a node has {} {}", pl.ranks_per_node, slots,
                     n.gpus > 0 ? "GPUs" : "cores"));
  }
  std::set<std::pair<std::uint32_t, std::uint32_t>> taken;
  for (const auto& line : pl.slots) {
    const auto at = [&](std::string message) {
      throw core::ScenarioError(line.pos, "topology.placement.rankfile", std::move(message));
    };
    if (sys.nodes != 0 && line.node >= sys.nodes) {
      at(fmt::format("rank {} is placed on node {}, but the system has {} nodes (0 to {})",
                     line.rank, line.node, sys.nodes, sys.nodes - 1));
    }
    if (line.socket >= 0 && n.gpus == 0) {
      if (static_cast<std::uint32_t>(line.socket) >= n.cpu.sockets) {
        at(fmt::format("socket {} does not exist: a node has {} sockets", line.socket,
                       n.cpu.sockets));
      }
      if (line.slot >= n.cpu.cores_per_socket) {
        at(fmt::format("core {} does not exist: a socket has {} cores", line.slot,
                       n.cpu.cores_per_socket));
      }
    } else if (line.slot >= slots) {
      at(fmt::format("slot {} does not exist: a node has {} {} (slots 0 to {})", line.slot, slots,
                     n.gpus > 0 ? "GPUs" : "cores", slots - 1));
    }
  }
  if (n.nics == 0 && sys.nodes > 1) {
    fail("topology.node.nics",
         fmt::format("nics: 0 leaves the {} nodes disconnected; a system of more than one node "
                     "needs at least one NIC per node",
                     sys.nodes));
  }
  if (n.nics > 0) {
    const std::uint64_t node_count = sys.nodes != 0 ? sys.nodes : 1;
    check_network(spec, node_count * n.nics);
  }
}

core::Bandwidth core_memory_bandwidth(const core::CpuSpec& cpu) {
  constexpr double kLinesInFlight = 24;
  constexpr double kLineBytes = 64;
  const double little = kLinesInFlight * kLineBytes / std::max(cpu.memory_latency.value, 1e-9);
  const double core =
      cpu.core_bandwidth.bytes_per_second > 0 ? cpu.core_bandwidth.bytes_per_second : little;
  const double domain =
      cpu.memory_bandwidth.bytes_per_second / std::max<std::uint32_t>(1, cpu.numa_per_socket);
  return core::Bandwidth{domain > 0 ? std::min(core, domain) : core};
}

} // namespace collsim::topologies
