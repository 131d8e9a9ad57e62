#pragma once
// The physical bus-bandwidth limit of a machine, drawn as a line on bus-bandwidth charts
// (collsim plot, collsim-gui).
//
// nccl-tests defines bus bandwidth so that it "reflects the speed of the hardware bottleneck
// (NVLink, PCI, QPI or network)" whatever the rank count (formats.md, nccl-tests). Two bottlenecks
// bound it for algorithms that move every byte through the ranks (rings, trees, recursive
// halving/doubling):
//   * a rank's own links: the widest route from a rank to another rank of its node (on NVSwitch
//     systems the GPU's NVLinks; on CPU nodes the core's memory path), or on a mesh the rank's
//     links of that route's kind together (DGX-1: 6 NVLinks); the slowest rank counts;
//   * the node's way out: the sum of the node's NIC routes, when the ranks span nodes (a ring
//     crosses each node boundary with the full per-rank volume, split over the NICs by channel).
// In-network reduction (SHARP, NVLS) moves half the bytes and can go above the line.

#include "collsim/core/topology.hpp"
#include "collsim/core/units.hpp"

#include <string>

namespace collsim::analysis {

struct BusbwLimit {
  core::Bandwidth bandwidth; ///< 0 when the topology has a single rank
  std::string reason;        ///< "NVLink per GPU (300 GB/s)", "8 NICs per node (200 GB/s)", ...
};

/// The bus-bandwidth limit of `topology` with all its ranks.
BusbwLimit busbw_limit(const core::Topology& topology);

} // namespace collsim::analysis
