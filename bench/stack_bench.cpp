// What a library stack's lowering costs beside the loggp engine (issue 18: "the stack layer costs
// at most 10 % of loggp time per operation"; docs/benchmarks.md, "Library stacks").
//   collsim_stack_bench            every case
//   collsim_stack_bench staged     openmpi-4.1 staging a ring allreduce, 256 GPUs, 64 MiB
//   collsim_stack_bench nccl       the NCCL stack lowering nccl_ring, 256 GPUs, 1 GiB
//   REPS=3 collsim_stack_bench     each case three times in one process: the first run is a
//                                  process's first point (its arrays are fresh memory, faulted in
//                                  and zeroed by the kernel), the later ones a sweep's later points
// Prints, per case, the generation, the lowering and the engine's run on the lowered schedule,
// each per operation of the lowered schedule, and the lowering's share of the engine's time.

#include "collsim/algorithms/registry.hpp"
#include "collsim/engines/loggp.hpp"
#include "collsim/stacks/stack.hpp"
#include "collsim/topologies/build.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fmt/format.h>
#include <string>
#include <vector>

using namespace collsim;

namespace {

/// JUWELS-Booster-like nodes: 4 GPUs on NVLink, 2 sockets, 4 NICs, one switch.
core::TopologySpec gpu_cluster() {
  core::TopologySpec spec;
  spec.kind = "system";
  spec.system.node.gpus = 4;
  spec.system.node.reduce_bandwidth = core::Bandwidth{500e9};
  spec.system.node.nvlink.kind = "all_to_all";
  spec.system.node.nvlink.links_per_pair = 4;
  spec.system.node.pcie.switches = 2;
  spec.system.node.cpu.sockets = 2;
  spec.system.node.nics = 4;
  return spec;
}

void run_case(const std::string& label, int rep, const std::string& stack,
              const std::string& algorithm, std::uint32_t ranks, core::Bytes bytes) {
  using clock = std::chrono::steady_clock;
  const auto registry = algorithms::make_default_registry();
  const auto stacks = stacks::default_stacks();
  const core::TopologySpec spec = gpu_cluster();
  const auto topo = topologies::build(spec, ranks);
  const auto& algo = registry.find(core::CollectiveKind::allreduce, algorithm);
  algorithms::Request req;
  req.ranks = ranks;
  req.bytes = bytes;
  req.topology = &topo;
  if (algorithm == "nccl_ring") {
    req.params = algorithms::resolve_params(algo, {{"channels", "8"}, {"protocol", "simple"}});
  }
  const auto t0 = clock::now();
  core::Schedule s = registry.generate(algo, req);
  const std::size_t generated = s.op_count();
  const auto t1 = clock::now();
  const core::Schedule lowered =
      stacks::lower(stacks, std::move(s), {topo, {}, algo, &spec}, stack);
  const auto t2 = clock::now();
  const auto res = engines::LogGPEngine{}.run(lowered, topo, {});
  const auto t3 = clock::now();
  const double gen = std::chrono::duration<double>(t1 - t0).count();
  const double low = std::chrono::duration<double>(t2 - t1).count();
  const double sim = std::chrono::duration<double>(t3 - t2).count();
  const auto ops = static_cast<double>(lowered.op_count());
  fmt::print("{:<8} run {} {:<12} {:>5} ranks {:>10} -> {:>10} ops  generate {:6.1f} ns/op  lower "
             "{:6.1f} ns/op  loggp {:6.1f} ns/op  lowering = {:5.1f} % of loggp  (simulated "
             "{:.3f} ms)\n",
             label, rep, stack, ranks, generated, lowered.op_count(), gen / ops * 1e9,
             low / ops * 1e9, sim / ops * 1e9, 100.0 * low / sim, res.time.value * 1e3);
}

} // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> only(argv + 1, argv + argc);
  const auto wanted = [&](const char* c) {
    return only.empty() || std::find(only.begin(), only.end(), c) != only.end();
  };
  const char* reps_env = std::getenv("REPS");
  const int reps = reps_env != nullptr ? std::max(1, std::atoi(reps_env)) : 1;
  for (int rep = 1; rep <= reps; ++rep) {
    if (wanted("staged")) {
      run_case("staged", rep, "openmpi-4.1", "ring", 256, core::Bytes{64ULL << 20});
    }
    if (wanted("nccl")) {
      run_case("nccl", rep, "nccl", "nccl_ring", 256, core::Bytes{1ULL << 30});
    }
  }
  return 0;
}
