// `collsim topology import`: a scenario from the tools that describe a node (hwloc's
// `lstopo --of xml`, `nvidia-smi topo -m`, `ibstat`), docs/topology.md, "Describe my node".

#include "cli_support.hpp"
#include "commands.hpp"

#include "collsim/core/errors.hpp"
#include "collsim/describe/node.hpp"

#include <fmt/format.h>

#include <array>
#include <iostream>
#include <memory>

namespace collsim::cli {
namespace {

// The network kinds of scenario-format.md, "network" (the loader checks them again).
constexpr std::array<const char*, 5> kNetworks{"switch", "fat_tree", "dragonfly", "dragonfly_plus",
                                               "torus"};

} // namespace

void add_topology_import(CLI::App& topology) {
  struct Args {
    std::string lstopo;
    std::string nvidia_smi;
    std::string ibstat;
    bool this_machine = false;
    std::uint32_t nodes = 1;
    std::string network = "switch";
    std::string name;
    std::string output;
  };
  auto a = std::make_shared<Args>();
  auto* cmd = topology.add_subcommand(
      "import",
      "Write a scenario for a node from lstopo --of xml, nvidia-smi topo -m and ibstat output "
      "(docs/topology.md, \"Describe my node\")");
  cmd->add_option("--lstopo", a->lstopo, "hwloc XML of the node (lstopo --of xml > node.xml)");
  cmd->add_option("--nvidia-smi-topo", a->nvidia_smi,
                  "nvidia-smi topo -m output (NVLink counts, GPU and NIC paths)");
  cmd->add_option("--ibstat", a->ibstat, "ibstat output (NIC rates and link layers)");
  cmd->add_flag("--this-machine", a->this_machine,
                "Describe the machine collsim runs on (hwloc, and nvidia-smi topo -m and ibstat "
                "where they run)");
  cmd->add_option("--nodes", a->nodes, "Nodes of this kind in the system")
      ->check(CLI::Range(1U, 16777216U))
      ->capture_default_str();
  cmd->add_option("--network", a->network,
                  "The network's kind: switch, fat_tree, dragonfly, dragonfly_plus or torus")
      ->capture_default_str();
  cmd->add_option("--name", a->name,
                  "The scenario's name (default: the output file's stem, else imported-node)");
  cmd->add_option("-o,--output", a->output,
                  "Write the scenario to this file instead of standard output");
  cmd->callback([a] {
    if (std::find(kNetworks.begin(), kNetworks.end(), a->network) == kNetworks.end()) {
      throw core::UnknownNameError("network kind", a->network,
                                   {kNetworks.begin(), kNetworks.end()});
    }
    if (a->this_machine && (!a->lstopo.empty() || !a->nvidia_smi.empty() || !a->ibstat.empty())) {
      throw core::UsageError("topology import: --this-machine reads this machine; give it without "
                             "--lstopo, --nvidia-smi-topo and --ibstat");
    }
    if (!a->this_machine && a->lstopo.empty() && a->nvidia_smi.empty()) {
      throw core::UsageError("topology import: give --lstopo (and --nvidia-smi-topo, --ibstat "
                             "where you have them), at least --nvidia-smi-topo, or --this-machine");
    }
    describe::NodeDescription node;
    std::string command = "collsim topology import";
    if (a->this_machine) {
      std::vector<std::string> warnings;
      node = describe::describe_here(warnings);
      command += " --this-machine";
      for (const std::string& w : warnings) {
        std::cerr << "collsim: warning: " << w << "\n";
      }
    }
    if (!a->lstopo.empty()) {
      node = describe::read_lstopo_xml(a->lstopo);
      command += " --lstopo " + a->lstopo;
    }
    if (!a->nvidia_smi.empty()) {
      const auto matrix =
          describe::parse_nvidia_smi_topo(read_input_file(a->nvidia_smi), a->nvidia_smi);
      describe::merge_topo_matrix(node, matrix, a->nvidia_smi);
      command += " --nvidia-smi-topo " + a->nvidia_smi;
    }
    if (!a->ibstat.empty()) {
      describe::merge_ibstat(node, describe::parse_ibstat(read_input_file(a->ibstat), a->ibstat),
                             a->ibstat);
      command += " --ibstat " + a->ibstat;
    }
    describe::choose_compute_nics(node);
    describe::ScenarioOptions options;
    options.nodes = a->nodes;
    options.network_kind = a->network;
    if (a->nodes > 1) {
      command += fmt::format(" --nodes {} --network {}", a->nodes, a->network);
    }
    options.command = command;
    if (!a->name.empty()) {
      options.name = a->name;
    } else if (!a->output.empty()) {
      std::string stem = a->output.substr(a->output.find_last_of('/') + 1);
      options.name = stem.substr(0, stem.find('.'));
    }
    if (node.gpus.empty() && node.nics.empty() && a->nodes > 1) {
      throw core::UsageError(
          "topology import: the node has no NIC; a system of more than one node needs one");
    }
    emit(describe::to_scenario_yaml(node, options), a->output);
    if (!a->output.empty()) {
      std::cerr << describe::summary_text(node);
    }
  });
}

} // namespace collsim::cli
