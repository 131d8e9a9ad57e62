// collsim-probe --describe: the same scenario `collsim topology import` writes from lstopo,
// nvidia-smi topo -m and ibstat, read here from hwloc's discovery and the two tools, so that one
// probe run gives both the measured log and the node it ran on.

#include "probe_describe.hpp"

#include "collsim/core/errors.hpp"
#include "collsim/describe/node.hpp"

#include <fmt/format.h>

#include <fstream>

namespace collsim::probe {

void write_node_description(const std::string& path, int nodes, const std::string& options,
                            std::vector<std::string>& warnings) {
  const describe::NodeDescription node = describe::describe_here(warnings);
  describe::ScenarioOptions scenario;
  scenario.nodes = static_cast<std::uint32_t>(nodes);
  const std::string stem = path.substr(path.find_last_of('/') + 1);
  scenario.name = stem.substr(0, stem.find('.'));
  if (scenario.name.empty()) {
    scenario.name = "probed-node";
  }
  scenario.command = "collsim-probe " + options;
  std::ofstream out(path);
  if (!out) {
    throw core::UsageError(fmt::format("--describe: cannot write '{}'", path));
  }
  out << describe::to_scenario_yaml(node, scenario);
  if (!out) {
    throw core::UsageError(fmt::format("--describe: cannot write '{}'", path));
  }
}

} // namespace collsim::probe
