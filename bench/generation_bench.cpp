// Generation speed of every registered algorithm at 1024 ranks, and the schedule's size in bytes
// per operation (issue 3 benchmarks). Run: build/release/bench/collsim_generation_bench [ranks]
// Prints a Markdown table (docs/benchmarks.md keeps the measured one). Requests carry a cluster of
// 8 ranks per node whose node and network switches reduce, so hierarchical, NCCL and in-network
// generators build their real multi-node schedules; the others ignore the topology.

#include "collsim/algorithms/registry.hpp"
#include "collsim/topologies/build.hpp"

#include <charconv>
#include <chrono>
#include <cstring>
#include <fmt/format.h>

using namespace collsim;

int main(int argc, char** argv) {
  std::uint32_t ranks = 1024;
  if (argc > 1) {
    auto [ptr, ec] = std::from_chars(argv[1], argv[1] + std::strlen(argv[1]), ranks);
    if (ec != std::errc{} || ranks == 0) {
      fmt::print(stderr, "usage: {} [ranks]\n", argv[0]);
      return 2;
    }
  }
  const auto registry = algorithms::make_default_registry();
  core::ClusterSpec cluster;
  cluster.devices_per_node = 8;
  cluster.nics_per_node = 8;
  cluster.node_switch_reduces = true;
  cluster.network_switch_reduces = true;
  const core::Topology topology = topologies::build_cluster(cluster, core::EndpointSpec{}, ranks);
  fmt::print(
      "| collective | algorithm | bytes | operations | generate (ms) | Mops/s | bytes/op |\n");
  fmt::print("|---|---|---|---|---|---|---|\n");
  for (const auto* algo : registry.list()) {
    algorithms::Request req;
    req.collective = algo->collective;
    req.ranks = ranks;
    req.topology = &topology;
    // 1 KiB per rank: a multiple of the rank count (alltoall needs one), 1 MiB in all at 1024.
    req.bytes = core::Bytes{
        algo->collective == core::CollectiveKind::barrier ? 0 : std::uint64_t{ranks} * 1024};
    const std::string why = registry.refusal(*algo, req);
    if (!why.empty()) {
      fmt::print("| {} | {} | - | - | - | - | refused: {} |\n", core::to_string(algo->collective),
                 algo->name, why);
      continue;
    }
    const auto t0 = std::chrono::steady_clock::now();
    const core::Schedule s = registry.generate(*algo, req);
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double ops = static_cast<double>(s.op_count());
    fmt::print("| {} | {} | {} | {} | {:.1f} | {:.1f} | {:.1f} |\n",
               core::to_string(algo->collective), algo->name, req.bytes.value, s.op_count(),
               secs * 1e3, secs > 0 ? ops / secs / 1e6 : 0.0,
               ops > 0 ? static_cast<double>(s.memory_bytes()) / ops : 0.0);
  }
  return 0;
}
