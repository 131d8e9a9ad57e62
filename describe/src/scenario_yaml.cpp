// A NodeDescription as a collsim scenario (scenario-format.md, "system" and "node"). collsim's
// node is regular: every socket alike, GPUs and NICs spread evenly over the PCIe switches, one
// NVLink wiring. Where the described node differs, the scenario keeps the counts and says in a
// comment what the model does not keep.

#include "collsim/describe/node.hpp"
#include "describe_support.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <set>

namespace collsim::describe {
namespace {

std::vector<const Nic*> compute_nics(const NodeDescription& node) {
  std::vector<const Nic*> out;
  for (const Nic& n : node.nics) {
    if (n.compute) {
      out.push_back(&n);
    }
  }
  return out;
}

/// The PCIe switches that hold a GPU, renumbered 0.. in order of first use.
std::map<std::int32_t, std::int32_t> used_switches(const NodeDescription& node) {
  std::map<std::int32_t, std::int32_t> used;
  const auto add = [&](std::int32_t s) {
    if (s >= 0) {
      used.emplace(s, static_cast<std::int32_t>(used.size()));
    }
  };
  for (const Gpu& g : node.gpus) {
    add(g.at.pcie_switch);
  }
  // A NIC alone on a switch is, in the model, on its socket: the model's switches hold GPUs.
  return used;
}

struct PcieChoice {
  std::string yaml;    ///< "gen: 4" or "bandwidth: 20 GB/s"
  std::string comment; ///< where it came from
};

PcieChoice pcie_choice(const NodeDescription& node) {
  if (!node.pcie_link) {
    return {"gen: 4", "default: the inputs give no PCIe link speed"};
  }
  const double gbps = node.pcie_link->gbps();
  // Per-direction rates after line coding, x16 (scenario-format.md, "pcie").
  constexpr std::array<std::pair<int, double>, 4> kX16{
      {{3, 15.75}, {4, 31.5}, {5, 63.0}, {6, 121.0}}};
  for (const auto& [gen, x16] : kX16) {
    for (int lanes : {16, 8}) {
      const double rate = x16 * lanes / 16.0;
      if (std::abs(gbps - rate) <= 0.03 * rate) {
        return {lanes == 16 ? fmt::format("gen: {}", gen)
                            : fmt::format("gen: {}\n      lanes: {}", gen, lanes),
                fmt::format("fastest link {:.2f} GB/s: Gen{} x{}", gbps, gen, lanes)};
      }
    }
  }
  return {fmt::format("bandwidth: {:.3g} GB/s", gbps),
          "the fastest PCIe link of the GPUs and NICs"};
}

/// The nvlink section's lines (indented by 6), empty for no NVLink.
std::vector<std::string> nvlink_lines(const NodeDescription& node,
                                      std::vector<std::string>& notes) {
  const auto g = static_cast<std::uint32_t>(node.gpus.size());
  const std::optional<GpuFacts> facts =
      node.gpus.empty() ? std::nullopt : gpu_facts(node.gpus.front());
  const std::string link_bw =
      fmt::format("link_bandwidth: {:g} GB/s   # {}", nvlink_link_bandwidth(node).gbps(),
                  facts ? std::string(facts->source.substr(0, facts->source.find(';')))
                        : "not known for this GPU: NVLink 2 to 4's 25 GB/s");
  const bool have_switch = node.nvswitch_chips > 0 || node.nvswitch_links_per_gpu > 0;
  if (!node.nvlink_known && !have_switch) {
    return {};
  }
  std::set<std::uint32_t> counts;
  for (const NvlinkPair& p : node.nvlinks) {
    counts.insert(p.links);
  }
  const bool every_pair = node.nvlinks.size() == static_cast<std::size_t>(g) * (g - 1) / 2;
  const std::uint32_t max_links = facts.has_value() && facts->nvlinks > 0 ? facts->nvlinks : 18;
  if (have_switch ||
      (every_pair && counts.size() == 1 && g > 2 && *counts.begin() * (g - 1) > max_links)) {
    std::uint32_t per_gpu = node.nvswitch_links_per_gpu;
    std::string why = "hwloc's NVLinkBandwidth to the NVSwitches";
    if (per_gpu == 0 && counts.size() == 1) {
      per_gpu = *counts.begin();
      why = fmt::format("NV{} between every pair in nvidia-smi topo -m", per_gpu);
    }
    if (per_gpu == 0) {
      per_gpu = facts && facts->nvlinks > 0 ? facts->nvlinks : 12;
      why = facts && facts->nvlinks > 0 ? "every NVLink of the GPU model"
                                        : "default: the inputs give no NVLink count";
    }
    return {"kind: switch", link_bw, fmt::format("links_per_gpu: {}   # {}", per_gpu, why),
            fmt::format("# {} NVSwitch chips in the lstopo XML", node.nvswitch_chips)};
  }
  if (node.nvlinks.empty()) {
    return {};
  }
  if (every_pair && counts.size() == 1) {
    return {"kind: all_to_all", link_bw, fmt::format("links_per_pair: {}", *counts.begin())};
  }
  bool bridges = counts.size() == 1 && g % 2 == 0 && node.nvlinks.size() == g / 2;
  for (const NvlinkPair& p : node.nvlinks) {
    bridges = bridges && p.a % 2 == 0 && p.b == p.a + 1;
  }
  if (bridges) {
    return {"kind: bridges", link_bw, fmt::format("links_per_pair: {}", *counts.begin())};
  }
  std::vector<std::string> lines{"kind: explicit", link_bw, "links:"};
  for (const NvlinkPair& p : node.nvlinks) {
    lines.push_back(fmt::format("  - [{}, {}, {}]", p.a, p.b, p.links));
  }
  (void)notes;
  return lines;
}

struct NicChoice {
  std::vector<std::string> lines;
};

NicChoice nic_lines(const NodeDescription& node, std::vector<std::string>& notes) {
  const std::vector<const Nic*> nics = compute_nics(node);
  NicChoice out;
  if (nics.empty()) {
    out.lines.push_back("nics: 1   # no RDMA NIC in the inputs: one generic NIC");
    return out;
  }
  std::vector<std::string> names;
  std::map<double, int> rates;
  for (const Nic* n : nics) {
    names.push_back(n->name);
    if (n->rate_gbit) {
      ++rates[*n->rate_gbit];
    }
  }
  out.lines.push_back(fmt::format("nics: {}   # {}", nics.size(), fmt::join(names, ", ")));
  if (rates.empty()) {
    out.lines.push_back(
        "# nic_bandwidth: not in the inputs (pass --ibstat); collsim's default 25 GB/s applies");
    return out;
  }
  const auto common = std::max_element(
      rates.begin(), rates.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
  const double rate = common->first;
  if (rates.size() > 1) {
    notes.push_back(
        fmt::format("the NICs run at different rates; the model gives all {} Gb/s", rate));
  }
  const Nic* first = nics.front();
  const bool ethernet = first->link_layer == "Ethernet";
  const bool cx6_or_later =
      first->ca_type == "MT4123" || first->ca_type == "MT4129" || first->ca_type == "MT4125";
  std::string kind;
  if (ethernet) {
    kind = "roce";
  } else if (rate >= 390) {
    kind = "ib_ndr";
  } else if (rate >= 190 || (rate >= 95 && cx6_or_later)) {
    kind = "ib_hdr"; // HDR100 is a ConnectX-6 port at half rate
  } else if (rate >= 95) {
    kind = "ib_edr";
  }
  if (!kind.empty()) {
    out.lines.push_back(fmt::format(
        "nic_kind: {}   # {} link layer, {} Gb/s{}", kind, ethernet ? "Ethernet" : "InfiniBand",
        rate, first->ca_type.empty() ? "" : fmt::format(", CA type {}", first->ca_type)));
  }
  out.lines.push_back(
      fmt::format("nic_bandwidth: {:g} Gb/s   # ibstat Rate of the active ports", rate));
  return out;
}

/// Notes on where the node differs from the model's even spread (scenario-format.md, "node").
void spread_notes(const NodeDescription& node, const std::map<std::int32_t, std::int32_t>& used,
                  std::vector<std::string>& notes) {
  const auto switches = static_cast<std::int64_t>(used.size());
  if (switches == 0) {
    return;
  }
  const auto check = [&](const char* what, const std::vector<std::int32_t>& at) {
    const auto count = static_cast<std::int64_t>(at.size());
    bool even = true;
    std::vector<int> per(static_cast<std::size_t>(switches), 0);
    int outside = 0;
    for (std::int64_t i = 0; i < count; ++i) {
      const std::int32_t s = at[static_cast<std::size_t>(i)];
      if (s < 0 || !used.contains(s)) {
        ++outside;
        even = false;
        continue;
      }
      ++per[static_cast<std::size_t>(used.at(s))];
      even = even && used.at(s) == i * switches / count;
    }
    if (!even && count > 0) {
      notes.push_back(
          fmt::format("{} per PCIe switch in the node: {}{}; the model spreads them evenly", what,
                      fmt::join(per, ", "),
                      outside > 0 ? fmt::format(" ({} on the sockets' root ports)", outside) : ""));
    }
  };
  std::vector<std::int32_t> gpu_at;
  for (const Gpu& g : node.gpus) {
    gpu_at.push_back(g.at.pcie_switch);
  }
  std::vector<std::int32_t> nic_at;
  for (const Nic* n : compute_nics(node)) {
    nic_at.push_back(n->at.pcie_switch);
  }
  check("GPUs", gpu_at);
  check("NICs", nic_at);
  for (const auto& [orig, idx] : used) {
    const std::int32_t socket = node.switch_sockets[static_cast<std::size_t>(orig)];
    if (socket !=
        static_cast<std::int32_t>(idx * static_cast<std::int64_t>(node.sockets) / switches)) {
      notes.push_back(fmt::format("PCIe switch {} hangs off socket {}; the model puts switch i on "
                                  "socket i x sockets / switches",
                                  idx, socket));
      break;
    }
  }
}

std::string comment_block(const std::vector<std::string>& lines, const std::string& indent) {
  std::string out;
  for (const std::string& l : lines) {
    out += fmt::format("{}#   {}\n", indent, l);
  }
  return out;
}

} // namespace

std::string to_scenario_yaml(const NodeDescription& node, const ScenarioOptions& options) {
  std::vector<std::string> notes = node.notes;
  const auto used = used_switches(node);
  spread_notes(node, used, notes);
  const auto gpus = static_cast<std::uint32_t>(node.gpus.size());
  const std::optional<GpuFacts> facts =
      node.gpus.empty() ? std::nullopt : gpu_facts(node.gpus.front());
  const std::vector<std::string> nvlink = nvlink_lines(node, notes);
  const NicChoice nic = nic_lines(node, notes);
  const PcieChoice pcie = pcie_choice(node);

  std::string y;
  y += fmt::format("# Written by {}\n",
                   options.command.empty() ? "collsim topology import" : options.command);
  y += "# from:\n" + comment_block(node.sources, "");
  y += "# Values the inputs do not give are collsim's defaults (scenario-format.md); each one is "
       "marked.\n";
  if (!notes.empty()) {
    y += "# What collsim's regular node model does not keep:\n" + comment_block(notes, "");
  }
  y += fmt::format("name: {}\n", options.name);
  std::string description = summary_text(node).substr(0, summary_text(node).find('\n'));
  std::erase_if(description, [](char c) { return c == '"' || c == '\\'; });
  y += fmt::format("description: \"{}\"\n", description);
  y += "topology:\n  kind: system\n";
  y += fmt::format("  nodes: {}\n", options.nodes);
  y += "  node:\n";
  if (gpus > 0) {
    y += fmt::format("    gpus: {}   # {}\n", gpus,
                     node.gpus.front().name.empty() ? "model not in the inputs"
                                                    : node.gpus.front().name);
    if (facts && facts->memory_gbps > 0) {
      const std::size_t semi = facts->source.find("; ");
      y += fmt::format("    reduce_bandwidth: {:g} GB/s   # a third of the memory bandwidth: {}\n",
                       std::round(facts->memory_gbps / 3.0),
                       semi == std::string_view::npos ? facts->source
                                                      : facts->source.substr(semi + 2));
    } else {
      y += "    # reduce_bandwidth: GPU model not known; GPUs reduce for free\n";
    }
    if (!nvlink.empty()) {
      y += "    nvlink:\n";
      for (const std::string& l : nvlink) {
        y += "      " + l + "\n";
      }
    }
  }
  y += "    pcie:\n";
  y += fmt::format("      {}   # {}\n", pcie.yaml, pcie.comment);
  if (!used.empty()) {
    y += fmt::format("      switches: {}   # root ports with GPUs or NICs behind a switch\n",
                     used.size());
  }
  y += "    cpu:\n";
  y += fmt::format("      sockets: {}{}\n", node.sockets,
                   node.cpu_model.empty() ? "" : "   # " + node.cpu_model);
  y += fmt::format("      numa_per_socket: {}\n", node.numa_per_socket);
  y += fmt::format("      cores_per_socket: {}{}\n", node.cores_per_socket,
                   node.threads_per_core > 1
                       ? fmt::format("   # {} hardware threads per core", node.threads_per_core)
                       : "");
  y += "      # memory_bandwidth: not in the inputs; collsim's default 100 GB/s per socket "
       "applies\n";
  for (const std::string& l : nic.lines) {
    y += "    " + l + "\n";
  }
  if (options.nodes > 1 || options.network_kind != "switch") {
    y += fmt::format("  network:\n    kind: {}   # collsim's defaults for the rest "
                     "(scenario-format.md, \"network\")\n",
                     options.network_kind);
  }
  const std::uint32_t per_node = gpus > 0 ? gpus : node.sockets * node.cores_per_socket;
  std::string ranks = fmt::format("{}", per_node);
  if (options.nodes > 1) {
    ranks += fmt::format(", {}", per_node * options.nodes);
  }
  y += "studies:\n";
  y +=
      fmt::format("  - name: allreduce on the imported {}\n", options.nodes > 1 ? "nodes" : "node");
  y += "    collective: allreduce\n    algorithms: [auto]\n";
  y += fmt::format("    ranks: [{}]\n", ranks);
  y += fmt::format("    sizes: {}\n", gpus > 0 ? "1KiB:1GiB:x8" : "8B:64MiB:x8");
  return y;
}

std::string summary_text(const NodeDescription& node) {
  std::string s =
      fmt::format("{} socket{} x {} NUMA x {} cores", node.sockets, node.sockets == 1 ? "" : "s",
                  node.numa_per_socket, node.cores_per_socket);
  if (!node.cpu_model.empty()) {
    s += fmt::format(" ({})", node.cpu_model);
  }
  if (!node.gpus.empty()) {
    s += fmt::format(", {} x {}", node.gpus.size(),
                     node.gpus.front().name.empty() ? "GPU" : node.gpus.front().name);
  }
  const auto nics = compute_nics(node);
  if (!nics.empty()) {
    s += fmt::format(", {} NIC{}", nics.size(), nics.size() == 1 ? "" : "s");
    if (nics.front()->rate_gbit) {
      s += fmt::format(" of {:g} Gb/s", *nics.front()->rate_gbit);
    }
  }
  s += "\n";
  for (std::size_t i = 0; i < node.gpus.size(); ++i) {
    const Gpu& g = node.gpus[i];
    s += fmt::format("  gpu{:<3} {:<14} socket {} switch {}\n", i,
                     g.pci_bus.empty() ? "-" : g.pci_bus, g.at.socket,
                     g.at.pcie_switch < 0 ? std::string("-") : std::to_string(g.at.pcie_switch));
  }
  for (const Nic& n : node.nics) {
    s += fmt::format(
        "  {:<7} {:<14} socket {} switch {}{}{}\n", n.name, n.pci_bus.empty() ? "-" : n.pci_bus,
        n.at.socket, n.at.pcie_switch < 0 ? std::string("-") : std::to_string(n.at.pcie_switch),
        n.rate_gbit ? fmt::format(" {:g} Gb/s", *n.rate_gbit) : "", n.compute ? "" : " (left out)");
  }
  return s;
}

} // namespace collsim::describe
