#include "collsim/core/errors.hpp"
#include "collsim/topologies/build.hpp"

namespace collsim::topologies {

core::Topology build_system(const core::TopologySpec&, std::uint32_t) {
  throw core::InternalError("system: not built yet");
}

void validate(const core::TopologySpec&) {}

} // namespace collsim::topologies
