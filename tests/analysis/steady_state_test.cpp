// A long chunk pipeline timed from a run of fewer loops (analysis/steady_state.hpp) must give the
// full run's time and counts, and must not be used where no steady state is found.

#include "collsim/analysis/simulate.hpp"
#include "collsim/analysis/steady_state.hpp"
#include "collsim/core/errors.hpp"
#include "collsim/engines/loggp.hpp"
#include "collsim/engines/simgrid.hpp"
#include "collsim/io/scenario_loader.hpp"
#include "collsim/stacks/stack.hpp"
#include "collsim/topologies/build.hpp"

#include <catch2/catch.hpp>

#include <string>

using namespace collsim;

namespace {

struct Point {
  const char* preset;
  const char* algorithm;
  std::uint32_t ranks;
  std::uint64_t bytes;
  std::map<std::string, std::string> params;
  const char* engine;
  core::CollectiveKind collective = core::CollectiveKind::allreduce;
};

/// The point's request with NCCL's parameters filled in, as simulate() runs it.
algorithms::Request request_for(const algorithms::AlgorithmInfo& algo, const Point& pt,
                                const core::Topology& topo, const core::Scenario& scenario) {
  algorithms::Request req;
  req.collective = algo.collective;
  req.ranks = pt.ranks;
  req.bytes = core::Bytes{pt.bytes};
  req.topology = &topo;
  req.params = algorithms::resolve_params(algo, pt.params);
  return analysis::with_library_params(algo, req, analysis::EngineChoice(pt.engine, scenario));
}

struct Outcome {
  std::optional<core::RunResult> steady;
  analysis::SteadyState found;
  core::RunResult full;
};

Outcome run_both(const Point& pt, const core::RunOptions& options = {}) {
  const auto registry = algorithms::make_default_registry();
  const stacks::Registry stacks = stacks::default_stacks();
  const core::Scenario scenario = io::load_scenario(pt.preset);
  const core::Topology topo = topologies::build(scenario.topology, pt.ranks);
  const auto& algo = registry.find(pt.collective, pt.algorithm);
  const algorithms::Request req = request_for(algo, pt, topo, scenario);
  const stacks::LowerContext ctx{topo, scenario.nccl, algo, &scenario.topology};
  const auto lower = [&](const algorithms::Request& r) {
    return stacks::lower(stacks, registry.generate(algo, r), ctx, "");
  };
  const std::string engine = pt.engine;
  const auto run = [&](const core::Schedule& s, const core::RunOptions& o) {
    return engine == "loggp" ? engines::LogGPEngine().run(s, topo, o)
                             : engines::SimgridEngine(scenario.simgrid).run(s, topo, o);
  };
  Outcome out;
  out.steady = analysis::steady_state_run(algo, req, topo, lower, run, options, &out.found);
  out.full = run(lower(req), options);
  return out;
}

} // namespace

TEST_CASE("a long NCCL pipeline timed from fewer loops equals the full run",
          "[analysis][steady-state]") {
  // The ring: 4 LL chunks of 32 KiB per loop and channel; 512 and 515 loops (the last loop
  // shorter). NVLS-tree on two nodes: its levels put a chunk's parts about 100 loops apart in a
  // program, so only its 4 GiB point (2048 loops of 2 MiB) is long enough.
  const std::vector<Point> points{
      {"dgx-a100", "nccl_ring", 4, 512ULL << 17, {{"channels", "1"}, {"protocol", "ll"}}, "loggp"},
      {"dgx-a100",
       "nccl_ring",
       4,
       (515ULL << 17) - 1000,
       {{"channels", "2"}, {"protocol", "ll"}},
       "loggp"},
      {"dgx-a100",
       "nccl_ring",
       4,
       512ULL << 17,
       {{"channels", "1"}, {"protocol", "ll"}},
       "simgrid"},
      // NVLS-tree at 8 channels, each block at NCCL's per-channel bound: the run repeats every
      // loop (m chunks of every channel, the heads' rotation). At NCCL's own 16 channels, whose
      // blocks share the links near that bound, neither engine's run shows a period within 256
      // loops (2026-12-07, docs/benchmarks.md): it runs in full.
      {"dgx-h100", "nvls_tree", 16, 4ULL << 30, {{"channels", "8"}}, "loggp"},
      // ... and on simgrid, whose network proxies post what their channels hand them at one
      // instant in operation order (without that, no period: docs/engines.md).
      {"dgx-h100", "nvls_tree", 16, 4ULL << 30, {{"channels", "8"}}, "simgrid"},
      // The ring over blocks (a chunk of every block per loop) and the chain (a chunk).
      {"dgx-a100",
       "nccl_ring",
       4,
       (512ULL << 17) + 12,
       {{"channels", "1"}, {"protocol", "ll"}},
       "loggp",
       core::CollectiveKind::allgather},
      {"dgx-a100",
       "nccl_ring",
       4,
       512ULL << 17,
       {{"channels", "2"}, {"protocol", "ll"}},
       "loggp",
       core::CollectiveKind::reduce_scatter},
      {"dgx-a100",
       "nccl_ring",
       4,
       512ULL << 15,
       {{"channels", "1"}, {"protocol", "ll"}},
       "loggp",
       core::CollectiveKind::bcast},
      {"dgx-a100",
       "nccl_ring",
       4,
       (512ULL << 15) + 100,
       {{"channels", "1"}, {"protocol", "ll"}},
       "simgrid",
       core::CollectiveKind::reduce},
      // PAT (one rank per node): a 512 KiB chunk of every block per loop.
      {"fat-tree-tapered",
       "pat",
       4,
       (300ULL << 21) + 4 * 1000,
       {{"channels", "1"}},
       "loggp",
       core::CollectiveKind::allgather},
      {"fat-tree-tapered",
       "pat",
       5,
       300ULL * 5 * (1 << 19),
       {{"channels", "1"}},
       "simgrid",
       core::CollectiveKind::reduce_scatter},
  };
  for (const Point& pt : points) {
    INFO(core::to_string(pt.collective)
         << " " << pt.preset << " " << pt.algorithm << " " << pt.ranks << " ranks " << pt.bytes
         << " B on " << pt.engine);
    const Outcome o = run_both(pt);
    REQUIRE(o.steady.has_value());
    CHECK(o.found.run_loops * 2 <= o.found.loops);
    CHECK(o.found.period >= 1);
    CHECK(o.steady->time.value == Approx(o.full.time.value).epsilon(1e-11));
    CHECK(o.steady->operations == o.full.operations);
    CHECK(o.steady->messages == o.full.messages);
    CHECK(o.steady->bytes_sent == o.full.bytes_sent);
    REQUIRE(o.steady->rank_finish.size() == o.full.rank_finish.size());
    for (std::size_t r = 0; r < o.full.rank_finish.size(); ++r) {
      CHECK(o.steady->rank_finish[r].value == Approx(o.full.rank_finish[r].value).epsilon(1e-11));
    }
  }
}

TEST_CASE("the links' loads of a long pipeline from fewer loops", "[analysis][steady-state]") {
  // Bytes and messages per link are those of the full run exactly; busy time (the union of the
  // messages' time on the wire) adds one period's stretch of the steady state per period.
  core::RunOptions loads;
  loads.link_loads = true;
  for (const char* engine : {"loggp", "simgrid"}) {
    INFO(engine);
    const Outcome o = run_both(
        {"dgx-a100", "nccl_ring", 4, 512ULL << 17, {{"channels", "1"}, {"protocol", "ll"}}, engine},
        loads);
    REQUIRE(o.steady.has_value());
    CHECK(o.steady->time.value == Approx(o.full.time.value).epsilon(1e-11));
    REQUIRE(o.steady->link_loads.size() == o.full.link_loads.size());
    REQUIRE_FALSE(o.full.link_loads.empty());
    for (std::size_t i = 0; i < o.full.link_loads.size(); ++i) {
      const core::LinkLoad& a = o.steady->link_loads[i];
      const core::LinkLoad& b = o.full.link_loads[i];
      CHECK(a.link == b.link);
      CHECK(a.bytes == b.bytes);
      CHECK(a.messages == b.messages);
      CHECK(a.busy.value == Approx(b.busy.value).epsilon(1e-9));
    }
  }
}

TEST_CASE("points too short for a steady state run in full", "[analysis][steady-state]") {
  // 64 loops: the run that would find the period is more than half of them.
  const Outcome shortish = run_both(
      {"dgx-a100", "nccl_ring", 4, 64ULL << 17, {{"channels", "1"}, {"protocol", "ll"}}, "loggp"});
  CHECK_FALSE(shortish.steady.has_value());
  // An algorithm without loops (the MPI ring: one pass of n/p blocks).
  const auto registry = algorithms::make_default_registry();
  CHECK_FALSE(registry.find(core::CollectiveKind::allreduce, "ring").loop_bytes);
  // NCCL's chunk sizes follow the full message: the run of fewer loops keeps them
  // (Request::chunk_basis). NVLS-tree on 4 nodes cuts 32 KiB chunks below 8 MiB, 64 KiB above.
  const core::Scenario scenario = io::load_scenario("dgx-h100");
  const core::Topology topo = topologies::build(scenario.topology, 32);
  const auto& nvls = registry.find(core::CollectiveKind::allreduce, "nvls_tree");
  algorithms::Request req;
  req.ranks = 32;
  req.topology = &topo;
  req.params = algorithms::resolve_params(nvls, {{"channels", "16"}});
  req.bytes = core::Bytes{1ULL << 20};
  const std::uint64_t small = nvls.loop_bytes(req);
  req.chunk_basis = 1ULL << 30;
  CHECK(nvls.loop_bytes(req) == 2 * small);
}

TEST_CASE("simulate takes the steady state only where it times exactly",
          "[analysis][steady-state]") {
  const auto registry = algorithms::make_default_registry();
  const core::Scenario scenario = io::load_scenario("dgx-a100");
  const core::Topology topo = topologies::build(scenario.topology, 4);
  const auto& algo = registry.find(core::CollectiveKind::allreduce, "nccl_ring");
  // One LL channel: 600 loops of 4 chunks of 32 KiB (NCCL's own 24 channels would make 25).
  const Point pt{"dgx-a100", "nccl_ring", 4, 600ULL << 17, {{"protocol", "ll"}, {"channels", "1"}},
                 "loggp"};
  const algorithms::Request req = request_for(algo, pt, topo, scenario);
  const analysis::EngineChoice engine("loggp", scenario);
  core::RunResult steady;
  core::RunResult full;
  core::RunOptions record;
  record.timeline = true; // a per-operation record: runs in full
  const core::ResultRow a = analysis::simulate(registry, algo, topo, engine, req, &steady);
  const core::ResultRow b = analysis::simulate(registry, algo, topo, engine, req, &full, record);
  CHECK(a.time.value == Approx(b.time.value).epsilon(1e-11));
  // The row says how it was timed ("steady state: R of N loops run, period P").
  CHECK(a.method.rfind("steady state: ", 0) == 0);
  CHECK(a.method.find(" loops run, period ") != std::string::npos);
  CHECK(b.method.empty());
  CHECK(a.extrapolated); // tables note it (io::format_table)
  CHECK_FALSE(b.extrapolated);
  CHECK(steady.timeline.empty());
  CHECK(full.timeline.size() == full.operations);
  CHECK(steady.operations == full.operations);
}
