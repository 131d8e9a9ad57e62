#pragma once
// NIC kinds (`topology.node.nic_kind`, docs/topology.md "NIC kinds"): the transport a node's NICs
// speak, with the defaults it gives the node's NIC line rate and latency when the scenario does
// not write them, and its transport efficiency: the fraction of the line rate a large transfer
// reaches with that transport (EFA's SRD and GPUDirect-TCPX's TCP data path reach less than
// InfiniBand RDMA). The efficiency is stored in core::NodeSpec for the library (stack) models;
// topologies, engines and the physical busbw limit use the line rate.
//
// Every number cites ../shared/reference/hardware.md's source ids [Sn] or a public URL in
// nic_kinds.cpp; numbers no source gives are marked [unverified] there and in the docs.

#include "collsim/core/units.hpp"

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace collsim::topologies {

struct NicKind {
  std::string_view name;    ///< "ib_ndr", as written in scenarios
  std::string_view summary; ///< "InfiniBand NDR (ConnectX-7), RDMA"
  core::Bandwidth line_rate;
  core::Seconds latency;    ///< per NIC link (an inter-node route crosses two)
  double efficiency = 1.0;  ///< large-transfer share of the line rate, in (0, 1]
  std::string_view sources; ///< where the three numbers come from, for `collsim` listings
  /// NCCL reaches it through its own IB verbs transport (src/transport/net_ib.cc), not a network
  /// plugin (aws-ofi-nccl for EFA, Google's TCPX plugins).
  bool nccl_ib_transport = false;
};

/// Every NIC kind, in the order the docs list them.
std::span<const NicKind> nic_kinds();
/// The kind called `name`, or nullptr.
const NicKind* find_nic_kind(std::string_view name);
/// The kind names, for "valid values are: ..." messages.
std::vector<std::string> nic_kind_names();

} // namespace collsim::topologies
