// `uniform`: the textbook alpha-beta-gamma model (Hockney; Thakur, Rabenseifner & Gropp 2005):
// every ordered pair of ranks has its own link of latency alpha and bandwidth 1/beta, and each rank
// reduces at 1/gamma. The links are implicit (Topology::full_mesh), so millions of ranks are cheap.

#include "collsim/topologies/build.hpp"

namespace collsim::topologies {

core::Topology build_uniform(const core::UniformSpec& u, const core::EndpointSpec& e,
                             std::uint32_t ranks) {
  core::EndpointParams ep;
  ep.overhead = e.overhead;
  ep.gap = e.gap;
  ep.copy_bandwidth = e.copy_bandwidth;
  ep.reduce_bandwidth = u.reduce_bandwidth;
  return core::Topology::full_mesh(ranks, u.bandwidth, u.latency, ep);
}

} // namespace collsim::topologies
