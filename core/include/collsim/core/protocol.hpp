#pragma once
// How messages travel under a library's protocol (core::Protocol, set by the stacks and carried in
// a schedule's header) and the rules both engines read from it, so that loggp and simgrid price
// a handshake, a core's copy and a core's reduction alike.

#include "collsim/core/units.hpp"

#include <algorithm>
#include <cstdint>
#include <string>

namespace collsim::core {

/// How messages travel on the wire (algorithms.md sections 3.3, 3.4, 3.7). A message of m payload
/// bytes occupies ceil(m / efficiency) bytes of link time and pays `message_latency` more on top of
/// the route latency (`inter_node_latency` when it leaves the node); every rank starts `launch`
/// late (a kernel launch, NCCL's baseLatencies).
struct Protocol {
  std::string name;                ///< "" (plain), "LL", "LL128" or "Simple"
  double efficiency = 1.0;         ///< payload bytes per wire byte, in (0, 1]
  Seconds launch{0.0};             ///< once, at the start of every rank
  Seconds message_latency{0.0};    ///< per message within a node
  Seconds inter_node_latency{0.0}; ///< per message between nodes
  /// How a rank's messages share its device. false: LogGP's single port (one message leaves, and
  /// one arrives, at a time). true: a port per link of the device: messages that leave (or
  /// arrive) over different first (last) links of their routes overlap, as NCCL's channels do,
  /// each a thread block driving its own NVLink, PCIe or NIC path (set by the NCCL stack).
  bool port_per_link = false;
  /// The most payload bytes per second one issue stream moves (NCCL: one channel's thread block,
  /// whose copy loop bounds LL and LL128 below the link rate; tuning.cc's per-channel maxima);
  /// 0: no bound but the links'.
  Bandwidth stream_bandwidth{0.0};
  /// Data bytes per link byte of the node's own links for messages within a node (NVLink's or
  /// PCIe's packet overhead: the rate a GPU's copies reach over a link of nominal rate B is
  /// B x this), on top of `efficiency`.
  double intra_node_efficiency = 1.0;
  /// The same for messages that leave the node: the network transport's (IB RDMA headers, EFA's
  /// SRD, TCP), on top of `efficiency`.
  double inter_node_efficiency = 1.0;
  /// Flow control: the most messages a sender may have in flight on one connection (sender,
  /// receiver, the sender's issue stream) before the receiver has consumed the oldest, as NCCL's
  /// FIFO of NCCL_STEPS slots per peer connection bounds a channel (src/device/prims_simple.h
  /// waits for the peer's head to pass step - NCCL_STEPS). The k-th send on a connection starts
  /// no earlier than the receive of the (k - fifo_slots)-th completes. 0: unbounded.
  std::uint32_t fifo_slots = 0;
  /// The software overhead o of a message within a node when >= 0, in place of the endpoint's
  /// (MPI's matching send and receive): a library whose intra-node transport is flags and
  /// payload in a shared segment, polled by the peer, pays only the route's latency (one cache
  /// line moving between cores) and the data time (HCOLL's basesmuma, MPICH's release_gather:
  /// algorithms' over_shared_memory_flags). The reader copies: loggp books such a message's data
  /// time on the receiver, not on the sender's port.
  Seconds intra_node_overhead{-1.0};
  /// Rendezvous: a message of more than this many payload bytes moves only after a handshake, the
  /// sender's ready-to-send reaching the receiver and the receiver's request (UCX's RDMA GET, ob1's
  /// clear-to-send) coming back: two more route latencies before its data (UCX's rndv protocol,
  /// src/ucp/tag/rndv.c; Open MPI ob1's pml_ob1_sendreq.c). 0: every message eager.
  std::uint64_t rendezvous_bytes = 0;
  /// A rendezvous message between nodes of fewer than `rendezvous_read_bytes` payload bytes moves
  /// in windows of this many bytes, each granted by a clear-to-send of its own: a handshake per
  /// window (libfabric's efa provider, long-CTS protocol: the receiver grants 32 packets of
  /// payload a time and sends the next grant when they are in, rxr_pkt_type_misc.c and
  /// rxr_pkt_type_data.c in v1.18.0). 0: one handshake whatever the length.
  std::uint64_t rendezvous_window_bytes = 0;
  /// From this many payload bytes a message between nodes is read by the receiver in one RDMA
  /// read after one handshake, whatever the eager threshold and the windows (libfabric efa's read
  /// protocol, which it picks before the others, FI_EFA_INTER_MIN_READ_MESSAGE_SIZE). 0: never.
  std::uint64_t rendezvous_read_bytes = 0;
  /// The rendezvous threshold of messages inside a node where it differs from the one between
  /// nodes (libfabric efa over its shm peer: eager up to 4096 bytes, a read handshake above,
  /// where the network's eager and medium protocols go to 64 KiB): a message of more than this
  /// many bytes waits for a handshake (0: every message with data, as libfabric's 0 means);
  /// kAsBetweenNodes: the same `rendezvous_bytes`.
  std::uint64_t intra_node_rendezvous_bytes = kAsBetweenNodes;
  static constexpr std::uint64_t kAsBetweenNodes = ~std::uint64_t{0};
  /// The network proxy's CPU time per message between nodes (NCCL: one progress thread per GPU
  /// posts every network step of all its channels, src/transport/net.cc): such a message leaves
  /// no earlier than its sender's proxy is free, and holds the proxy this long, so that a rank's
  /// network messages are posted one after another. 0: none.
  Seconds proxy_overhead{0.0};
  /// Host agents copy their messages inside a node (stacks/host_staging.hpp: an MPI library's
  /// host processes running an algorithm on staged GPU buffers move a message to another process
  /// of the node through shared memory, one copy by the sender's core: UCX's CMA). An agent's send
  /// to another agent of its node leaves length / (its endpoint's copy rate) after it is ready,
  /// and the agent's later operations issue no earlier. false: such a message costs its route.
  bool agents_copy = false;
  /// One core's rates for what an MPI library's CPU ranks do themselves (stacks/mpi_paths.hpp): a
  /// rank's send to another rank of its node leaves only after its core has copied it, its wire
  /// bytes (twice the payload on a two-copy transport) at `core_copy_bandwidth`, and the rank's
  /// later operations wait for that copy, as an agent's (agents_copy); its reductions run at no
  /// more than `core_reduce_bandwidth`. Not for messages whose readers copy (intra_node_overhead
  /// set). 0: the route's and the endpoint's rates (a CPU rank's are its NUMA domain's).
  Bandwidth core_copy_bandwidth{0.0};
  Bandwidth core_reduce_bandwidth{0.0};
  bool operator==(const Protocol&) const = default;
};

/// How many handshakes a message of m payload bytes waits for before its data arrives under `p`
/// (0: eager), between two ranks of one node or not: one per rendezvous message, one per window
/// for a windowed one (Protocol::rendezvous_window_bytes). Each costs the engines two more route
/// latencies (the request and the grant).
[[nodiscard]] inline std::uint64_t rendezvous_handshakes(const Protocol& p, std::uint64_t m,
                                                         bool same_node) {
  if (same_node) {
    if (p.intra_node_rendezvous_bytes != Protocol::kAsBetweenNodes) {
      return m > p.intra_node_rendezvous_bytes ? 1 : 0;
    }
    return p.rendezvous_bytes > 0 && m > p.rendezvous_bytes ? 1 : 0;
  }
  if (p.rendezvous_read_bytes > 0 && m >= p.rendezvous_read_bytes) {
    return 1;
  }
  if (p.rendezvous_bytes == 0 || m <= p.rendezvous_bytes) {
    return 0;
  }
  if (p.rendezvous_window_bytes > 0) {
    return (m + p.rendezvous_window_bytes - 1) / p.rendezvous_window_bytes;
  }
  return 1;
}

/// Seconds to move `bytes` at `bw`; 0 where the rate is 0 (Protocol's "no bound").
[[nodiscard]] inline double rate_time(std::uint64_t bytes, Bandwidth bw) {
  return bw.bytes_per_second > 0.0 ? static_cast<double>(bytes) / bw.bytes_per_second : 0.0;
}

/// Whether any sender's core copies its messages before they leave under `p` (sender_copy): the
/// engines' fast path for the protocols where none does.
[[nodiscard]] inline bool copies_before_send(const Protocol& p) {
  return p.agents_copy || p.core_copy_bandwidth.bytes_per_second > 0.0;
}

/// What a sender's core copies before its message leaves, and at what rate (0: nothing): a host
/// agent's message to another agent of its node at the agent's endpoint copy rate, its payload
/// (Protocol::agents_copy); an MPI rank's to another rank of its node at one core's rate, its
/// wire bytes (Protocol::core_copy_bandwidth), unless the readers copy (intra_node_overhead
/// set). The sender's later operations wait for the copy.
struct SenderCopy {
  Bandwidth rate{0.0};
  bool wire_bytes = false; ///< the message's wire bytes (an MPI rank's), else its payload
};
[[nodiscard]] inline SenderCopy sender_copy(const Protocol& p, bool same_node, bool from_agent,
                                            bool to_agent, Bandwidth agent_copy_rate) {
  if (!same_node || from_agent != to_agent) {
    return {};
  }
  if (from_agent) {
    return p.agents_copy ? SenderCopy{agent_copy_rate, false} : SenderCopy{};
  }
  if (p.core_copy_bandwidth.bytes_per_second <= 0.0 || p.intra_node_overhead.value >= 0.0) {
    return {};
  }
  return {p.core_copy_bandwidth, true};
}

/// The rate of a participant's reductions: its endpoint's (`own`), no more than one core's for an
/// MPI rank (Protocol::core_reduce_bandwidth); a host agent keeps its endpoint's.
[[nodiscard]] inline Bandwidth reduce_rate(const Protocol& p, Bandwidth own, bool agent) {
  const double core = p.core_reduce_bandwidth.bytes_per_second;
  if (core <= 0.0 || agent) {
    return own;
  }
  return Bandwidth{own.bytes_per_second > 0.0 ? std::min(own.bytes_per_second, core) : core};
}

/// The text form's `protocol ...` line of `p` (without the newline): the required fields, then
/// each optional one that differs from its default (core/src/schedule_text.cpp has the grammar).
std::string protocol_line(const Protocol& p);

} // namespace collsim::core
