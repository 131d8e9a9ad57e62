// `collsim topology show` (a summary of the topology a scenario builds, and the hops of a route)
// and `collsim topology export` (every device and link as DOT, GraphML or JSON). Definitions of the
// summary's numbers: docs/topology.md.

#include "cli_support.hpp"
#include "commands.hpp"

#include "collsim/engines/simgrid.hpp"
#include "collsim/io/scenario_loader.hpp"
#include "collsim/topologies/build.hpp"
#include "collsim/topologies/nic_kinds.hpp"
#include "collsim/topologies/summary.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

namespace collsim::cli {
namespace {

/// A full mesh is exported link by link only up to this many ranks (p*(p-1) implicit links).
constexpr std::uint32_t kMaxExportedMeshRanks = 64;

/// The rank count to build for: `ranks`, or (0) the largest rank count among the studies.
std::uint32_t ranks_for(const core::Scenario& scenario, std::uint32_t ranks) {
  if (ranks != 0) {
    return ranks;
  }
  for (const auto& st : scenario.studies) {
    for (const auto p : st.ranks) {
      ranks = std::max(ranks, p);
    }
  }
  if (ranks == 0) {
    throw core::UsageError(
        fmt::format("{}: the scenario's studies name no rank count; give --ranks", scenario.file));
  }
  return ranks;
}

/// A scenario and the topology it builds. Built in place: a Topology's Boost graph has no move
/// constructor, so moving one copies it.
struct Built {
  Built(const std::string& path, std::uint32_t requested_ranks)
      : scenario(io::load_scenario(path)), ranks(ranks_for(scenario, requested_ranks)),
        topology(topologies::build(scenario.topology, ranks)) {}
  core::Scenario scenario;
  std::uint32_t ranks = 0;
  core::Topology topology;
};

/// JSON number or null for an unbounded value.
nlohmann::json finite(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
}

std::vector<std::vector<core::Rank>> ranks_per_device(const core::Topology& t) {
  std::vector<std::vector<core::Rank>> out(t.devices().size());
  for (core::Rank r = 0; r < t.rank_count(); ++r) {
    out[t.device_of(r)].push_back(r);
  }
  return out;
}

/// "0-3,8,10-11".
std::string rank_list(const std::vector<core::Rank>& ranks) {
  std::string out;
  for (std::size_t i = 0; i < ranks.size();) {
    std::size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) {
      ++j;
    }
    out += fmt::format("{}{}", out.empty() ? "" : ",", ranks[i]);
    if (j > i) {
      out += fmt::format("-{}", ranks[j]);
    }
    i = j + 1;
  }
  return out;
}

// ---- show ---------------------------------------------------------------------------------------

std::string show_table(const Built& b, const topologies::TopologySummary& s,
                       const std::vector<std::string>& route, core::Rank from, core::Rank to) {
  const auto& sc = b.scenario;
  std::string out = fmt::format("scenario:            {} ({}), topology kind {}\n",
                                sc.name.empty() ? "-" : sc.name, sc.file, sc.topology.kind);
  out += fmt::format("ranks:               {} on {} node{}", s.ranks, s.nodes,
                     s.nodes == 1 ? "" : "s");
  if (s.total_nodes != s.nodes) {
    out += fmt::format(" ({} nodes in all)", s.total_nodes);
  }
  out += "\n";
  std::vector<std::string> devices;
  std::uint64_t device_total = 0;
  for (const auto& [kind, count] : s.devices) {
    devices.push_back(fmt::format("{} {}", count, core::to_string(kind)));
    device_total += count;
  }
  out +=
      fmt::format("devices:             {} ({} in all)\n", fmt::join(devices, ", "), device_total);
  if (s.full_mesh) {
    out += fmt::format("links:               full mesh, {} directed links of {}, {}\n",
                       s.links.empty() ? 0 : s.links.begin()->second.directed,
                       topologies::format_gbps(s.mesh_bandwidth),
                       topologies::format_us(s.mesh_latency));
  } else {
    out += "links:               kind            directed  duplex pairs  bandwidth (sum over "
           "directed links)\n";
    for (const auto& [kind, l] : s.links) {
      out += fmt::format("                     {:<15} {:>8}  {:>12}  {}\n", core::to_string(kind),
                         l.directed, l.duplex_pairs, topologies::format_gbps(l.total));
    }
  }
  if (s.injection_min == s.injection_max) {
    out +=
        fmt::format("injection bandwidth: {} per node\n", topologies::format_gbps(s.injection_min));
  } else {
    out += fmt::format("injection bandwidth: {} to {} per node\n",
                       topologies::format_gbps(s.injection_min),
                       topologies::format_gbps(s.injection_max));
  }
  const core::NodeSpec& node = sc.topology.system.node;
  if (sc.topology.kind == "system" && !node.nic_kind.empty()) {
    // The efficiency is for the library models; the links above carry the line rate.
    const topologies::NicKind* kind = topologies::find_nic_kind(node.nic_kind);
    out += fmt::format("nic kind:            {} ({}): {} x {} line rate, {}; transport "
                       "efficiency {:.2f} (not applied to links)\n",
                       node.nic_kind, kind == nullptr ? "?" : kind->summary, node.nics,
                       topologies::format_gbps(node.nic_bandwidth),
                       topologies::format_us(node.nic_latency), node.nic_efficiency);
  }
  if (s.bisection) {
    out += fmt::format("bisection bandwidth: {} per direction (first {} of {} nodes against the "
                       "rest)\n",
                       topologies::format_gbps(*s.bisection), s.nodes / 2, s.nodes);
  } else {
    out += "bisection bandwidth: - (the ranks are on one node)\n";
  }
  out += fmt::format("diameter:            {} link{}, {} ({}{})\n", s.diameter.links,
                     s.diameter.links == 1 ? "" : "s", topologies::format_us(s.diameter.latency),
                     s.diameter.sampled ? "sampled: " : "", s.diameter.method);
  out += fmt::format("routing:             {}\n", s.routing);
  if (!route.empty()) {
    out += fmt::format("route from rank {} to rank {}:\n", from, to);
    for (const auto& line : route) {
      out += fmt::format("  {}\n", line);
    }
  }
  return out;
}

nlohmann::json route_json(const core::Topology& t, core::Rank a, core::Rank b,
                          const std::vector<std::string>& text) {
  nlohmann::json hops = nlohmann::json::array();
  const core::RouteCost cost = t.route_cost(a, b);
  if (t.is_full_mesh()) {
    if (a != b) {
      hops.push_back({{"from", topologies::device_name(t, t.device_of(a))},
                      {"to", topologies::device_name(t, t.device_of(b))},
                      {"kind", "implicit"},
                      {"bandwidth_Bps", cost.bottleneck.bytes_per_second},
                      {"latency_s", cost.latency.value}});
    }
  } else {
    for (const core::LinkId id : t.route(a, b)) {
      const core::Link& l = t.links()[id];
      hops.push_back({{"link", id},
                      {"from", topologies::device_name(t, l.from)},
                      {"to", topologies::device_name(t, l.to)},
                      {"kind", std::string(core::to_string(l.kind))},
                      {"bandwidth_Bps", l.bandwidth.bytes_per_second},
                      {"latency_s", l.latency.value}});
    }
  }
  return {{"from", a},
          {"to", b},
          {"hops", hops},
          {"links", cost.hops},
          {"latency_s", cost.latency.value},
          {"bottleneck_Bps", finite(cost.bottleneck.bytes_per_second)},
          {"text", text}};
}

std::string show_json(const Built& b, const topologies::TopologySummary& s,
                      const std::vector<std::string>& route, core::Rank from, core::Rank to) {
  nlohmann::json devices = nlohmann::json::object();
  for (const auto& [kind, count] : s.devices) {
    devices[std::string(core::to_string(kind))] = count;
  }
  nlohmann::json links = nlohmann::json::object();
  for (const auto& [kind, l] : s.links) {
    links[std::string(core::to_string(kind))] = {{"directed", l.directed},
                                                 {"duplex_pairs", l.duplex_pairs},
                                                 {"total_bandwidth_Bps", l.total.bytes_per_second}};
  }
  nlohmann::json per_node = nlohmann::json::array();
  for (const auto& n : s.injection) {
    per_node.push_back({{"node", n.node}, {"bandwidth_Bps", n.bandwidth.bytes_per_second}});
  }
  nlohmann::json j{{"scenario", b.scenario.name},
                   {"file", b.scenario.file},
                   {"kind", b.scenario.topology.kind},
                   {"ranks", s.ranks},
                   {"nodes", s.nodes},
                   {"total_nodes", s.total_nodes},
                   {"full_mesh", s.full_mesh},
                   {"devices", devices},
                   {"links", links},
                   {"injection_bandwidth_Bps",
                    {{"min", s.injection_min.bytes_per_second},
                     {"max", s.injection_max.bytes_per_second},
                     {"per_node", per_node}}},
                   {"bisection_bandwidth_Bps", s.bisection
                                                   ? nlohmann::json(s.bisection->bytes_per_second)
                                                   : nlohmann::json(nullptr)},
                   {"diameter",
                    {{"links", s.diameter.links},
                     {"latency_s", s.diameter.latency.value},
                     {"pairs", s.diameter.pairs},
                     {"sampled", s.diameter.sampled},
                     {"method", s.diameter.method}}},
                   {"routing", s.routing}};
  if (s.full_mesh) {
    j["link_bandwidth_Bps"] = s.mesh_bandwidth.bytes_per_second;
    j["link_latency_s"] = s.mesh_latency.value;
  }
  if (!route.empty()) {
    j["route"] = route_json(b.topology, from, to, route);
  }
  return j.dump(2) + "\n";
}

// ---- export -------------------------------------------------------------------------------------

/// The full mesh with its implicit links written out (devices "rank<i>", links of kind generic).
core::Topology explicit_mesh(const core::Topology& mesh) {
  const std::uint32_t p = mesh.rank_count();
  if (p > kMaxExportedMeshRanks) {
    throw core::UsageError(fmt::format(
        "a uniform topology joins every pair of ranks by an implicit link ({} ranks: {} links); "
        "export writes them out only up to {} ranks, so give --ranks {} or fewer",
        p, static_cast<std::uint64_t>(p) * (p - 1), kMaxExportedMeshRanks, kMaxExportedMeshRanks));
  }
  core::Topology t;
  std::vector<core::DeviceId> map;
  for (core::Rank r = 0; r < p; ++r) {
    core::Device d = mesh.devices()[mesh.device_of(r)];
    d.name = fmt::format("rank{}", r);
    map.push_back(t.add_device(std::move(d)));
  }
  for (core::Rank a = 0; a < p; ++a) {
    for (core::Rank b = 0; b < p; ++b) {
      if (a != b) {
        const core::RouteCost c = mesh.route_cost(a, b);
        t.add_link(core::Link{map[a], map[b], c.bottleneck, c.latency, core::LinkKind::generic});
      }
    }
  }
  t.map_ranks(std::move(map));
  return t;
}

/// A DOT double-quoted string's contents.
std::string dot_escape(std::string_view s) {
  std::string out;
  for (const char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
    }
    out += c;
  }
  return out;
}

std::string xml_escape(std::string_view s) {
  std::string out;
  for (const char c : s) {
    switch (c) {
    case '&': out += "&amp;"; break;
    case '<': out += "&lt;"; break;
    case '>': out += "&gt;"; break;
    case '"': out += "&quot;"; break;
    case '\'': out += "&apos;"; break;
    default: out += c;
    }
  }
  return out;
}

std::string export_dot(const core::Topology& t, const std::string& title) {
  const auto& devices = t.devices();
  const auto& links = t.links();
  const auto ranks = ranks_per_device(t);
  std::string out = fmt::format("// collsim topology export: {}, {} ranks, {} devices, {} directed "
                                "links; a dir=both edge is a duplex pair of equal links\n",
                                title, t.rank_count(), devices.size(), links.size());
  out += "digraph collsim {\n  node [shape=box, fontsize=10];\n  edge [fontsize=8];\n";
  const auto device_line = [&](core::DeviceId d, std::string_view indent) {
    std::string label = dot_escape(topologies::device_name(t, d)) + "\\n" +
                        std::string(core::to_string(devices[d].kind));
    if (!ranks[d].empty()) {
      label += fmt::format("\\nrank{} {}", ranks[d].size() == 1 ? "" : "s", rank_list(ranks[d]));
    }
    return fmt::format("{}d{} [label=\"{}\"];\n", indent, d, label);
  };
  std::map<std::uint32_t, std::vector<core::DeviceId>> by_node;
  std::vector<core::DeviceId> network;
  for (core::DeviceId d = 0; d < devices.size(); ++d) {
    if (devices[d].node == core::kNetworkNode) {
      network.push_back(d);
    } else {
      by_node[devices[d].node].push_back(d);
    }
  }
  for (const auto& [node, members] : by_node) {
    out += fmt::format("  subgraph cluster_node{} {{\n    label=\"node {}\";\n", node, node);
    for (const auto d : members) {
      out += device_line(d, "    ");
    }
    out += "  }\n";
  }
  for (const auto d : network) {
    out += device_line(d, "  ");
  }
  const auto partner = topologies::duplex_partners(t);
  for (core::LinkId id = 0; id < links.size(); ++id) {
    if (partner[id] != topologies::kNoLink && partner[id] < id) {
      continue; // drawn with its partner
    }
    const core::Link& l = links[id];
    out += fmt::format("  d{} -> d{} [{}label=\"{}\\n{}\"];\n", l.from, l.to,
                       partner[id] != topologies::kNoLink ? "dir=both, " : "",
                       core::to_string(l.kind), topologies::format_gbps(l.bandwidth));
  }
  out += "}\n";
  return out;
}

std::string export_graphml(const core::Topology& t) {
  const auto& devices = t.devices();
  const auto ranks = ranks_per_device(t);
  std::string out =
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<graphml xmlns=\"http://graphml.graphdrawing.org/xmlns\"\n"
      "    xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\"\n"
      "    xsi:schemaLocation=\"http://graphml.graphdrawing.org/xmlns "
      "http://graphml.graphdrawing.org/xmlns/1.0/graphml.xsd\">\n"
      "  <key id=\"name\" for=\"node\" attr.name=\"name\" attr.type=\"string\"/>\n"
      "  <key id=\"kind\" for=\"node\" attr.name=\"kind\" attr.type=\"string\"/>\n"
      "  <key id=\"node\" for=\"node\" attr.name=\"node\" attr.type=\"long\">\n"
      "    <desc>the node (server) of the device; -1 for devices of the network</desc>\n"
      "  </key>\n"
      "  <key id=\"ranks\" for=\"node\" attr.name=\"ranks\" attr.type=\"string\"/>\n"
      "  <key id=\"forwarding_latency_s\" for=\"node\" attr.name=\"forwarding_latency_s\" "
      "attr.type=\"double\"/>\n"
      "  <key id=\"link_kind\" for=\"edge\" attr.name=\"kind\" attr.type=\"string\"/>\n"
      "  <key id=\"bandwidth_Bps\" for=\"edge\" attr.name=\"bandwidth_Bps\" "
      "attr.type=\"double\"/>\n"
      "  <key id=\"latency_s\" for=\"edge\" attr.name=\"latency_s\" attr.type=\"double\"/>\n"
      "  <graph id=\"collsim\" edgedefault=\"directed\">\n";
  for (core::DeviceId d = 0; d < devices.size(); ++d) {
    const core::Device& dev = devices[d];
    const long long node = dev.node == core::kNetworkNode ? -1 : static_cast<long long>(dev.node);
    out += fmt::format("    <node id=\"d{}\"><data key=\"name\">{}</data><data key=\"kind\">{}"
                       "</data><data key=\"node\">{}</data><data key=\"ranks\">{}</data>"
                       "<data key=\"forwarding_latency_s\">{}</data></node>\n",
                       d, xml_escape(topologies::device_name(t, d)), core::to_string(dev.kind),
                       node, rank_list(ranks[d]), dev.latency.value);
  }
  for (core::LinkId id = 0; id < t.links().size(); ++id) {
    const core::Link& l = t.links()[id];
    out += fmt::format("    <edge id=\"l{}\" source=\"d{}\" target=\"d{}\"><data key=\"link_kind\">"
                       "{}</data><data key=\"bandwidth_Bps\">{}</data><data key=\"latency_s\">{}"
                       "</data></edge>\n",
                       id, l.from, l.to, core::to_string(l.kind), l.bandwidth.bytes_per_second,
                       l.latency.value);
  }
  out += "  </graph>\n</graphml>\n";
  return out;
}

std::string export_json(const core::Topology& t, const Built& b) {
  const auto ranks = ranks_per_device(t);
  nlohmann::json devices = nlohmann::json::array();
  for (core::DeviceId d = 0; d < t.devices().size(); ++d) {
    const core::Device& dev = t.devices()[d];
    devices.push_back({{"id", d},
                       {"name", topologies::device_name(t, d)},
                       {"kind", std::string(core::to_string(dev.kind))},
                       {"node", dev.node == core::kNetworkNode ? nlohmann::json(nullptr)
                                                               : nlohmann::json(dev.node)},
                       {"ranks", ranks[d]},
                       {"forwarding_latency_s", dev.latency.value}});
  }
  nlohmann::json links = nlohmann::json::array();
  for (core::LinkId id = 0; id < t.links().size(); ++id) {
    const core::Link& l = t.links()[id];
    links.push_back({{"id", id},
                     {"from", l.from},
                     {"to", l.to},
                     {"kind", std::string(core::to_string(l.kind))},
                     {"bandwidth_Bps", l.bandwidth.bytes_per_second},
                     {"latency_s", l.latency.value}});
  }
  return nlohmann::json{{"scenario", b.scenario.name},
                        {"kind", b.scenario.topology.kind},
                        {"ranks", t.rank_count()},
                        {"devices", devices},
                        {"links", links}}
             .dump(2) +
         "\n";
}

} // namespace

void add_topology(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "topology", "Inspect the topology a scenario builds: a summary, a route, or every device "
                  "and link as DOT, GraphML or JSON");
  cmd->require_subcommand(1);

  struct ShowArgs {
    std::string scenario;
    std::uint32_t ranks = 0;
    std::vector<core::Rank> route;
    std::string format = "table";
  };
  auto s = std::make_shared<ShowArgs>();
  auto* show = cmd->add_subcommand(
      "show", "Summarise the topology: devices, links, injection and bisection bandwidth, "
              "diameter, routing (docs/topology.md)");
  show->add_option("scenario", s->scenario, "Scenario YAML file")->required();
  show->add_option("--ranks", s->ranks,
                   "Build for this many ranks (default: the largest rank count of the studies)")
      ->check(CLI::Range(1U, io::kMaxScenarioRanks));
  show->add_option("--route", s->route, "Also print the hops of the route from rank A to rank B")
      ->expected(2)
      ->type_name("A B");
  show->add_option("--format", s->format, "table or json")->capture_default_str();
  show->callback([s] {
    if (s->format != "table" && s->format != "json") {
      throw core::UnknownNameError("format", s->format, {"table", "json"});
    }
    const Built b(s->scenario, s->ranks);
    std::vector<std::string> route;
    core::Rank from = 0;
    core::Rank to = 0;
    if (s->route.size() == 2) {
      from = s->route[0];
      to = s->route[1];
      route = topologies::describe_route(b.topology, from, to); // checks the ranks first
    }
    const auto summary = topologies::summarize(b.topology);
    emit(s->format == "json" ? show_json(b, summary, route, from, to)
                             : show_table(b, summary, route, from, to),
         "");
  });

  struct ExportArgs {
    std::string scenario;
    std::uint32_t ranks = 0;
    std::string format;
    std::string output;
  };
  add_topology_import(*cmd);

  auto e = std::make_shared<ExportArgs>();
  auto* exp = cmd->add_subcommand(
      "export", "Write every device (id, name, kind, node, ranks) and every directed link (kind, "
                "bandwidth in B/s, latency in s)");
  exp->add_option("scenario", e->scenario, "Scenario YAML file")->required();
  exp->add_option("--ranks", e->ranks,
                  "Build for this many ranks (default: the largest rank count of the studies)")
      ->check(CLI::Range(1U, io::kMaxScenarioRanks));
  exp->add_option("--format", e->format,
                  "dot, graphml, json, or simgrid (the SimGrid platform XML the simgrid engine "
                  "builds, for smpirun -platform)")
      ->required();
  exp->add_option("-o,--output", e->output, "Write to this file instead of standard output");
  exp->callback([e] {
    if (e->format != "dot" && e->format != "graphml" && e->format != "json" &&
        e->format != "simgrid") {
      throw core::UnknownNameError("format", e->format, {"dot", "graphml", "json", "simgrid"});
    }
    const Built b(e->scenario, e->ranks);
    if (e->format == "simgrid") {
      std::ostringstream xml;
      engines::write_simgrid_platform(xml, b.topology, b.topology.rank_count());
      emit(xml.str(), e->output);
      return;
    }
    const auto write = [&](const core::Topology& t) {
      if (e->format == "dot") {
        std::string title = fmt::format("scenario '{}' ({})", b.scenario.name, b.scenario.file);
        std::replace(title.begin(), title.end(), '\n', ' '); // it goes into a // comment
        return export_dot(t, title);
      }
      return e->format == "graphml" ? export_graphml(t) : export_json(t, b);
    };
    emit(b.topology.is_full_mesh() ? write(explicit_mesh(b.topology)) : write(b.topology),
         e->output);
  });
}

} // namespace collsim::cli
