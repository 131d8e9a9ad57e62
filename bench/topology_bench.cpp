// Building large structured networks and routing on them (issue: topologies and scenarios of
// real systems).
//   collsim_topology_bench              all cases
//   collsim_topology_bench df1k         dragonfly-1024: p=4, a=8, h=4, 32 groups, minimal
//   collsim_topology_bench df16k        p=8, a=16, h=8, 128 groups (16384 nodes), minimal
//   collsim_topology_bench df16k-val    the same with Valiant routing
//   collsim_topology_bench sys1k        the whole dragonfly-1024 preset (nodes, NICs, network)
//                                       built by topologies::build for 1024 ranks
//   collsim_topology_bench sys16k       that preset grown to 16384 nodes (p=8, a=16, h=8, 128
//                                       groups), 16384 ranks
// One NIC per node. Each case builds the network (check_network + build_network), then routes
// every message of a ring allreduce: rank r -> r+1 mod P on the NICs (the 2(P-1) steps repeat
// the same P pairs, so P routes), pricing each with Topology::route_between + cost_of, then the
// P routes r -> r + P/2 (all between groups). Prints build time, routing time (total, per route,
// mean links and latency per route), the routers and links built, and the peak resident memory
// of the process (getrusage; it only grows, so later cases include earlier ones).

#include "collsim/core/scenario.hpp"
#include "collsim/core/topology.hpp"
#include "collsim/io/scenario_loader.hpp"
#include "collsim/topologies/build.hpp"
#include "collsim/topologies/network.hpp"

#include <chrono>
#include <fmt/format.h>
#include <string>
#include <sys/resource.h>
#include <vector>

using namespace collsim;

namespace {

double peak_rss_mb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) * 1024.0 / 1e6; // ru_maxrss is in KiB on Linux
}

void run_case(const std::string& label, std::uint32_t p, std::uint32_t a, std::uint32_t h,
              std::uint32_t groups, const std::string& routing) {
  using clock = std::chrono::steady_clock;
  const std::uint32_t nodes = p * a * groups;
  core::TopologySpec spec;
  spec.kind = "system";
  core::NetworkSpec& net = spec.system.network;
  net.kind = "dragonfly";
  net.hosts_per_router = p;
  net.routers_per_group = a;
  net.global_links_per_router = h;
  net.groups = groups;
  net.routing = routing;
  net.link_latency = core::Seconds{50e-9};
  net.switch_latency = core::Seconds{300e-9};

  const auto t0 = clock::now();
  core::Topology t;
  topologies::HostPorts ports;
  ports.bandwidth = core::Bandwidth{25e9};
  ports.latency = core::Seconds{0.3e-6};
  ports.nics.reserve(nodes);
  for (std::uint32_t n = 0; n < nodes; ++n) {
    core::Device d;
    d.name = fmt::format("node{}/nic0", n);
    d.kind = core::DeviceKind::nic;
    d.node = n;
    ports.nics.push_back({t.add_device(std::move(d))});
  }
  topologies::check_network(spec, nodes);
  topologies::build_network(net, ports, t);
  const auto t1 = clock::now();

  // The ring's pairs (mostly on one router under block placement), then rank r -> r + P/2,
  // which always crosses groups: the longest routes.
  struct Pattern {
    double seconds = 0.0;
    double links = 0.0;   ///< mean route length
    double latency = 0.0; ///< mean route latency, s
  };
  const auto route_all = [&](std::uint32_t shift) {
    const auto start = clock::now();
    double latency = 0.0;
    std::uint64_t hops = 0;
    for (std::uint32_t r = 0; r < nodes; ++r) {
      const auto cost =
          t.cost_of(t.route_between(ports.nics[r][0], ports.nics[(r + shift) % nodes][0]));
      latency += cost.latency.value;
      hops += cost.hops;
    }
    Pattern out;
    out.seconds = std::chrono::duration<double>(clock::now() - start).count();
    out.links = static_cast<double>(hops) / nodes;
    out.latency = latency / nodes;
    return out;
  };
  const Pattern ring = route_all(1);
  const Pattern half = route_all(nodes / 2);
  const double build = std::chrono::duration<double>(t1 - t0).count();
  const auto show = [&](const Pattern& pat) {
    return fmt::format("{:6.2f} ms ({:4.2f} us/route, {:4.2f} links, {:4.2f} us)",
                       pat.seconds * 1e3, pat.seconds * 1e6 / nodes, pat.links, pat.latency * 1e6);
  };
  fmt::print("{:<9} {:>5} nodes {:>4} routers {:>5} links  build {:6.1f} ms  {} routes: ring {}  "
             "r+P/2 {}  peak RSS {:5.1f} MB\n",
             label, nodes, a * groups, t.links().size(), build * 1e3, nodes, show(ring), show(half),
             peak_rss_mb());
}

/// A whole `system` topology as a study builds it: every node's devices, its NIC, the network,
/// the placement; then every rank-to-rank route of a ring allreduce, as the loggp engine asks for
/// them (Topology::route_cost per pair).
void run_system(const std::string& label, bool grow) {
  using clock = std::chrono::steady_clock;
  core::TopologySpec spec = io::load_scenario("dragonfly-1024").topology;
  if (grow) {
    spec.system.nodes = 16384;
    spec.system.network.hosts_per_router = 8;
    spec.system.network.routers_per_group = 16;
    spec.system.network.global_links_per_router = 8;
    spec.system.network.groups = 128;
  }
  const std::uint32_t ranks = spec.system.nodes;
  const auto t0 = clock::now();
  const core::Topology t = topologies::build(spec, ranks);
  const auto t1 = clock::now();
  double latency = 0.0;
  for (core::Rank r = 0; r < ranks; ++r) {
    latency += t.route_cost(r, (r + 1) % ranks).latency.value;
  }
  const auto t2 = clock::now();
  const double build = std::chrono::duration<double>(t1 - t0).count();
  const double route = std::chrono::duration<double>(t2 - t1).count();
  fmt::print("{:<9} {:>5} ranks {:>6} devices {:>6} links  build {:6.1f} ms  ring routes {:6.2f} "
             "ms ({:4.2f} us/route, mean {:4.2f} us)  peak RSS {:5.1f} MB\n",
             label, ranks, t.devices().size(), t.links().size(), build * 1e3, route * 1e3,
             route * 1e6 / ranks, latency * 1e6 / ranks, peak_rss_mb());
}

} // namespace

int main(int argc, char** argv) {
  std::vector<std::string> cases(argv + 1, argv + argc);
  if (cases.empty()) {
    cases = {"df1k", "df16k", "df16k-val", "sys1k", "sys16k"};
  }
  for (const auto& c : cases) {
    if (c == "df1k") {
      run_case(c, 4, 8, 4, 32, "minimal");
    } else if (c == "df16k") {
      run_case(c, 8, 16, 8, 128, "minimal");
    } else if (c == "df16k-val") {
      run_case(c, 8, 16, 8, 128, "valiant");
    } else if (c == "sys1k" || c == "sys16k") {
      run_system(c, c == "sys16k");
    } else {
      fmt::print(stderr, "unknown case '{}' (valid: df1k, df16k, df16k-val, sys1k, sys16k)\n", c);
      return 2;
    }
  }
  return 0;
}
