// hwloc XML (`lstopo --of xml`) and this machine, read with hwloc's own library (Debian
// libhwloc-dev, API 2.x; it also reads hwloc 1.x XML). What is taken from hwloc's tree:
//
//  * sockets, NUMA domains and cores: the Package, NUMANode and Core objects;
//  * GPUs: PCI devices of class 0x0300 or 0x0302 (display, 3D controller) from NVIDIA (0x10de)
//    or AMD (0x1002), in PCI bus order (nvidia-smi's and CUDA_DEVICE_ORDER=PCI_BUS_ID's order);
//    the model from the GPUModel info of their OS device (NVML, CUDA, RSMI backends);
//  * NICs: PCI devices with an OpenFabrics OS device (mlx5_0, hfi1_0: an RDMA NIC), or, when the
//    XML has no OS devices, of class 0x0207 (InfiniBand);
//  * PCIe switches: the devices under one root port whose route to the host bridge crosses more
//    than one PCI bridge (a root port alone is one bridge; a switch adds an upstream and a
//    downstream port). Everything under one root port is one switch of the model, which is what
//    nvidia-smi reports as PIX or PXB and NCCL as PATH_PIX or PATH_PXB;
//  * NVSwitch chips: NVIDIA PCI devices of class 0x0680 (hwloc marks them subtype NVSwitch);
//  * NVLink: hwloc's "NVLinkBandwidth" distance matrix (NVML backend, hwloc >= 2.5), in MB/s.
// hwloc's API: https://www.open-mpi.org/projects/hwloc/doc/v2.9.0/ (objects, PCI attributes,
// I/O filters, distances).

#include "collsim/core/errors.hpp"
#include "collsim/describe/node.hpp"
#include "describe_support.hpp"

#include <hwloc.h>
#include <pugixml.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace collsim::describe {
namespace {

struct TopologyDeleter {
  void operator()(hwloc_topology* t) const { hwloc_topology_destroy(t); }
};
using TopologyPtr = std::unique_ptr<hwloc_topology, TopologyDeleter>;

constexpr unsigned short kVendorNvidia = 0x10de;
constexpr unsigned short kVendorAmd = 0x1002;

bool is_gpu(const hwloc_obj_t o) {
  const auto& p = o->attr->pcidev;
  const unsigned cls = p.class_id;
  if (p.vendor_id == kVendorNvidia) {
    return cls == 0x0300 || cls == 0x0302;
  }
  if (p.vendor_id == kVendorAmd) {
    // Radeon Instinct MI25-MI60 (Vega 10/20) are VGA-class (0x0300: LLNL Corona's MI50s in
    // tests/data/topology), later Instincts display-other (0x0380) or processing accelerators
    // (0x1200). Servers draw their console with ASPEED or Matrox chips, not AMD's.
    return cls == 0x0300 || cls == 0x0380 || cls == 0x1200 || cls == 0x0302;
  }
  return false;
}

bool is_nvswitch(const hwloc_obj_t o) {
  return o->attr->pcidev.vendor_id == kVendorNvidia && o->attr->pcidev.class_id == 0x0680;
}

std::string bus_id(const hwloc_obj_t o) {
  const auto& p = o->attr->pcidev;
  return fmt::format("{:04x}:{:02x}:{:02x}.{:x}", p.domain, p.bus, p.dev, p.func);
}

/// The first OS device child of `pci` of type `type`, or nullptr.
/// An enum field of hwloc's attributes as its number. hwloc 2.9 takes bridge_type and osdev_type
/// from XML without checking them, and loading a value outside an enum's range is undefined
/// behaviour (UndefinedBehaviorSanitizer, found by fuzzing: bridge_type="2-1").
template <class Enum>
int enum_value(const Enum& field) {
  std::underlying_type_t<Enum> v{};
  std::memcpy(&v, &field, sizeof v);
  return static_cast<int>(v);
}

hwloc_obj_t osdev_child(hwloc_obj_t pci, hwloc_obj_osdev_type_t type) {
  for (hwloc_obj_t c = pci->io_first_child; c != nullptr; c = c->next_sibling) {
    if (c->type == HWLOC_OBJ_OS_DEVICE &&
        enum_value(c->attr->osdev.type) == static_cast<int>(type)) {
      return c;
    }
  }
  return nullptr;
}

/// A GPU's model name from any of its OS devices (GPUModel), else hwloc's PCI device name.
std::string gpu_name(hwloc_obj_t pci) {
  for (hwloc_obj_t c = pci->io_first_child; c != nullptr; c = c->next_sibling) {
    if (const char* model = hwloc_obj_get_info_by_name(c, "GPUModel")) {
      return model;
    }
  }
  if (const char* dev = hwloc_obj_get_info_by_name(pci, "PCIDevice")) {
    return dev;
  }
  return {};
}

struct PciPlace {
  Attachment at;
  hwloc_obj_t root_port = nullptr; ///< the bridge just below the host bridge
  bool behind_switch = false;
  float fastest_link = 0.0F; ///< over the device and its bridges, GB/s
};

/// The socket (Package index) whose CPUs are nearest to `o`: the package above its non-I/O
/// ancestor, or the package of that ancestor's first PU when the ancestor is above the packages.
std::int32_t socket_of(hwloc_topology_t topo, hwloc_obj_t o) {
  hwloc_obj_t anc = hwloc_get_non_io_ancestor_obj(topo, o);
  if (anc == nullptr) {
    return 0;
  }
  if (hwloc_obj_t pkg = hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_PACKAGE, anc)) {
    return static_cast<std::int32_t>(pkg->logical_index);
  }
  if (anc->type == HWLOC_OBJ_PACKAGE) {
    return static_cast<std::int32_t>(anc->logical_index);
  }
  if (anc->cpuset != nullptr && !hwloc_bitmap_iszero(anc->cpuset) &&
      hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PACKAGE) > 1) {
    // Above several packages: hwloc could not place the device closer, take none in particular.
    return 0;
  }
  return 0;
}

/// A bridge's own PCI ids and link (a PCI-to-PCI bridge; nullptr for a host bridge).
const hwloc_obj_attr_u::hwloc_pcidev_attr_s* bridge_pci(hwloc_obj_t b) {
  return enum_value(b->attr->bridge.upstream_type) == HWLOC_OBJ_BRIDGE_PCI
             ? &b->attr->bridge.upstream.pci
             : nullptr;
}

/// The top of a GPU's package: the GPU, or the bridges of its own vendor right above it. AMD's
/// Vega 20 (MI50/MI60) and MI100 carry a PCIe upstream/downstream port pair on the package
/// (1002:14a0, 1002:14a1 under each of LLNL Corona's MI50s); that is not a switch the GPU shares,
/// and the link inside it says nothing of the slot.
hwloc_obj_t package_top(hwloc_obj_t dev) {
  hwloc_obj_t top = dev;
  if (!is_gpu(dev)) {
    return top;
  }
  while (top->parent != nullptr && top->parent->type == HWLOC_OBJ_BRIDGE) {
    const hwloc_obj_attr_u::hwloc_pcidev_attr_s* pci = bridge_pci(top->parent);
    if (pci == nullptr || pci->vendor_id != dev->attr->pcidev.vendor_id) {
      break;
    }
    top = top->parent;
  }
  return top;
}

PciPlace place_of(hwloc_topology_t topo, hwloc_obj_t dev) {
  PciPlace place;
  place.at.socket = socket_of(topo, dev);
  const hwloc_obj_t top = package_top(dev);
  place.fastest_link = top == dev ? dev->attr->pcidev.linkspeed : bridge_pci(top)->linkspeed;
  int pci_bridges = 0;
  for (hwloc_obj_t p = top->parent; p != nullptr && p->type == HWLOC_OBJ_BRIDGE; p = p->parent) {
    if (enum_value(p->attr->bridge.upstream_type) == HWLOC_OBJ_BRIDGE_HOST) {
      break;
    }
    ++pci_bridges;
    place.root_port = p;
    place.fastest_link = std::max(place.fastest_link, p->attr->bridge.upstream.pci.linkspeed);
  }
  place.behind_switch = pci_bridges >= 2;
  return place;
}

/// Fills the CPU side: sockets, NUMA domains per socket, cores per socket.
void read_cpus(hwloc_topology_t topo, NodeDescription& node, const std::string& file) {
  const int packages = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PACKAGE);
  const int numa = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
  const int cores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
  const int pus = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
  if (pus <= 0) {
    throw core::LogParseError({file, 1, 1}, "the topology has no processing unit (PU object)");
  }
  node.cpu_known = true;
  node.sockets = static_cast<std::uint32_t>(std::max(packages, 1));
  const int core_count = cores > 0 ? cores : pus;
  node.cores_per_socket =
      static_cast<std::uint32_t>(std::max(1, core_count / static_cast<int>(node.sockets)));
  node.threads_per_core = static_cast<std::uint32_t>(std::max(1, pus / core_count));
  node.numa_per_socket =
      static_cast<std::uint32_t>(std::max(1, numa / static_cast<int>(node.sockets)));
  if (core_count % static_cast<int>(node.sockets) != 0 ||
      (numa > 0 && numa % static_cast<int>(node.sockets) != 0)) {
    node.notes.push_back(
        fmt::format("{} cores and {} NUMA domains do not divide evenly over {} sockets; "
                    "the model gives every socket the same share",
                    core_count, numa, node.sockets));
  }
  if (packages > 0) {
    if (const char* model = hwloc_obj_get_info_by_name(
            hwloc_get_obj_by_type(topo, HWLOC_OBJ_PACKAGE, 0), "CPUModel")) {
      node.cpu_model = model;
      // AMD pads the name to 48 characters ("AMD EPYC 7401 24-Core Processor   ...").
      node.cpu_model.erase(node.cpu_model.find_last_not_of(' ') + 1);
    }
  }
}

/// GPU-to-GPU and GPU-to-NVSwitch bandwidths from hwloc's NVLinkBandwidth matrix (MB/s).
void read_nvlink_distances(hwloc_topology_t topo, NodeDescription& node,
                           const std::map<hwloc_obj_t, std::uint32_t>& gpu_index, double link_mbps,
                           const std::string& file) {
  unsigned nr = 1;
  hwloc_distances_s* dist = nullptr;
  if (hwloc_distances_get_by_name(topo, "NVLinkBandwidth", &nr, &dist, 0) != 0 || nr == 0) {
    return;
  }
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint64_t> pairs;
  std::vector<std::uint64_t> to_switch(node.gpus.size(), 0);
  const auto gpu_of = [&](hwloc_obj_t o) -> std::int64_t {
    // The matrix names GPUs by their OS device (nvml0) or their PCI device.
    hwloc_obj_t pci = o->type == HWLOC_OBJ_OS_DEVICE ? o->parent : o;
    auto it = gpu_index.find(pci);
    return it == gpu_index.end() ? -1 : static_cast<std::int64_t>(it->second);
  };
  for (unsigned i = 0; i < dist->nbobjs; ++i) {
    const std::int64_t gi = gpu_of(dist->objs[i]);
    if (gi < 0) {
      continue;
    }
    for (unsigned j = 0; j < dist->nbobjs; ++j) {
      const std::uint64_t mbps = dist->values[i * dist->nbobjs + j];
      if (i == j || mbps == 0) {
        continue;
      }
      const std::int64_t gj = gpu_of(dist->objs[j]);
      if (gj >= 0 && gi < gj) {
        pairs[{static_cast<std::uint32_t>(gi), static_cast<std::uint32_t>(gj)}] = mbps;
      } else if (gj < 0 && dist->objs[j]->type == HWLOC_OBJ_PCI_DEVICE &&
                 is_nvswitch(dist->objs[j])) {
        to_switch[static_cast<std::size_t>(gi)] += mbps;
      }
    }
  }
  hwloc_distances_release(topo, dist);
  node.nvlink_known = true;
  // NVLink 5 gives a GPU 18 links, the most today; a bandwidth of more than 64 links' worth is
  // not a machine (found by fuzzing: 7.4e14 links overflowed the count).
  constexpr double kMostLinks = 64;
  const auto links = [&](std::uint64_t mbps) {
    const double n = std::round(static_cast<double>(mbps) / link_mbps);
    if (!(n <= kMostLinks)) {
      throw core::LogParseError(
          {file, 1, 1}, fmt::format("the NVLinkBandwidth distances give {} MB/s, {} NVLinks of {} "
                                    "MB/s: more than a GPU has ({} at most)",
                                    mbps, n, link_mbps, kMostLinks));
    }
    return static_cast<std::uint32_t>(std::max(1.0, n));
  };
  for (const auto& [ab, mbps] : pairs) {
    node.nvlinks.push_back({ab.first, ab.second, links(mbps)});
  }
  std::uint64_t switch_mbps = 0;
  for (std::uint64_t v : to_switch) {
    switch_mbps = std::max(switch_mbps, v);
  }
  if (switch_mbps > 0) {
    node.nvswitch_links_per_gpu = links(switch_mbps);
  }
  node.sources.push_back(fmt::format(
      "NVLink from hwloc's NVLinkBandwidth matrix ({} GPU pairs, {} MB/s to NVSwitches per GPU)",
      pairs.size(), switch_mbps));
}

NodeDescription describe(hwloc_topology_t topo, const std::string& file) {
  NodeDescription node;
  read_cpus(topo, node, file);

  std::vector<std::pair<hwloc_obj_t, PciPlace>> gpus;
  std::vector<std::pair<hwloc_obj_t, PciPlace>> nics;
  bool any_osdev = hwloc_get_next_osdev(topo, nullptr) != nullptr;
  float fastest = 0.0F;
  for (hwloc_obj_t o = hwloc_get_next_pcidev(topo, nullptr); o != nullptr;
       o = hwloc_get_next_pcidev(topo, o)) {
    if (is_nvswitch(o)) {
      ++node.nvswitch_chips;
      continue;
    }
    const bool rdma = any_osdev ? osdev_child(o, HWLOC_OBJ_OSDEV_OPENFABRICS) != nullptr
                                : o->attr->pcidev.class_id == 0x0207;
    if (is_gpu(o) || rdma) {
      PciPlace place = place_of(topo, o);
      fastest = std::max(fastest, place.fastest_link);
      (rdma ? nics : gpus).emplace_back(o, place);
    }
  }
  // PCIe switches: one per root port with a GPU or NIC behind a switch, numbered in bus order.
  std::map<hwloc_obj_t, std::int32_t> switch_of_port;
  auto number_switches = [&](auto& devices) {
    for (auto& [obj, place] : devices) {
      if (!place.behind_switch) {
        continue;
      }
      auto [it, fresh] =
          switch_of_port.emplace(place.root_port, static_cast<std::int32_t>(switch_of_port.size()));
      if (fresh) {
        node.switch_sockets.push_back(place.at.socket);
      }
      place.at.pcie_switch = it->second;
    }
  };
  const auto by_bus = [](const auto& a, const auto& b) {
    return bus_id(a.first) < bus_id(b.first);
  };
  std::sort(gpus.begin(), gpus.end(), by_bus);
  std::sort(nics.begin(), nics.end(), by_bus);
  number_switches(gpus);
  number_switches(nics);

  std::map<hwloc_obj_t, std::uint32_t> gpu_index;
  for (const auto& [obj, place] : gpus) {
    gpu_index.emplace(obj, static_cast<std::uint32_t>(node.gpus.size()));
    node.gpus.push_back({gpu_name(obj), bus_id(obj), obj->attr->pcidev.device_id, place.at});
  }
  for (const auto& [obj, place] : nics) {
    Nic nic;
    const hwloc_obj_t ofed = osdev_child(obj, HWLOC_OBJ_OSDEV_OPENFABRICS);
    // lstopo names every OS device; hwloc imports one without a name with a null name (found by
    // fuzzing). Such a NIC is known by its bus id, as a NIC without an OpenFabrics device is.
    nic.name = ofed != nullptr && ofed->name != nullptr ? ofed->name : bus_id(obj);
    nic.pci_bus = bus_id(obj);
    nic.at = place.at;
    nic.infiniband = obj->attr->pcidev.class_id == 0x0207;
    node.nics.push_back(nic);
  }
  std::sort(node.nics.begin(), node.nics.end(),
            [](const Nic& a, const Nic& b) { return natural_less(a.name, b.name); });
  if (fastest > 0.0F) {
    node.pcie_link = core::Bandwidth{static_cast<double>(fastest) * 1e9};
  }
  const double link_mbps = nvlink_link_bandwidth(node).gbps() * 1000.0;
  read_nvlink_distances(topo, node, gpu_index, link_mbps, file);
  return node;
}

/// Whether `value` is a set as hwloc writes it (hwloc_bitmap_snprintf, hwloc 2.9 bitmap.c): 32-bit
/// words "0x" + 1-8 hex digits separated by commas, high word first, an all-zero word in the middle
/// left empty (",,"), and "0xf...f" first for a set that goes on forever. The first word is never
/// empty: hwloc_bitmap_sscanf counts the words from the second character on, so a leading comma
/// leaves it one word short and it asserts (hwloc 2.9.0, found by fuzzing: cpuset=",x00000001").
bool is_hwloc_bitmap(std::string_view value) {
  constexpr std::string_view infinite = "0xf...f";
  bool first = true;
  if (value.starts_with(infinite)) {
    value.remove_prefix(infinite.size());
    if (value.empty()) {
      return true;
    }
    first = false;
  }
  std::size_t begin = 0;
  while (true) {
    if (!first) {
      if (begin >= value.size() || value[begin] != ',') {
        return false;
      }
      ++begin;
    }
    const std::size_t end = std::min(value.find(',', begin), value.size());
    const std::string_view word = value.substr(begin, end - begin);
    const bool hex = word.size() > 2 && word.size() <= 10 && word.starts_with("0x") &&
                     word.find_first_not_of("0123456789abcdefABCDEF", 2) == std::string_view::npos;
    if (!hex && !(word.empty() && !first)) {
      return false;
    }
    if (end == value.size()) {
      return true;
    }
    begin = end;
    first = false;
  }
}

/// The offset of attribute `name` of the element starting at `element` in the raw text, for a
/// message at the attribute (pugixml keeps offsets of elements only); the element's if not found.
std::size_t attribute_offset(const std::string& text, std::size_t element, const char* name) {
  const std::size_t close = text.find('>', element);
  const std::string_view name_view(name);
  for (std::size_t at = text.find(name_view, element); at < close;
       at = text.find(name_view, at + 1)) {
    const std::size_t after = text.find_first_not_of(" \t\r\n", at + name_view.size());
    const bool starts = at > 0 && std::strchr(" \t\r\n", text[at - 1]) != nullptr;
    if (starts && after != std::string::npos && text[after] == '=') {
      return at;
    }
  }
  return element;
}

/// Refuses what hwloc 2.9.0's XML import (Debian 12) crashes on instead of refusing, found by
/// fuzzing. (1) A set without its complete set, at the object: hwloc dereferences the missing one
/// in hwloc_bitmap_compare_first (one misspelt complete_cpuset among valid objects); every lstopo
/// export of hwloc 1.x and 2.x writes both (all of tests/data/topology does). (2) A set attribute
/// hwloc reads with hwloc_bitmap_sscanf (topology-xml.c: an object's six sets, a cpukind's cpuset,
/// a memattr_value's initiator_cpuset) that is not in the syntax lstopo writes, at the attribute.
/// A file pugixml cannot parse is left to hwloc, whose refusal xml_error explains.
void check_sets(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  const std::string s = text.str();
  pugi::xml_document doc;
  if (!doc.load_buffer(s.data(), s.size())) {
    return;
  }
  // offset_debug is the element name's; the element starts at its '<'.
  const auto start_of = [](const pugi::xml_node& node) {
    return static_cast<std::size_t>(std::max<std::ptrdiff_t>(node.offset_debug() - 1, 0));
  };
  struct SetAttributes {
    std::string_view element;
    std::vector<const char*> names;
  };
  const std::array<SetAttributes, 3> bitmap_sets{{
      {"object",
       {"cpuset", "complete_cpuset", "allowed_cpuset", "nodeset", "complete_nodeset",
        "allowed_nodeset"}},
      {"cpukind", {"cpuset"}},
      {"memattr_value", {"initiator_cpuset"}},
  }};
  for (const SetAttributes& sets : bitmap_sets) {
    for (const pugi::xpath_node& found :
         doc.select_nodes(fmt::format("//{}", sets.element).c_str())) {
      const pugi::xml_node node = found.node();
      for (const char* set : sets.names) {
        const std::string_view value = node.attribute(set).value();
        if (!node.attribute(set) || is_hwloc_bitmap(value)) {
          continue;
        }
        const SourceEnd at = position_of(s, attribute_offset(s, start_of(node), set));
        const std::string what =
            sets.element == "object"
                ? fmt::format("object {}", node.attribute("type").as_string("?"))
                : std::string(sets.element);
        // A fuzzed value can be long: the message shows its start.
        constexpr std::size_t shown = 40;
        throw core::LogParseError(
            {path, at.line, at.column},
            fmt::format("{} has {}=\"{}{}\", which is not an hwloc set (0x-prefixed hex words "
                        "separated by commas, as lstopo writes them)",
                        what, set, value.substr(0, shown), value.size() > shown ? "..." : ""));
      }
    }
  }
  for (const pugi::xpath_node& found : doc.select_nodes("//object")) {
    const pugi::xml_node object = found.node();
    const std::string_view type = object.attribute("type").as_string();
    // Classified as hwloc's XML import does (hwloc_type_sscanf), which takes a type name by its
    // prefix: a mutated "PU_oi" is a PU too (found by fuzzing: 1.2 s and 580 MB).
    hwloc_obj_type_t parsed{};
    const bool typed =
        hwloc_type_sscanf(object.attribute("type").as_string(), &parsed, nullptr, 0) == 0;
    if (typed && (parsed == HWLOC_OBJ_PU || parsed == HWLOC_OBJ_NUMANODE)) {
      // hwloc indexes sets by a PU's or NUMA node's os_index: without one it takes
      // HWLOC_UNKNOWN_INDEX (2^32 - 1) and sizes a 512 MB set (2 s and 580 MB of memory for
      // one such PU; found by fuzzing, as a 7.5 s input). lstopo writes a decimal os_index on
      // every PU and NUMA node; Linux numbers at most 8192 CPUs (NR_CPUS), so 2^20 is ample.
      const pugi::xml_attribute index = object.attribute("os_index");
      const std::string_view digits = index.value();
      constexpr std::size_t kMaxDigits = 7; // 1048575
      const bool number = !digits.empty() && digits.size() <= kMaxDigits &&
                          digits.find_first_not_of("0123456789") == std::string_view::npos &&
                          std::stoul(std::string(digits)) < (1UL << 20);
      if (!number) {
        const SourceEnd at = position_of(
            s, index ? attribute_offset(s, start_of(object), "os_index") : start_of(object));
        throw core::LogParseError(
            {path, at.line, at.column},
            index ? fmt::format("object {} has os_index=\"{}\", not a number below 1048576 "
                                "(hwloc sizes its sets by it)",
                                type, digits.substr(0, 40))
                  : fmt::format("object {} has no os_index (lstopo writes one; hwloc would "
                                "number it 4294967295 and size its sets by that)",
                                type));
      }
    }
    for (const auto& [set, complete] :
         {std::pair{"cpuset", "complete_cpuset"}, std::pair{"nodeset", "complete_nodeset"}}) {
      if (object.attribute(set) && !object.attribute(complete)) {
        const SourceEnd at = position_of(s, start_of(object));
        throw core::LogParseError({path, at.line, at.column},
                                  fmt::format("object {} has a {} but no {} (hwloc cannot read it)",
                                              object.attribute("type").as_string("?"), set,
                                              complete));
      }
    }
  }
}

/// Where an XML that hwloc refused goes wrong, as far as can be told without parsing it: an empty
/// file, no <topology> element, or no closing </topology> (a truncated file).
core::LogParseError xml_error(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return core::LogParseError({path, 0, 0}, "cannot open the file");
  }
  std::ostringstream text;
  text << in.rdbuf();
  const std::string s = text.str();
  if (s.find_first_not_of(" \t\r\n") == std::string::npos) {
    return core::LogParseError({path, 1, 1},
                               "the file is empty; expected hwloc XML (lstopo --of xml)");
  }
  const std::size_t open = s.find("<topology");
  if (open == std::string::npos) {
    return core::LogParseError(
        {path, 1, 1}, "not hwloc XML: no <topology> element (write it with lstopo --of xml)");
  }
  if (s.find("</topology>") == std::string::npos) {
    const SourceEnd end = end_of(s);
    return core::LogParseError(
        {path, end.line, end.column},
        "the XML ends before </topology> (a truncated lstopo --of xml output?)");
  }
  const SourceEnd at = position_of(s, open);
  return core::LogParseError({path, at.line, at.column}, "hwloc cannot read this topology XML");
}

} // namespace

NodeDescription read_lstopo_xml(const std::string& path) {
  hwloc_topology_t raw = nullptr;
  if (hwloc_topology_init(&raw) != 0) {
    throw core::InternalError("hwloc_topology_init failed");
  }
  TopologyPtr topo(raw);
  // Keep every object the file has: hwloc drops I/O objects by default.
  hwloc_topology_set_all_types_filter(raw, HWLOC_TYPE_FILTER_KEEP_ALL);
  check_sets(path);
  if (hwloc_topology_set_xml(raw, path.c_str()) != 0 || hwloc_topology_load(raw) != 0) {
    throw xml_error(path);
  }
  if (hwloc_get_nbobjs_by_type(raw, HWLOC_OBJ_PU) <= 0) {
    throw xml_error(path);
  }
  NodeDescription node = describe(raw, path);
  node.sources.insert(node.sources.begin(), fmt::format("lstopo: {}", base_name(path)));
  return node;
}

NodeDescription describe_this_machine() {
  hwloc_topology_t raw = nullptr;
  if (hwloc_topology_init(&raw) != 0) {
    throw core::InternalError("hwloc_topology_init failed");
  }
  TopologyPtr topo(raw);
  hwloc_topology_set_io_types_filter(raw, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
  if (hwloc_topology_load(raw) != 0) {
    throw core::EngineError(
        fmt::format("hwloc could not discover this machine: {}", std::strerror(errno)));
  }
  NodeDescription node = describe(raw, "this machine");
  node.sources.insert(node.sources.begin(), "hwloc discovery on this machine");
  return node;
}

} // namespace collsim::describe
