#pragma once
// A node as the tools people already run describe it (hwloc's lstopo, `nvidia-smi topo -m`,
// `ibstat`), and the collsim scenario that models it (docs/topology.md, "Describe my node").
//
// The readers fill a NodeDescription: what the inputs say, device by device. `to_scenario_yaml`
// maps it onto collsim's regular node model (scenario-format.md, "node": sockets, NUMA domains,
// cores, PCIe switches with GPUs and NICs spread evenly, NVLink) and says in comments where each
// value came from and what the model could not keep.

#include "collsim/core/units.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace collsim::describe {

/// Where a GPU or NIC sits: its CPU socket and its PCIe switch (index into
/// NodeDescription::switch_sockets), or no switch (-1: a root port of the socket).
struct Attachment {
  std::int32_t socket = 0;
  std::int32_t pcie_switch = -1;
  bool operator==(const Attachment&) const = default;
};

struct Gpu {
  std::string name;    ///< model, e.g. "NVIDIA A100-SXM4-40GB"; empty when the input has none
  std::string pci_bus; ///< "0000:07:00.0"; empty when not known
  std::uint16_t pci_device = 0; ///< PCI device id, 0 when not known
  Attachment at;
  bool operator==(const Gpu&) const = default;
};

struct Nic {
  std::string name; ///< RDMA device name (mlx5_0, hfi1_0); else the PCI bus id
  std::string pci_bus;
  Attachment at;
  bool infiniband = false;         ///< PCI class InfiniBand, or an InfiniBand link layer in ibstat
  std::optional<double> rate_gbit; ///< active port rate from ibstat, Gb/s
  std::string link_layer;          ///< "InfiniBand" or "Ethernet" (ibstat), empty when not known
  std::string ca_type;             ///< ibstat's CA type (MT4123: ConnectX-6), empty when not known
  bool compute = true;             ///< false: left out of the model (see Notes)
  bool operator==(const Nic&) const = default;
};

/// Two GPUs joined by `links` NVLinks (indices into NodeDescription::gpus, a < b).
struct NvlinkPair {
  std::uint32_t a = 0;
  std::uint32_t b = 0;
  std::uint32_t links = 0;
  bool operator==(const NvlinkPair&) const = default;
};

struct NodeDescription {
  bool cpu_known = false; ///< sockets, NUMA domains and cores came from hwloc
  std::uint32_t sockets = 1;
  std::uint32_t numa_per_socket = 1;
  std::uint32_t cores_per_socket = 1;
  std::uint32_t threads_per_core = 1;
  std::string cpu_model; ///< empty when not known
  /// PCIe switches holding a GPU or a compute NIC, by the socket each hangs off.
  std::vector<std::int32_t> switch_sockets;
  /// The fastest PCIe link among the GPUs, NICs and their bridges (GPUs idle at lower link
  /// speeds, so a GPU's own link may read low); absent when the input gives none.
  std::optional<core::Bandwidth> pcie_link;
  std::uint32_t nvswitch_chips = 0; ///< NVIDIA PCI devices of class 0x0680 (NVSwitch)
  /// NVLinks from each GPU into the NVSwitch plane (hwloc NVLinkBandwidth); 0: not known.
  std::uint32_t nvswitch_links_per_gpu = 0;
  std::vector<Gpu>
      gpus; ///< in PCI bus order, the order of CUDA_DEVICE_ORDER=PCI_BUS_ID and nvidia-smi
  std::vector<Nic> nics; ///< RDMA NICs in name order
  std::vector<NvlinkPair> nvlinks;
  bool nvlink_known = false;        ///< nvlinks came from an input (else: no NVLink information)
  std::vector<std::string> sources; ///< one line per input read
  std::vector<std::string> notes;   ///< what was assumed, dropped or does not fit the model
  bool operator==(const NodeDescription&) const = default;
};

/// The cells of `nvidia-smi topo -m`: device names in matrix order and, per pair, the connection
/// ("X", "NV12", "PIX", "PXB", "PHB", "NODE", "SYS"; the old driver's "SOC" reads as "SYS").
struct TopoMatrix {
  std::vector<std::string> names; ///< GPU0.. and NICs by their legend names (mlx5_0, ...)
  std::vector<bool> is_gpu;
  std::vector<std::vector<std::string>> cells;
  /// Per device, the "CPU Affinity" and "NUMA Affinity" columns as sets of ids (48-63,176-191 ->
  /// 48..63 and 176..191); empty where the output has no such column or says N/A (NIC rows).
  std::vector<std::vector<std::uint32_t>> cpus;
  std::vector<std::vector<std::uint32_t>> numa;
  bool operator==(const TopoMatrix&) const = default;
};

/// One port of an `ibstat` CA.
struct IbPort {
  std::uint32_t number = 0;
  std::string state;      ///< "Active", "Down", ...
  double rate_gbit = 0.0; ///< "Rate:" in Gb/s
  std::string link_layer; ///< "InfiniBand" or "Ethernet"
  bool operator==(const IbPort&) const = default;
};
struct IbCa {
  std::string name; ///< "mlx5_0"
  std::string type; ///< "MT4123"
  std::vector<IbPort> ports;
  bool operator==(const IbCa&) const = default;
};

/// Reads hwloc XML (`lstopo --of xml`, hwloc 1.x or 2.x) with hwloc's own library. Throws
/// core::LogParseError with the file's position when hwloc cannot read it or it holds no CPU.
NodeDescription read_lstopo_xml(const std::string& path);
/// Describes the machine this process runs on (hwloc's discovery with the important I/O devices).
NodeDescription describe_this_machine();

/// This machine as `topology import` would read it: hwloc's discovery, then `nvidia-smi topo -m`
/// (on a node with GPUs) and `ibstat` (with NICs) when they run here; what could not be read is
/// added to `warnings`. The compute NICs are chosen.
NodeDescription describe_here(std::vector<std::string>& warnings);

/// Parses `nvidia-smi topo -m` output; errors carry file:line:column.
TopoMatrix parse_nvidia_smi_topo(const std::string& text, const std::string& file);
/// Parses `ibstat` output; errors carry file:line:column.
std::vector<IbCa> parse_ibstat(const std::string& text, const std::string& file);

/// Adds NVLink (NV# cells) and, where the XML had no PCI devices, GPUs, NICs and PCIe switches
/// (PIX/PXB groups) from `nvidia-smi topo -m`. Throws core::UsageError when the two disagree on
/// the GPUs.
void merge_topo_matrix(NodeDescription& node, const TopoMatrix& m, const std::string& source);
/// Adds NIC rates and link layers from ibstat; NICs whose ports are all down leave the model.
void merge_ibstat(NodeDescription& node, const std::vector<IbCa>& cas, const std::string& source);
/// Marks as non-compute the NICs that share no PCIe switch with a GPU when some do (DGX storage
/// NICs), and writes the notes that explain it. Call after the merges.
void choose_compute_nics(NodeDescription& node);

/// How the scenario is written around the node.
struct ScenarioOptions {
  std::string name = "imported-node";
  std::uint32_t nodes = 1;
  std::string network_kind = "switch"; ///< the network section's kind (defaults for the rest)
  std::string command;                 ///< the command line, for the header comment
};

/// The scenario YAML for `node` (collsim's node model; comments give each value's source).
std::string to_scenario_yaml(const NodeDescription& node, const ScenarioOptions& options);
/// A short human summary (what `collsim-probe --describe` and `topology import` print to stderr).
std::string summary_text(const NodeDescription& node);

} // namespace collsim::describe
