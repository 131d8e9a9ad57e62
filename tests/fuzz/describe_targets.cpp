// Fuzz targets of the node-description readers (targets.hpp). hwloc parses the XML; the target
// checks what collsim makes of the topology hwloc hands back.

#include "support.hpp"
#include "targets.hpp"

#include <collsim/describe/node.hpp>

#include <hwloc.h>

#include <string>

namespace collsim::fuzz {

void lstopo(std::string_view text) {
  // hwloc loads its plugins (the libxml2 XML reader) with the first topology and unloads them
  // with the last; a leak inside one would then come from an unknown module, which lsan.supp
  // cannot name. One topology kept for the whole process keeps them loaded.
  static const hwloc_topology_t keep_plugins = [] {
    hwloc_topology_t t = nullptr;
    hwloc_topology_init(&t);
    return t;
  }();
  (void)keep_plugins;
  (void)describe::read_lstopo_xml(scratch_file(text, ".xml"));
}

void nvidia_smi(std::string_view text) {
  (void)describe::parse_nvidia_smi_topo(std::string(text), "fuzz.txt");
}

void ibstat(std::string_view text) {
  (void)describe::parse_ibstat(std::string(text), "fuzz.txt");
}

} // namespace collsim::fuzz
