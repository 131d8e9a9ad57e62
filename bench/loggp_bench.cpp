// Generation and loggp-engine throughput on large schedules (issue: foundation benchmarks).
//   collsim_bench                 all cases
//   collsim_bench ring4096        ring allreduce, 4096 ranks, 64 MiB  (~67 million operations)
//   collsim_bench rd1m            recursive doubling allreduce, 2^20 ranks, 8 B
//   collsim_bench ring1024        a quicker ring case (1024 ranks)
// Prints wall time of generation and simulation, operations per second of the engine, the
// schedule's memory and the process's peak resident memory (getrusage).

#include "collsim/algorithms/registry.hpp"
#include "collsim/core/verify.hpp"
#include "collsim/engines/loggp.hpp"
#include "collsim/topologies/build.hpp"

#include <chrono>
#include <fmt/format.h>
#include <string>
#include <sys/resource.h>
#include <vector>

using namespace collsim;

namespace {

double peak_rss_gb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) * 1024.0 / 1e9; // ru_maxrss is in KiB on Linux
}

void run_case(const std::string& label, const std::string& algorithm, std::uint32_t ranks,
              core::Bytes bytes) {
  using clock = std::chrono::steady_clock;
  const auto registry = algorithms::make_default_registry();
  core::TopologySpec spec; // uniform: 2 us, 10 GB/s
  spec.uniform.reduce_bandwidth = core::Bandwidth{20e9};
  const auto topo = topologies::build(spec, ranks);
  algorithms::Request req;
  req.ranks = ranks;
  req.bytes = bytes;
  const auto t0 = clock::now();
  const core::Schedule s =
      registry.generate(registry.find(core::CollectiveKind::allreduce, algorithm), req);
  const auto t1 = clock::now();
  const auto res = engines::LogGPEngine{}.run(s, topo, {});
  const auto t2 = clock::now();
  // The engine's first step, matching sends to receives, timed on its own for the breakdown.
  const std::size_t unmatched = core::match_messages(s, [](core::OpId, core::OpId) {});
  const auto t3 = clock::now();
  const double match = std::chrono::duration<double>(t3 - t2).count();
  const double gen = std::chrono::duration<double>(t1 - t0).count();
  const double sim = std::chrono::duration<double>(t2 - t1).count();
  fmt::print("{:<10} {:>9} ranks {:>12} ops  generate {:6.2f} s  simulate {:6.2f} s (of which "
             "matching {:4.2f} s)  total {:6.2f} s  engine {:5.1f} Mops/s  schedule {:5.2f} GB  "
             "peak RSS {:5.2f} GB  (simulated {:.3f} ms{})\n",
             label, ranks, s.op_count(), gen, sim, match, gen + sim,
             static_cast<double>(s.op_count()) / sim / 1e6,
             static_cast<double>(s.memory_bytes()) / 1e9, peak_rss_gb(), res.time.value * 1e3,
             unmatched == 0 ? "" : ", UNMATCHED");
}

} // namespace

int main(int argc, char** argv) {
  std::vector<std::string> cases(argv + 1, argv + argc);
  if (cases.empty()) {
    cases = {"ring1024", "ring4096", "rd1m"};
  }
  for (const auto& c : cases) {
    if (c == "ring1024") {
      run_case(c, "ring", 1024, core::Bytes{64ULL << 20});
    } else if (c == "ring4096") {
      run_case(c, "ring", 4096, core::Bytes{64ULL << 20});
    } else if (c == "rd1m") {
      run_case(c, "recursive_doubling", 1U << 20, core::Bytes{8});
    } else {
      fmt::print(stderr, "unknown case '{}' (valid: ring1024, ring4096, rd1m)\n", c);
      return 2;
    }
  }
  return 0;
}
