#include "collsim/topologies/build.hpp"
#include "collsim/core/errors.hpp"

namespace collsim::topologies {

std::vector<std::string> builder_kinds() {
  return {"uniform", "cluster", "system"};
}

core::Topology build(const core::TopologySpec& spec, std::uint32_t ranks) {
  if (ranks == 0) {
    throw core::UsageError("a topology needs at least one rank");
  }
  if (spec.kind == "uniform") {
    return build_uniform(spec.uniform, spec.endpoint, ranks);
  }
  if (spec.kind == "cluster") {
    return build_cluster(spec.cluster, spec.endpoint, ranks);
  }
  if (spec.kind == "system") {
    return build_system(spec, ranks);
  }
  throw core::UnknownNameError("topology kind", spec.kind, builder_kinds());
}

} // namespace collsim::topologies
