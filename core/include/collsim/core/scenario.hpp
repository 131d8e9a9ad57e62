#pragma once
// A scenario as plain values (ARCHITECTURE.md, "Data flow"): what io::load_scenario produces and
// what topologies::build and the analysis layer consume. Source positions travel with the values
// so that later stages (a study asking for more ranks than the topology has) can still point at
// the user's file:line:column.

#include "collsim/core/collective.hpp"
#include "collsim/core/errors.hpp"
#include "collsim/core/imbalance.hpp"
#include "collsim/core/units.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace collsim::core {

/// Parameters of the `uniform` builder: every pair of ranks joined by its own link.
struct UniformSpec {
  Seconds latency{2e-6};         ///< alpha, per message
  Bandwidth bandwidth{10e9};     ///< 1/beta
  Bandwidth reduce_bandwidth{0}; ///< 1/gamma (0 = reductions are free)
  bool operator==(const UniformSpec&) const = default;
};

/// Parameters of the `cluster` builder: N nodes x G devices; each device has a link to its node's
/// switch; each node has NICs joined to one non-blocking network switch.
struct ClusterSpec {
  std::uint32_t nodes = 0; ///< 0: as many as the study's ranks need
  std::uint32_t devices_per_node = 1;
  Bandwidth intra_bandwidth{100e9}; ///< device <-> node switch, per direction
  Seconds intra_latency{1e-6};
  std::uint32_t nics_per_node = 1;
  Bandwidth nic_bandwidth{25e9}; ///< NIC <-> network switch, per direction
  Seconds nic_latency{1e-6};     ///< per NIC link (a route crosses two)
  Seconds switch_latency{0.0};   ///< added once per inter-node route, inside the switch
  Bandwidth reduce_bandwidth{0};
  /// In-network reduction: the node switch is an NVSwitch with NVLink SHARP (NVLS), and/or the
  /// network switch reduces (InfiniBand SHARP); switches reduce at switch_reduce_bandwidth
  /// (0 = as fast as data arrives).
  bool node_switch_reduces = false;
  bool network_switch_reduces = false;
  Bandwidth switch_reduce_bandwidth{0};
  bool operator==(const ClusterSpec&) const = default;
};

// ---- kind: system (docs/scenario-format.md, "kind: system") -------------------------------------

/// NVLink inside a GPU node.
struct NvlinkSpec {
  /// "none", "all_to_all" (every pair joined by links_per_pair links), "switch" (NVSwitch: each
  /// GPU has links_per_gpu links into one switch plane), "bridges" (GPUs 2i and 2i+1 joined by
  /// links_per_pair links) or "explicit" (the `links` list: DGX-1's hybrid cube-mesh).
  std::string kind = "none";
  Bandwidth link_bandwidth{25e9}; ///< per NVLink and direction
  /// GPU to GPU, end to end: an NCCL LL step over NVLink takes about 1 us (Hu et al.,
  /// "Demystifying NCCL", arXiv 2507.04786, its protocol table). A copy engine's peer copy takes
  /// about 2 us (hardware.md [S29]), which the MPI stacks' cuda_ipc copies add per message.
  Seconds latency{1e-6};
  std::uint32_t links_per_pair = 1;
  std::uint32_t links_per_gpu = 12;
  struct Pair {
    std::uint32_t a = 0, b = 0, links = 1;
    bool operator==(const Pair&) const = default;
  };
  std::vector<Pair> links; ///< explicit: GPU a, GPU b, number of NVLinks
  bool sharp = false;      ///< NVSwitch with NVLink SHARP (NVLS): the switch reduces
  Bandwidth sharp_reduce_bandwidth{0};
  bool operator==(const NvlinkSpec&) const = default;
};

/// The PCIe tree of a node: GPUs and NICs under PCIe switches (or directly on the CPU root
/// complexes when switches = 0), switches on the sockets' root complexes.
struct PcieSpec {
  std::uint32_t gen = 4; ///< 3, 4, 5 or 6
  std::uint32_t lanes = 16;
  Bandwidth bandwidth{0}; ///< per link and direction; 0: from gen and lanes
  std::uint32_t switches = 0;
  bool p2p = true; ///< GPU peer-to-peer through the switches
  /// GPUDirect RDMA: a NIC reads and writes GPU memory directly (PCIe peer-to-peer between NIC
  /// and GPU); false: a GPU's traffic to and from other nodes is staged through host memory.
  bool gdr = true;
  Seconds latency{0.5e-6}; ///< per PCIe link
  Seconds switch_latency{105e-9};
  /// With p2p off: the share of its one-way rate that GPU traffic staged through host memory
  /// keeps while GPUs write to and read from host memory at once with their own loads and stores
  /// (NCCL's SHM transport), as some root complexes handle two-way traffic poorly; 1: no loss.
  double staged_duplex_efficiency = 1.0;
  bool operator==(const PcieSpec&) const = default;
};

/// Sockets, NUMA domains and cores of a node.
struct CpuSpec {
  std::uint32_t sockets = 1;
  std::uint32_t numa_per_socket = 1;
  std::uint32_t cores_per_socket = 1;
  Bandwidth memory_bandwidth{100e9}; ///< per socket, shared by its NUMA domains
  Seconds memory_latency{0.1e-6};    ///< core to its NUMA domain's memory
  std::string inter_socket = "upi";  ///< upi, infinity_fabric or xbus (for summaries)
  Bandwidth inter_socket_bandwidth{62.4e9};
  Seconds inter_socket_latency{0.1e-6};
  /// The memory bandwidth one core reaches on its own (a host process staging, copying or
  /// reducing a buffer: stacks/host_staging); 0: Little's law from memory_latency
  /// (stacks' host_staging.cpp).
  Bandwidth core_bandwidth{0};
  bool operator==(const CpuSpec&) const = default;
};

struct NodeSpec {
  std::uint32_t gpus = 0;        ///< 0: a CPU node, ranks on cores
  Bandwidth reduce_bandwidth{0}; ///< per rank (GPU or core); 0: CPU nodes use memory bandwidth / 3
  NvlinkSpec nvlink;
  PcieSpec pcie;
  CpuSpec cpu;
  std::uint32_t nics = 1;
  Bandwidth nic_bandwidth{25e9}; ///< line rate per NIC and direction
  Seconds nic_latency{0.3e-6};   ///< NIC to its first switch
  /// The transport the NICs speak (topologies/nic_kinds.hpp: ib_edr, ib_hdr, ib_ndr, roce, efa,
  /// tcpx, tcpxo); empty: not given, a generic NIC.
  std::string nic_kind;
  /// Share of the line rate a large transfer reaches with that transport, in (0, 1]: the kind's
  /// value unless the scenario writes nic_efficiency; 1 without a kind. Stored for the stack
  /// (library) models; topologies, engines and busbw limits use the line rate.
  double nic_efficiency = 1.0;
  /// Ports of each NIC card, at nic_bandwidth / nic_ports each (OCI BM.GPU4.8: one dual-port
  /// 2 x 100 Gb/s ConnectX-6 a GPU). NCCL before 2.20.3 sees every port as a NET device of its
  /// own, one channel a port, so its topology search finds nic_ports x the channels at
  /// 1 / nic_ports the rate; later releases merge a card's ports into one device. The engines
  /// see the card, whose ports share one PCIe link (stacks/nccl_inputs.cpp).
  std::uint32_t nic_ports = 1;
  bool operator==(const NodeSpec&) const = default;
};

/// The network joining the nodes' NICs.
struct NetworkSpec {
  /// "switch" (one non-blocking switch), "fat_tree", "dragonfly", "dragonfly_plus" or "torus".
  std::string kind = "switch";
  Bandwidth link_bandwidth{0};   ///< switch-to-switch links; 0: the NIC bandwidth
  Seconds link_latency{0.0};     ///< per switch-to-switch cable
  Seconds switch_latency{90e-9}; ///< per switch (router) a route passes through
  bool sharp = false;            ///< InfiniBand SHARP: the top switch reduces
  Bandwidth sharp_reduce_bandwidth{0};
  bool rail_optimized = false; ///< NIC k of every node on the same leaf (rail k)
  // fat_tree: a folded Clos of radix-port switches, tapered down:up at the leaves
  std::uint32_t levels = 2; ///< 1, 2 (leaf/spine) or 3 (leaf/aggregation/core)
  std::uint32_t radix = 40;
  double taper = 1.0; ///< leaf down:up ratio (oversubscription), >= 1
  // dragonfly (Kim et al. 2008): groups of routers, all-to-all inside a group, global links
  std::uint32_t groups = 0; ///< 0: as few as the hosts need
  std::uint32_t routers_per_group = 8;
  std::uint32_t hosts_per_router = 4; ///< also torus
  std::uint32_t global_links_per_router = 4;
  // dragonfly_plus (Shpiner et al. 2017): groups are leaf/spine fat trees, spines carry globals
  std::uint32_t leaves_per_group = 10;
  std::uint32_t spines_per_group = 10;
  std::uint32_t hosts_per_leaf = 20;
  std::uint32_t global_links_per_spine = 19;
  std::string routing = "minimal"; ///< dragonfly, dragonfly_plus: minimal or valiant
  // torus
  std::vector<std::uint32_t> dims; ///< 2 or 3 extents
  bool operator==(const NetworkSpec&) const = default;
};

/// One line of an Open MPI rankfile: rank `rank` on node `node`, slot `slot` of that node (a GPU
/// index on GPU nodes; a core, or core `slot` of socket `socket` when given, on CPU nodes).
struct RankSlot {
  std::uint32_t rank = 0;
  std::uint32_t node = 0;
  std::int32_t socket = -1;
  std::uint32_t slot = 0;
  SourcePos pos;
  bool operator==(const RankSlot&) const = default;
};

struct PlacementSpec {
  /// block (fill a node, then the next), cyclic (round-robin over nodes), numa (round-robin over
  /// the NUMA domains of a node, then the next node), rankfile (the `rankfile` lines).
  std::string order = "block";
  std::uint32_t ranks_per_node = 0; ///< 0: every slot (GPU, or core on CPU nodes)
  std::string rankfile;             ///< the path as written
  std::vector<RankSlot> slots;      ///< the rankfile, parsed when the scenario is loaded
  bool operator==(const PlacementSpec&) const = default;
};

struct SystemSpec {
  std::uint32_t nodes = 0; ///< 0: as many as the study's ranks need
  NodeSpec node;
  NetworkSpec network;
  PlacementSpec placement;
  bool operator==(const SystemSpec&) const = default;
};

/// Endpoint parameters shared by every builder (LogGP o and g, local copy rate).
struct EndpointSpec {
  Seconds overhead{0.0};
  Seconds gap{0.0};
  Bandwidth copy_bandwidth{0};
  bool operator==(const EndpointSpec&) const = default;
};

struct TopologySpec {
  std::string kind = "uniform"; ///< "uniform", "cluster" or "system"
  UniformSpec uniform;
  ClusterSpec cluster;
  SystemSpec system;
  EndpointSpec endpoint;
  SourcePos pos; ///< where the `topology` section starts
  /// Where each value was written, by YAML path ("topology.network.radix"), so that builders can
  /// point at the value behind a count that turns out impossible.
  std::map<std::string, SourcePos> value_pos;
  /// The position of the value at `path`, or of the section when it was not written (a default).
  [[nodiscard]] const SourcePos& where(const std::string& path) const {
    const auto it = value_pos.find(path);
    return it == value_pos.end() ? pos : it->second;
  }
  bool operator==(const TopologySpec&) const = default;
};

/// A sweep of sizes and rank counts for one collective and some algorithms.
struct StudySpec {
  std::string name; ///< optional label
  CollectiveKind collective = CollectiveKind::allreduce;
  std::vector<std::string> algorithms;  ///< names or aliases, resolved by the registry
  std::vector<SourcePos> algorithm_pos; ///< position of each name
  std::vector<std::uint32_t> ranks;
  std::vector<Bytes> sizes;
  std::uint32_t root = 0;
  std::string engine = "loggp";
  /// Algorithm parameters as written (name -> "65536", "64 KiB" or a choice name); the registry
  /// resolves them per algorithm (algorithms::resolve_params).
  std::map<std::string, std::string> params;
  std::map<std::string, SourcePos> param_pos; ///< position of each parameter's value
  /// Library stacks to compare (`stacks:`): every algorithm runs under each, its rows labelled
  /// "ALGORITHM@STACK"; empty: the scenario's stack only.
  std::vector<std::string> stacks;
  std::vector<SourcePos> stack_pos; ///< position of each stack name
  /// A v-collective's per-rank counts (`counts:`; kind none: the uniform collective).
  CountsSpec counts;
  /// When the ranks enter the call (`skew:`; kind none: all at once).
  SkewSpec skew;
  SourcePos pos; ///< the study's first line
  SourcePos ranks_pos;
  SourcePos sizes_pos;
  SourcePos engine_pos;
  bool operator==(const StudySpec&) const = default;
};

/// Settings of the SimGrid flow-level engine (scenario section `simgrid`; docs/engines.md). The
/// defaults make SimGrid a plain max-min flow model (no TCP window, no correction factors, no
/// cross-traffic, one injection port per rank) so that on a contention-free platform it agrees
/// with the loggp engine.
struct SimgridSpec {
  std::string network_model = "CM02"; ///< SimGrid's network/model: CM02, LV08, SMPI, IB, Constant
  /// network/TCP-gamma in bytes: SimGrid bounds a flow's rate by gamma / (2 x route latency);
  /// 0 means no bound.
  double tcp_gamma = 0.0;
  /// network/latency-factor, network/bandwidth-factor, network/weight-S; unset: the model's own
  /// default (CM02: 1, 1, 0; LV08: 13.01, 0.97, 20537).
  std::optional<double> latency_factor;
  std::optional<double> bandwidth_factor;
  std::optional<double> weight_s;
  bool crosstraffic = false; ///< network/crosstraffic (TCP acknowledgements on the reverse path)
  /// "serial": a rank injects one message at a time, as LogGP's single port (the next message
  /// leaves when the previous one would have finished leaving an idle port); "shared": a rank's
  /// concurrent messages share its links by max-min, like several streams on one NIC.
  std::string send_port = "serial";
  bool operator==(const SimgridSpec&) const = default;
};

/// Corrections to collsim's model of NCCL's protocols (scenario section `nccl`;
/// docs/scenario-format.md), for calibration against nccl-tests logs. The defaults change nothing:
/// the protocols keep the constants of NCCL's tuning.cc (algorithms.md section 3.1).
struct NcclProtocolSpec {
  /// Multiplies NCCL's per-hop latencies (hwLatencies, within and between nodes) of the protocol.
  double latency_factor = 1.0;
  /// Multiplies the protocol's payload bytes per wire byte (LL 1/2, LL128 120/128, Simple 1): the
  /// share of the link rate the protocol's data reaches; at most 1.
  double efficiency_factor = 1.0;
  bool operator==(const NcclProtocolSpec&) const = default;
};

struct NcclSpec {
  /// Host time per collective call before the first message (kernel launch, the benchmark's
  /// loop), added to NCCL's base latency, which counts GPU-side start-up only.
  Seconds call_overhead{0.0};
  /// The latency the network plugin reports to NCCL for its NICs (ncclNetProperties_t.latency,
  /// NCCL's graph->latencyInter): NCCL adds it to every step that crosses the network, twice with
  /// Simple (the receive flush), in its tuning model and here in the run (unless net_step is
  /// given). NCCL's own IB and socket transports report 0; aws-ofi-nccl reports 75 us on p4d,
  /// p4de, p5 and p5e, 35 us on p5en and later (src/platform-aws.cpp). Counts only between nodes.
  Seconds net_latency{0.0};
  /// What a step between nodes takes on the plugin's path in the run, where that is not what the
  /// plugin reports to NCCL (net_latency, a figure a plugin may choose to steer NCCL's choice:
  /// aws-ofi-nccl's 75 us, commit d87d61e "makes NCCL choose the wrong algorithm" below it): the
  /// whole latency of each step between nodes in the run, in place of NCCL's NET constant and
  /// net_latency (as AWS's tuner model prices a step), while NCCL's choice and estimate keep
  /// them. Negative: not given (the run charges NCCL's constant plus net_latency, twice with
  /// Simple, as NCCL's model does).
  Seconds net_step{-1.0};
  /// The same for a Simple step (its receive completion and flush); negative: net_step where
  /// that is given.
  Seconds net_step_simple{-1.0};
  /// Host time per GPU of one collective call where one thread drives several GPUs (nccl-tests
  /// -g N: a group call enqueues and launches each GPU's kernel in turn, src/group.cc; the
  /// benchmark's back-to-back calls then come no faster than N of these apart). 4.2 us: the
  /// slope of nccl-tests' 8 - 128 B allreduce time over -g 4 to 8 on a DGX A100 (16.88, 20.8,
  /// 25.2, 29.5, 33.7 us; NVIDIA/nccl-tests#123), where NCCL's device time grows 1.2 us a GPU.
  Seconds group_launch{4.2e-6};
  /// The NCCL release the measured runs used ("2.19.3"; "" for the newest release collsim
  /// models): its tuning model makes NCCL's choice (stacks/nccl_model.hpp, NcclModelInputs::
  /// release). A log that says which NCCL ran overrides it for its rows.
  std::string version;
  SourcePos version_pos; ///< where `version` is written
  NcclProtocolSpec ll;
  NcclProtocolSpec ll128;
  NcclProtocolSpec simple;
  /// NCCL environment variables the measured runs set (`nccl: {env: {NCCL_ALGO: Ring, ...}}`),
  /// by name, as written; they constrain NCCL's own choice as NCCL applies them
  /// (stacks/nccl_env.hpp lists the variables read).
  std::map<std::string, std::string> env;
  std::map<std::string, SourcePos> env_pos; ///< where each value is written
  bool operator==(const NcclSpec&) const = default;
};

/// What the MPI stacks read beyond the hardware (`mpi:`; stacks/mpi_env.hpp): the library's
/// per-call cost and the environment variables the measured runs set (UCX_RNDV_THRESH, UCX_TLS,
/// ...), by name, as written.
struct MpiSpec {
  /// Host time per collective call before the first message (library entry, algorithm
  /// selection); negative: the stack's own (none yet).
  Seconds call_overhead{-1.0};
  std::map<std::string, std::string> env;
  std::map<std::string, SourcePos> env_pos; ///< where each value is written
  bool operator==(const MpiSpec&) const = default;
};

/// How far one size range's predictions were measured to be off real runs, over `rows` rows: the
/// median and 90th percentile of |error| (|predicted - measured| / measured, in percent) and the
/// extremes of each sign: the most a run was slower than predicted (-error) and faster (+error).
struct AccuracyRange {
  std::uint32_t rows = 0; ///< 0: no measured row in this range (no band there)
  double median_pct = 0.0;
  double p90_pct = 0.0;
  double slower_pct = 0.0; ///< `collsim check` calls a row slow beyond this (--tolerance auto)
  double faster_pct = 0.0; ///< ... and fast beyond this
  bool operator==(const AccuracyRange&) const = default;
};

/// What a scenario's predictions were measured to miss by (`accuracy:`; `collsim calibrate` writes
/// it from the rows it held out), below and from 1 MiB. `collsim check` and `collsim expect` take
/// their tolerance from it (docs/health-check.md). Describes this file only: a scenario derived
/// from it (`base:`) starts without one.
struct AccuracySpec {
  std::string measured_on; ///< which rows, in words
  AccuracyRange below_1MiB;
  AccuracyRange from_1MiB;
  SourcePos pos; ///< where the section is written (line 0: none)
  [[nodiscard]] bool empty() const { return below_1MiB.rows == 0 && from_1MiB.rows == 0; }
  bool operator==(const AccuracySpec&) const = default;
};

struct Scenario {
  std::string name;
  std::string description;
  std::string file; ///< the path it was loaded from (for messages)
  TopologySpec topology;
  SimgridSpec simgrid;
  NcclSpec nccl;
  MpiSpec mpi;
  /// The library stack that runs the studies (`stack:`; stacks::Registry names); empty: each
  /// algorithm's own (NCCL's algorithms on the NCCL stack, the others on "direct").
  std::string stack;
  SourcePos stack_pos;
  /// Where the collective's buffers live (`buffers:`): "device" or "host"; empty: device on
  /// GPU ranks.
  std::string buffers;
  SourcePos buffers_pos;
  AccuracySpec accuracy;
  std::vector<StudySpec> studies;
  bool operator==(const Scenario&) const = default;
};

} // namespace collsim::core
