// The SimGrid flow-level engine on large runs (issue: flow-level engine benchmarks).
//   collsim_simgrid_bench                  all cases
//   collsim_simgrid_bench ring1024         ring allreduce of 1 GiB, 1024 ranks, on a fat tree
//   collsim_simgrid_bench allreduce64      every allreduce algorithm at 64 ranks, 1 MiB, same tree
// The fat tree: 1024 single-GPU nodes, 25 GB/s NICs, two levels of radix-64 switches, 1:1.
// Prints wall time (generation and engine separately), SimGrid activities (messages) per second and
// the peak resident memory of the parent and of the engine's child processes (getrusage).

#include "collsim/algorithms/registry.hpp"
#include "collsim/engines/loggp.hpp"
#include "collsim/engines/simgrid.hpp"
#include "collsim/topologies/build.hpp"

#include <chrono>
#include <fmt/format.h>
#include <string>
#include <sys/resource.h>
#include <vector>

using namespace collsim;

namespace {

double peak_rss_gb(int who) {
  rusage u{};
  getrusage(who, &u);
  return static_cast<double>(u.ru_maxrss) * 1024.0 / 1e9; // KiB on Linux
}

core::TopologySpec fat_tree() {
  core::TopologySpec t;
  t.kind = "system";
  t.system.node.gpus = 1;
  t.system.node.nics = 1;
  t.system.node.nic_bandwidth = core::Bandwidth{25e9};
  t.system.node.reduce_bandwidth = core::Bandwidth{100e9};
  t.system.network.kind = "fat_tree";
  t.system.network.levels = 2;
  t.system.network.radix = 64;
  return t;
}

void run(const algorithms::Registry& registry, const core::Topology& topo, const std::string& algo,
         std::uint32_t ranks, std::uint64_t bytes) {
  using clock = std::chrono::steady_clock;
  algorithms::Request req;
  req.ranks = ranks;
  req.bytes = core::Bytes{bytes};
  req.topology = &topo;
  const auto& info = registry.find(core::CollectiveKind::allreduce, algo);
  if (const std::string why = registry.refusal(info, req); !why.empty()) {
    fmt::print("{:<28} skipped: {}\n", algo, why);
    return;
  }
  const auto t0 = clock::now();
  const core::Schedule s = registry.generate(info, req);
  const auto t1 = clock::now();
  const auto sg = engines::SimgridEngine().run(s, topo, {});
  const auto t2 = clock::now();
  const auto lg = engines::LogGPEngine().run(s, topo, {});
  const auto t3 = clock::now();
  const double sim = std::chrono::duration<double>(t2 - t1).count();
  fmt::print(
      "{:<28} ranks {:>5}  {:>10} B  ops {:>9}  msgs {:>8}  gen {:7.3f} s  simgrid {:8.3f} s "
      "({:8.0f} msg/s)  loggp {:7.3f} s  simulated {:10.1f} us (loggp {:10.1f} us)\n",
      algo, ranks, bytes, s.op_count(), sg.messages, std::chrono::duration<double>(t1 - t0).count(),
      sim, static_cast<double>(sg.messages) / sim, std::chrono::duration<double>(t3 - t2).count(),
      sg.time.value * 1e6, lg.time.value * 1e6);
}

} // namespace

int main(int argc, char** argv) {
  std::vector<std::string> cases(argv + 1, argv + argc);
  if (cases.empty()) {
    cases = {"allreduce64", "ring1024"};
  }
  const auto registry = algorithms::make_default_registry();
  for (const std::string& c : cases) {
    if (c == "ring1024") {
      const auto topo = topologies::build(fat_tree(), 1024);
      run(registry, topo, "ring", 1024, std::uint64_t{1} << 30);
    } else if (c == "allreduce64") {
      const auto topo = topologies::build(fat_tree(), 64);
      for (const auto* a : registry.list(core::CollectiveKind::allreduce)) {
        run(registry, topo, a->name, 64, std::uint64_t{1} << 20);
      }
    } else {
      fmt::print(stderr, "unknown case '{}': ring1024, allreduce64\n", c);
      return 2;
    }
  }
  fmt::print("peak resident memory: parent {:.3f} GB, largest engine child {:.3f} GB\n",
             peak_rss_gb(RUSAGE_SELF), peak_rss_gb(RUSAGE_CHILDREN));
  return 0;
}
