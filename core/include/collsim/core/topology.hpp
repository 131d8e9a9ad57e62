#pragma once
// The topology: a Boost.Graph graph of devices and directed links, ranks mapped onto devices, and
// routes between ranks (ARCHITECTURE.md, "Topology"). Engines read routes; they never build them.
//
// Two routing modes:
//   * graph: routes are shortest paths (breadth-first, fewest hops) in the device graph. Between
//     nodes, a device with an egress NIC routes device -> its NIC -> ... -> peer's NIC -> peer
//     (GPU-to-NIC affinity, as NCCL and MPI pin them).
//   * full mesh (the textbook alpha-beta model): every ordered pair of ranks has its own link with
//     the same bandwidth and latency. The p*(p-1) links are implicit, so a 2^20-rank study is
//     cheap.

#include "collsim/core/schedule.hpp"
#include "collsim/core/units.hpp"

#include <boost/graph/adjacency_list.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace collsim::core {

using DeviceId = std::uint32_t;
using LinkId = std::uint32_t;
inline constexpr DeviceId kNoDevice = 0xffffffffu;

enum class DeviceKind : std::uint8_t {
  endpoint,
  gpu,
  cpu,
  nvswitch,
  pcie_switch,
  nic,
  network_switch
};
enum class LinkKind : std::uint8_t { generic, nvlink, pcie, ib, ethernet, upi, intra };
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
  /// Maps rank i to device `devices[i]`.
  void map_ranks(std::vector<DeviceId> devices);

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

  /// The links a message from rank a to rank b crosses, in order (empty when a == b). In full-mesh
  /// mode the single implicit link has no id; use route_cost. Throws EngineError if unreachable.
  [[nodiscard]] std::vector<LinkId> route(Rank a, Rank b) const;
  [[nodiscard]] RouteCost route_cost(Rank a, Rank b) const;
  /// Routes between devices (for in-network agents). A device with an egress NIC reaches anything
  /// outside its node (another node's device, a network switch) through that NIC.
  [[nodiscard]] std::vector<LinkId> route_between(DeviceId a, DeviceId b) const;
  [[nodiscard]] RouteCost route_cost_between(DeviceId a, DeviceId b) const;

  bool operator==(const Topology& other) const;

private:
  std::vector<LinkId> shortest_path(DeviceId from, DeviceId to) const;
  RouteCost cost_of(const std::vector<LinkId>& path) const;

  using Graph =
      boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS, boost::no_property,
                            boost::property<boost::edge_index_t, LinkId>>;
  Graph graph_;
  std::vector<Device> devices_;
  std::vector<Link> links_;
  std::vector<DeviceId> rank_device_;
  bool full_mesh_ = false;
  Bandwidth mesh_bandwidth_;
  Seconds mesh_latency_;
};

} // namespace collsim::core
