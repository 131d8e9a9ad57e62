#pragma once
// What a schedule's protocol (core::Protocol) makes of a message on the simgrid engine, as on the
// loggp engine: its overhead, its bytes on the wire and its latency beyond the route's
// (simulation.cpp runs the simulation). Internal to the engine.

#include "platform.hpp"

#include "collsim/core/schedule.hpp"
#include "collsim/core/topology.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

namespace collsim::engines::detail {

class WireProtocol {
public:
  /// `node_key`: per participant, equal keys share a node (simulation.hpp's node_keys).
  WireProtocol(const core::Protocol& protocol, std::vector<std::uint64_t> node_key)
      : protocol_(protocol), node_key_(std::move(node_key)), plain_(protocol == core::Protocol{}),
        rated_(protocol.stream_bandwidth.bytes_per_second > 0.0),
        sequential_(rated_ || (protocol.port_per_link && !protocol.name.empty())) {}

  [[nodiscard]] const core::Protocol& protocol() const { return protocol_; }
  /// A rate per issue stream (Protocol::stream_bandwidth: NCCL's LL, LL128 and tree channels).
  [[nodiscard]] bool rated() const { return rated_; }
  /// An issue stream moves one message after another: a rate-bound one, and every channel of
  /// NCCL's protocols (a channel is a thread block that moves one slice or line batch at a time:
  /// prims_simple.h, prims_ll.h, prims_ll128.h), rated or not.
  [[nodiscard]] bool sequential() const { return sequential_; }
  /// What a send on `stream` to `peer` waits for the previous flow of (RankState::take_lane): its
  /// stream, as loggp's rate-bound channel; without a rate its stream and peer (a block writes
  /// one slice to each of its peers at once: a tree's children, NVLS-tree's switch and network
  /// peers; loggp's port per link takes them at once).
  [[nodiscard]] std::uint64_t lane(std::uint32_t stream, core::Rank peer) const {
    return rated_ ? stream : stream | (std::uint64_t{peer} + 1) << 32;
  }

  /// o of a message between a and b: the protocol's intra-node overhead where it sets one, else
  /// the endpoint's.
  [[nodiscard]] double overhead(const core::EndpointParams& ep, core::Rank a, core::Rank b) const {
    const double intra = protocol_.intra_node_overhead.value;
    return intra >= 0 && same_node(a, b) ? intra : ep.overhead.value;
  }

  /// Bytes on the wire for m payload bytes from `from` to `to` (LL carries 8 payload bytes per
  /// 16, LL128 120 per 128; a network transport's headers between nodes).
  [[nodiscard]] std::uint64_t wire_bytes(std::uint64_t m, core::Rank from, core::Rank to) const {
    if (plain_) {
      return m;
    }
    const double eff =
        protocol_.efficiency *
        (same_node(from, to) ? protocol_.intra_node_efficiency : protocol_.inter_node_efficiency);
    if (eff >= 1.0) {
      return m;
    }
    return static_cast<std::uint64_t>(std::ceil(static_cast<double>(m) / eff));
  }

  /// What a protocol's per-message latency adds to the route's (see LogGPEngine::latency).
  [[nodiscard]] double extra_latency(const PlanRoute& route, core::Rank from, core::Rank to) const {
    if (plain_) {
      return 0.0;
    }
    const double proto =
        same_node(from, to) ? protocol_.message_latency.value : protocol_.inter_node_latency.value;
    return std::max(0.0, proto - route.latency);
  }

  /// The proxy's time for a message from `from` to `to` (Protocol::proxy_overhead: between
  /// nodes only).
  [[nodiscard]] double proxy_time(core::Rank from, core::Rank to) const {
    return protocol_.proxy_overhead.value > 0.0 && !same_node(from, to)
               ? protocol_.proxy_overhead.value
               : 0.0;
  }

  /// Whether participants a and b sit in one node (switches are nodes of their own).
  [[nodiscard]] bool same_node(core::Rank a, core::Rank b) const {
    return node_key_[a] == node_key_[b];
  }

private:
  core::Protocol protocol_;
  std::vector<std::uint64_t> node_key_;
  bool plain_ = true; // no protocol: MPI's plain messages
  bool rated_ = false;
  bool sequential_ = false;
};

} // namespace collsim::engines::detail
