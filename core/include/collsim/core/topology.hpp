#pragma once
// The topology: a Boost.Graph graph of devices and directed links, ranks mapped onto devices, and
// routes between ranks (ARCHITECTURE.md, "Topology"). Engines read routes; they never build them.
//
// Two routing modes:
//   * graph: inside a node, routes are shortest paths (fewest hops, then the widest bottleneck)
//     through that node's devices only, so two GPUs without a direct NVLink meet through an
//     intermediate GPU (NCCL's PATH_NVB) before PCIe. Between nodes, a device with an egress NIC
//     routes device -> its NIC -> network -> peer's NIC -> peer (GPU-to-NIC affinity, as NCCL and
//     MPI pin them). The network part is the fabric's own routing when its builder installed a
//     NetworkRouter (fat-tree up/down, DragonFly minimal or Valiant, torus dimension order), else
//     the shortest path through network devices. Routes are computed on demand, never as
//     all-pairs tables.
//   * full mesh (the textbook alpha-beta model): every ordered pair of ranks has its own link with
//     the same bandwidth and latency. The p*(p-1) links are implicit, so a 2^20-rank study is
//     cheap.

#include "collsim/core/schedule.hpp"
#include "collsim/core/units.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace collsim::core {

using DeviceId = std::uint32_t;
using LinkId = std::uint32_t;
inline constexpr DeviceId kNoDevice = 0xffffffffu;
/// Device::node of the devices of the network (switches, routers): they belong to no node.
inline constexpr std::uint32_t kNetworkNode = 0xffffffffu;

enum class DeviceKind : std::uint8_t {
  endpoint,
  gpu,
  cpu,
  nvswitch,
  pcie_switch,
  nic,
  network_switch,
  numa, ///< a NUMA domain: the memory that cores of a socket share
  core  ///< a CPU core that hosts a rank (MPI process)
};
enum class LinkKind : std::uint8_t {
  generic,
  nvlink,
  pcie,
  ib,
  ethernet,
  upi, ///< inter-socket link (UPI, Infinity Fabric xGMI, X-Bus)
  intra,
  memory ///< core <-> its NUMA domain (shared-memory transfers)
};
std::string_view to_string(DeviceKind k);
std::string_view to_string(LinkKind k);

/// LogGP endpoint parameters and local compute rates of a device that hosts ranks.
struct EndpointParams {
  Seconds overhead{0.0};         ///< o: CPU time per send and per receive
  Seconds gap{0.0};              ///< g: minimum time between two message injections
  Bandwidth reduce_bandwidth{0}; ///< 1/gamma: bytes reduced per second (0 = free)
  Bandwidth copy_bandwidth{0};   ///< local copy rate (0 = free)
  bool operator==(const EndpointParams&) const = default;
};

struct Device {
  std::string name;
  DeviceKind kind = DeviceKind::endpoint;
  std::uint32_t node = 0;      ///< the node (server) the device belongs to
  DeviceId egress = kNoDevice; ///< NIC used for traffic leaving the node (kNoDevice: none)
  EndpointParams endpoint;
  /// In-network reduction (InfiniBand SHARP, NVLink SHARP): the device can take part in a
  /// schedule as an agent that reduces what it receives, at endpoint.reduce_bandwidth.
  bool reduces = false;
  /// Forwarding latency added when a route passes through the device (a switch hop).
  Seconds latency{0.0};
  /// The CPU root complex (or NUMA domain) the device hangs from; kNoDevice: none.
  DeviceId host = kNoDevice;
  /// false: PCIe peer-to-peer is off for this GPU, so traffic to another GPU of its node is
  /// staged through host memory (device -> host -> peer), as CUDA does without P2P.
  bool p2p = true;
  /// false: no GPUDirect RDMA for this GPU, so its traffic to and from other nodes is staged
  /// through host memory (device -> host -> NIC, NIC -> host -> device), as NCCL's network
  /// transport (src/transport/net.cc: host buffers without GDR) and UCX do without it.
  bool gdr = true;
  bool operator==(const Device&) const = default;
};

struct Link {
  DeviceId from = 0;
  DeviceId to = 0;
  Bandwidth bandwidth;
  Seconds latency;
  LinkKind kind = LinkKind::generic;
  bool operator==(const Link&) const = default;
};

/// What an engine needs to price a message on a route: L (sum of link latencies), the bottleneck
/// bandwidth (1/G) and the number of links crossed.
struct RouteCost {
  Seconds latency;
  Bandwidth bottleneck;
  std::uint32_t hops = 0;
  bool operator==(const RouteCost&) const = default;
};

class Topology;

/// The routing of a structured network: the builder of a fat-tree, DragonFly or torus installs one
/// so that routes between network devices follow the fabric's own deterministic routing and cost
/// O(hops) to compute, however large the fabric.
class NetworkRouter {
public:
  NetworkRouter() = default;
  NetworkRouter(const NetworkRouter&) = delete;
  NetworkRouter& operator=(const NetworkRouter&) = delete;
  virtual ~NetworkRouter() = default;
  /// Appends the links from `from` to `to` (NICs or devices of the network, from != to).
  virtual void route(const Topology& t, DeviceId from, DeviceId to,
                     std::vector<LinkId>& path) const = 0;
  /// How it routes, for summaries: "up/down, D-mod-k", "minimal", "Valiant", ...
  [[nodiscard]] virtual std::string describe() const = 0;
};

class Topology {
public:
  Topology() = default;

  /// The textbook model: `ranks` endpoints, every ordered pair joined by its own link.
  static Topology full_mesh(std::uint32_t ranks, Bandwidth bandwidth, Seconds latency,
                            EndpointParams endpoint);

  DeviceId add_device(Device d);
  /// Adds one directed link; add_duplex adds both directions (full duplex, as NVLink, PCIe and IB
  /// are).
  LinkId add_link(Link l);
  void add_duplex(DeviceId a, DeviceId b, Bandwidth bw, Seconds latency, LinkKind kind);
  /// Sets the NIC through which device `d` leaves its node (Device::egress): builders set it on
  /// devices added before their node's NICs, such as CPU sockets.
  void set_egress(DeviceId d, DeviceId nic) { devices_.at(d).egress = nic; }
  /// Maps rank i to device `devices[i]`.
  void map_ranks(std::vector<DeviceId> devices);
  /// Installs the routing of the network part (see NetworkRouter); none: shortest paths.
  void set_router(std::shared_ptr<const NetworkRouter> router) { router_ = std::move(router); }
  [[nodiscard]] const NetworkRouter* router() const { return router_.get(); }

  [[nodiscard]] bool is_full_mesh() const { return full_mesh_; }
  [[nodiscard]] std::uint32_t rank_count() const {
    return static_cast<std::uint32_t>(rank_device_.size());
  }
  [[nodiscard]] DeviceId device_of(Rank r) const { return rank_device_[r]; }
  [[nodiscard]] const std::vector<Device>& devices() const { return devices_; }
  [[nodiscard]] const std::vector<Link>& links() const { return links_; }
  [[nodiscard]] const EndpointParams& endpoint(Rank r) const {
    return devices_[rank_device_[r]].endpoint;
  }
  /// The node of rank r; on a full mesh every rank is a node of its own.
  [[nodiscard]] std::uint32_t node_of(Rank r) const {
    return full_mesh_ ? r : devices_[rank_device_[r]].node;
  }
  /// The device called `name`, if there is one.
  [[nodiscard]] std::optional<DeviceId> find_device(std::string_view name) const;
  /// The devices that can reduce in the network (Device::reduces), in id order.
  [[nodiscard]] std::vector<DeviceId> reducing_switches() const;
  /// The links leaving device d, in id order.
  [[nodiscard]] std::vector<LinkId> out_links(DeviceId d) const;
  /// The first link from a to b, if they are adjacent.
  [[nodiscard]] std::optional<LinkId> link_between(DeviceId a, DeviceId b) const;
  /// Same as link_between, but throws InternalError when a and b are not adjacent (for routers).
  [[nodiscard]] LinkId link(DeviceId a, DeviceId b) const;

  /// The links a message from rank a to rank b crosses, in order (empty when a == b). In full-mesh
  /// mode the single implicit link has no id; use route_cost. Throws EngineError if unreachable.
  [[nodiscard]] std::vector<LinkId> route(Rank a, Rank b) const;
  [[nodiscard]] RouteCost route_cost(Rank a, Rank b) const;
  /// Routes between devices (for in-network agents). A device with an egress NIC reaches anything
  /// outside its node (another node's device, a network switch) through that NIC.
  [[nodiscard]] std::vector<LinkId> route_between(DeviceId a, DeviceId b) const;
  [[nodiscard]] RouteCost route_cost_between(DeviceId a, DeviceId b) const;
  /// Whether data from device a to device b is staged through host memory: two GPUs of one node
  /// without PCIe peer-to-peer between them (device -> host -> peer, as CUDA does without P2P).
  [[nodiscard]] bool staged_between(DeviceId a, DeviceId b) const;
  /// Whether GPU d's traffic to and from other nodes is staged through its host's memory (no
  /// GPUDirect RDMA: Device::gdr false): its routes out of the node pass its socket.
  [[nodiscard]] bool staged_to_network(DeviceId d) const;
  /// What a route costs: the sum of its links' latencies plus the forwarding latency of every
  /// device it passes through, its narrowest link and its length in links.
  [[nodiscard]] RouteCost cost_of(const std::vector<LinkId>& path) const;

  bool operator==(const Topology& other) const;

private:
  /// Fewest hops, then widest bottleneck, through devices of node `within` (and `to`).
  std::vector<LinkId> shortest_path(DeviceId from, DeviceId to, std::uint32_t within) const;
  /// The network part of a route between two NICs (or network devices).
  void network_path(DeviceId from, DeviceId to, std::vector<LinkId>& path) const;
  /// f(link, target device) for each link leaving device d, in the order they were added, until
  /// f returns false (defined and used in topology.cpp only).
  template <typename F>
  void each_out_link(DeviceId d, F&& f) const;

  /// The Boost.Graph adjacency list of devices and links, defined in topology.cpp and owned
  /// through a deep-copying pointer, so that this header, which nearly every file includes, does
  /// not include Boost.Graph: that halves the compile time of a typical algorithm file (2.7 to
  /// 1.4 CPU-seconds with GCC 12 at -O3).
  struct Graph;
  class GraphPtr {
  public:
    GraphPtr();
    GraphPtr(const GraphPtr& other);
    GraphPtr(GraphPtr&& other) noexcept;
    GraphPtr& operator=(const GraphPtr& other);
    GraphPtr& operator=(GraphPtr&& other) noexcept;
    ~GraphPtr();
    /// The graph; a moved-from pointer gets a new empty one.
    Graph& get();
    /// The graph, or nullptr after a move (no devices, no links).
    [[nodiscard]] const Graph* find() const { return graph_.get(); }

  private:
    std::unique_ptr<Graph> graph_;
  };
  GraphPtr graph_;
  std::vector<Device> devices_;
  std::vector<Link> links_;
  std::vector<DeviceId> rank_device_;
  std::shared_ptr<const NetworkRouter> router_;
  bool full_mesh_ = false;
  Bandwidth mesh_bandwidth_;
  Seconds mesh_latency_;
};

} // namespace collsim::core
