#pragma once
// Links inside a node that several NCCL connections cross (internal to the NCCL stack).

#include "collsim/core/schedule.hpp"
#include "collsim/core/topology.hpp"

namespace collsim::stacks::detail {

/// The share of its route's bottleneck that the slowest connection inside a node gets once every
/// GPU port sending over a shared link streams at once, in (0, 1] (1: no link in the middle of a
/// route is crossed by two ports).
///
/// NCCL keeps a channel's connections open for the whole call and drives them all at once; its
/// topology search books each channel's bandwidth on every link of the path it takes
/// (src/graph/search.cc, followPath subtracts the channel's bw from each link), so two rings that
/// cross one PCIe uplink get half of it each. The engines' ports already share a GPU's own links
/// among its channels; a link in the middle of a route (a PCIe switch's uplink to host memory
/// when peer-to-peer is off, two switches meeting at the CPU) is shared here among the ports
/// (first links) that send over it: each gets the link's rate / their number. The stack scales
/// the intra-node efficiency by the smallest such share: a ring or tree channel runs at its
/// slowest hop's rate, so slowing every hop inside the node to it changes nothing else.
[[nodiscard]] double intra_node_link_share(const core::Schedule& schedule,
                                           const core::Topology& topology);

} // namespace collsim::stacks::detail
