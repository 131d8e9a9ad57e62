// Collapsed schedules (core/collapse.hpp, analysis/collapse.hpp): one program per class of
// equivalent ranks must time exactly like every rank's program, message for message, and be
// chosen only where the machine has the algorithm's symmetry.

#include "collsim/analysis/collapse.hpp"
#include "collsim/analysis/simulate.hpp"
#include "collsim/core/errors.hpp"
#include "collsim/core/verify.hpp"
#include "collsim/io/scenario_loader.hpp"
#include "collsim/stacks/stack.hpp"
#include "collsim/topologies/build.hpp"

#include <catch2/catch.hpp>
#include <cmath>
#include <fmt/format.h>

using namespace collsim;

namespace {

algorithms::Request request(std::uint32_t p, std::uint64_t n, std::uint32_t programs = 0) {
  algorithms::Request r;
  r.collective = core::CollectiveKind::allreduce;
  r.ranks = p;
  r.bytes = core::Bytes{n};
  r.collapse_to = programs;
  return r;
}

/// Every program of `collapsed` is the full schedule's program of the same rank with its peers
/// moved to their representatives, and its messages match exactly the messages the full
/// schedule matches, moved alike.
void check_against_full(const core::Schedule& full, const core::Schedule& collapsed) {
  const std::uint32_t k = collapsed.ranks();
  REQUIRE(collapsed.header().collapse.ranks == full.ranks());
  const core::Matching fm = core::match_messages(full);
  const core::Matching cm = core::match_messages(collapsed);
  REQUIRE(fm.unmatched == 0);
  REQUIRE(cm.unmatched == 0);
  for (core::Rank r = 0; r < k; ++r) {
    REQUIRE(collapsed.rank_end(r) - collapsed.rank_begin(r) ==
            full.rank_end(r) - full.rank_begin(r));
    for (core::OpId c = collapsed.rank_begin(r); c < collapsed.rank_end(r); ++c) {
      const core::OpId f = full.rank_begin(r) + (c - collapsed.rank_begin(r));
      core::Op co = collapsed.op(c);
      core::Op fo = full.op(f);
      CHECK(collapsed.route_peer(c) == fo.peer);
      co.peer = fo.peer;
      REQUIRE(co == fo);
      if (collapsed.kind(c) != core::OpKind::send) {
        continue;
      }
      // The full schedule's receive of this send, on the rank route_peer names, at the local
      // index where the collapsed schedule's receive lies in that rank's representative.
      const core::OpId crecv = cm.partner[c];
      const core::Rank rep = collapsed.rank_of(crecv);
      const core::OpId frecv = fm.partner[f];
      CHECK(full.rank_of(frecv) == fo.peer);
      CHECK(rep == fo.peer % k);
      CHECK(crecv - collapsed.rank_begin(rep) == frecv - full.rank_begin(fo.peer));
    }
  }
  // The symmetry the algorithm declares: rank x runs its representative's program with every
  // partner moved by x's shift; only byte offsets may differ (the engine reads lengths).
  const core::Collapse& c = collapsed.header().collapse;
  for (core::Rank x = 0; x < full.ranks(); ++x) {
    const core::Rank r = x % k;
    REQUIRE(full.rank_end(x) - full.rank_begin(x) == full.rank_end(r) - full.rank_begin(r));
    for (core::OpId i = 0; i < full.rank_end(x) - full.rank_begin(x); ++i) {
      core::Op xo = full.op(full.rank_begin(x) + i);
      core::Op ro = full.op(full.rank_begin(r) + i);
      if (ro.kind == core::OpKind::send || ro.kind == core::OpKind::recv ||
          ro.kind == core::OpKind::recv_reduce) {
        ro.peer = core::symmetry_image(c.kind, c.ranks, x - r, ro.peer);
      }
      ro.rank = xo.rank;
      ro.target.offset = xo.target.offset;
      ro.source.offset = xo.source.offset;
      INFO("rank " << x << " operation l" << i);
      REQUIRE(xo == ro);
    }
  }
}

std::uint32_t programs(const std::optional<core::Schedule>& s) {
  return s ? s->ranks() : 0;
}

void check_same_times(const core::RunResult& full, const core::RunResult& collapsed) {
  CHECK(collapsed.time.value == Approx(full.time.value).epsilon(1e-12));
  CHECK(collapsed.operations == full.operations);
  CHECK(collapsed.messages == full.messages);
  CHECK(collapsed.bytes_sent == full.bytes_sent);
  REQUIRE(collapsed.rank_finish.size() == full.rank_finish.size());
  for (std::size_t x = 0; x < full.rank_finish.size(); ++x) {
    CHECK(collapsed.rank_finish[x].value == Approx(full.rank_finish[x].value).epsilon(1e-12));
  }
}

} // namespace

TEST_CASE("a collapsed ring or butterfly is the full schedule's programs, matched alike",
          "[analysis][collapse]") {
  const auto registry = algorithms::make_default_registry();
  // Rings in rank order (allreduce, allgather, reduce-scatter) on any p, butterflies
  // (recursive doubling, Rabenseifner's halving and doubling) on powers of two.
  struct Family {
    core::CollectiveKind collective;
    const char* name;
    bool butterfly;
  };
  const Family families[] = {
      {core::CollectiveKind::allreduce, "ring", false},
      {core::CollectiveKind::allgather, "ring", false},
      {core::CollectiveKind::reduce_scatter, "ring", false},
      {core::CollectiveKind::allreduce, "recursive_doubling", true},
      {core::CollectiveKind::allreduce, "rabenseifner", true},
  };
  for (const Family& f : families) {
    const auto& algo = registry.find(f.collective, f.name);
    for (const std::uint32_t p : {2U, 3U, 4U, 5U, 6U, 8U, 12U, 16U, 30U, 64U}) {
      if (f.butterfly && (p & (p - 1)) != 0) {
        continue;
      }
      algorithms::Request full = request(p, 4096ULL * p);
      full.collective = f.collective;
      REQUIRE(algo.symmetry(full).kind != core::SymmetryKind::none);
      for (std::uint32_t k = 1; k < p; ++k) {
        if (p % k != 0 || (f.butterfly && (k & (k - 1)) != 0)) {
          continue;
        }
        INFO(core::to_string(f.collective) << " " << f.name << ", p = " << p << ", k = " << k);
        algorithms::Request collapsed = full;
        collapsed.collapse_to = k;
        check_against_full(registry.generate(algo, full), registry.generate(algo, collapsed));
      }
    }
  }
  // NCCL's ring: channels entering each node at another GPU, on 8-GPU nodes, several loops.
  const auto& nccl = registry.find(core::CollectiveKind::allreduce, "nccl_ring");
  const core::Scenario dgx = io::load_scenario("dgx-a100");
  for (const std::uint32_t p : {16U, 24U, 32U}) {
    const core::Topology topo = topologies::build(dgx.topology, p);
    for (const std::uint64_t n : {std::uint64_t{p} * 64, std::uint64_t{p} << 20}) {
      for (const char* protocol : {"simple", "ll"}) {
        algorithms::Request full = request(p, n);
        full.topology = &topo;
        full.params = algorithms::resolve_params(nccl, {{"channels", "4"}, {"protocol", protocol}});
        REQUIRE(nccl.symmetry(full).period == 8);
        for (std::uint32_t k = 8; k < p; k += 8) {
          if (p % k != 0) {
            continue;
          }
          INFO("nccl_ring, p = " << p << ", " << n << " B, " << protocol << ", k = " << k);
          algorithms::Request collapsed = full;
          collapsed.collapse_to = k;
          check_against_full(registry.generate(nccl, full), registry.generate(nccl, collapsed));
        }
      }
    }
  }
}

TEST_CASE("only symmetric requests collapse", "[analysis][collapse]") {
  const auto registry = algorithms::make_default_registry();
  const auto& ring = registry.find(core::CollectiveKind::allreduce, "ring");
  const auto& rd = registry.find(core::CollectiveKind::allreduce, "recursive_doubling");
  // Unequal blocks (p does not divide n) and the fold of 6 ranks set ranks apart.
  CHECK(ring.symmetry(request(8, 1000)).kind == core::SymmetryKind::rotation);
  CHECK(ring.symmetry(request(8, 1001)).kind == core::SymmetryKind::none);
  CHECK(rd.symmetry(request(8, 1001)).kind == core::SymmetryKind::xor_blocks);
  CHECK(rd.symmetry(request(6, 1000)).kind == core::SymmetryKind::none);
  // NCCL's rings repeat every node: 8 GPUs per node on dgx-a100, one rank per node on a mesh.
  const auto& nccl = registry.find(core::CollectiveKind::allreduce, "nccl_ring");
  const core::Topology gpus = topologies::build(io::load_scenario("dgx-a100").topology, 32);
  algorithms::Request on_gpus = request(32, 32 * 4096);
  on_gpus.topology = &gpus;
  CHECK(nccl.symmetry(on_gpus).kind == core::SymmetryKind::rotation);
  CHECK(nccl.symmetry(on_gpus).period == 8);
  on_gpus.collapse_to = 4; // not a whole node
  CHECK_THROWS_AS(registry.generate(nccl, on_gpus), core::InternalError);
  // A last loop that 32 ranks do not split evenly.
  on_gpus = request(32, 32 * 4096 + 16);
  on_gpus.topology = &gpus;
  CHECK(nccl.symmetry(on_gpus).kind == core::SymmetryKind::none);
  CHECK_THROWS_AS(registry.generate(ring, request(8, 1001, 1)), core::InternalError);
  CHECK_THROWS_AS(registry.generate(rd, request(8, 1000, 3)), core::InternalError);
  CHECK_THROWS_AS(core::print_schedule(registry.generate(ring, request(8, 1000, 1))),
                  core::InternalError);
}

TEST_CASE("collapsed schedules time exactly like full ones on loggp", "[analysis][collapse]") {
  const auto registry = algorithms::make_default_registry();
  struct Case {
    const char* preset;
    const char* algorithm;
    std::uint32_t ranks;
    std::uint64_t bytes;
    std::uint32_t programs; // what collapse_for must choose (0: none)
    core::CollectiveKind collective = core::CollectiveKind::allreduce;
  };
  // textbook: a full mesh, every rank alike. dgx-a100: 8 GPUs per node behind NVSwitches, one
  // rail-optimised leaf per GPU index: the ring's node crossings repeat every node, and XOR moves
  // keep a GPU's index and its node's alignment, so the butterfly needs one program.
  // cpu-hdr100-epyc: 64 ranks on one node's NUMA domains of 16 cores: the ring leaves a domain
  // every 16 ranks. fat-tree-tapered: 30 hosts
  // per leaf, so 64 ranks on 3 leaves (30, 30, 4) have no period below 64.
  const Case cases[] = {
      {"textbook", "ring", 12, 12 * 1000, 1},
      {"textbook", "ring", 64, 64 * 4096, 1},
      {"textbook", "recursive_doubling", 64, 1 << 20, 1},
      {"dgx-a100", "ring", 32, 32 * 65536, 8},
      {"dgx-a100", "recursive_doubling", 32, 1 << 20, 1},
      {"dgx-a100", "nccl_ring", 32, 32 << 20, 8},
      {"dgx-a100", "nccl_ring", 64, 64 * 1024, 8},
      {"textbook", "nccl_ring", 16, 16 << 20, 1},
      {"textbook", "rabenseifner", 64, 64 * 4096, 1},
      {"dgx-a100", "rabenseifner", 32, 32 * 65536, 1},
      {"dgx-a100", "ring", 32, 32 * 65536, 8, core::CollectiveKind::allgather},
      {"dgx-a100", "ring", 24, 24 * 65536, 8, core::CollectiveKind::reduce_scatter},
      {"cpu-hdr100-epyc", "ring", 64, 64 * 1024, 16},
      {"fat-tree-tapered", "ring", 64, 64 * 4096, 0},
      {"fat-tree-tapered", "recursive_doubling", 64, 4096, 0},
  };
  for (const Case& c : cases) {
    INFO(c.preset << " " << core::to_string(c.collective) << " " << c.algorithm << " " << c.ranks
                  << " ranks, " << c.bytes << " B");
    const core::Scenario scenario = io::load_scenario(c.preset);
    const core::Topology topo = topologies::build(scenario.topology, c.ranks);
    const auto& algo = registry.find(c.collective, c.algorithm);
    algorithms::Request req = request(c.ranks, c.bytes);
    req.collective = c.collective;
    req.topology = &topo;
    const analysis::EngineChoice engine("loggp", scenario);
    const std::uint32_t k = programs(analysis::collapse_for(registry, algo, topo, engine, req));
    CHECK(k == c.programs);
    core::RunResult collapsed;
    core::RunResult full;
    core::RunOptions record;
    record.timeline = true; // a per-rank record: runs in full
    const core::ResultRow a = analysis::simulate(registry, algo, topo, engine, req, &collapsed);
    const core::ResultRow b = analysis::simulate(registry, algo, topo, engine, req, &full, record);
    check_same_times(full, collapsed);
    CHECK(a.time.value == Approx(b.time.value).epsilon(1e-12));
    CHECK(a.method == (k == 0 ? std::string()
                              : fmt::format("collapsed: {} program{} for {} ranks", k,
                                            k == 1 ? "" : "s", c.ranks)));
    CHECK(b.method.empty());
    CHECK_FALSE(a.extrapolated); // exact by symmetry: tables leave it to JSON and CSV
  }
}

TEST_CASE("stacks lower a collapsed schedule for all the ranks it stands for",
          "[analysis][collapse]") {
  // NCCL's model inputs (nodes, rings, stream rates) and the MPI stacks' GPU paths are sized by
  // the collective's ranks, not by the representatives: 64 ranks on 8 nodes, not 8 on one.
  const auto registry = algorithms::make_default_registry();
  const stacks::Registry stacks = stacks::default_stacks();
  const core::Scenario scenario = io::load_scenario("dgx-a100");
  const core::Topology topo = topologies::build(scenario.topology, 64);
  for (const auto& [name, stack] : {std::pair<const char*, const char*>{"nccl_ring", ""},
                                    {"ring", "openmpi-4.1"},
                                    {"ring", "mvapich2-gdr"}}) {
    INFO(name << " " << stack);
    const auto& algo = registry.find(core::CollectiveKind::allreduce, name);
    // 64 KiB and 1 MiB per rank: MVAPICH2-GDR stages calls of up to its limit per rank through
    // host memory (its agents then keep the schedule whole in a run, but not in this lowering).
    for (const std::uint64_t n : {std::uint64_t{64} << 16, std::uint64_t{64} << 20}) {
      algorithms::Request req = request(64, n);
      req.topology = &topo;
      if (!algo.params.empty()) {
        // LL128's per-channel rate depends on the node count (tuning.cc's perChMaxRingLL128Bw).
        req.params = algorithms::resolve_params(algo, {{"protocol", "ll128"}});
      }
      req = analysis::with_library_params(algo, req, analysis::EngineChoice("loggp", scenario));
      const stacks::LowerContext ctx{topo, scenario.nccl, algo, &scenario.topology};
      const core::Schedule full = stacks::lower(stacks, registry.generate(algo, req), ctx, stack);
      req.collapse_to = 8;
      const core::Schedule collapsed =
          stacks::lower(stacks, registry.generate(algo, req), ctx, stack);
      CHECK(collapsed.ranks() == 8);
      CHECK(collapsed.header().full_ranks() == 64);
      CHECK(collapsed.header().protocol == full.header().protocol);
      CHECK(collapsed.header().agents.empty() == full.header().agents.empty());
    }
  }
}

TEST_CASE("a machine without the symmetry runs the schedule in full", "[analysis][collapse]") {
  const auto registry = algorithms::make_default_registry();
  const auto& ring = registry.find(core::CollectiveKind::allreduce, "ring");
  const core::Scenario scenario = io::load_scenario("fat-tree-tapered");
  const core::Topology topo = topologies::build(scenario.topology, 60);
  algorithms::Request req = request(60, 60 * 1000);
  req.topology = &topo;
  // 60 ranks on two leaves of 30: rotating by 30 maps each leaf onto the other.
  const analysis::EngineChoice engine("loggp", scenario);
  CHECK(programs(analysis::collapse_for(registry, ring, topo, engine, req)) == 30);
  // No collapse on simgrid, for arrival skew, or for a per-rank record.
  CHECK(programs(analysis::collapse_for(registry, ring, topo,
                                        analysis::EngineChoice("simgrid", scenario), req)) == 0);
  core::RunOptions loads;
  loads.link_loads = true;
  CHECK(programs(analysis::collapse_for(registry, ring, topo, engine, req, loads)) == 0);
  req.arrivals.assign(60, 0.0);
  req.arrivals[3] = 1e-6;
  CHECK(programs(analysis::collapse_for(registry, ring, topo, engine, req)) == 0);
}

TEST_CASE("a 131072-rank ring allreduce of 1 GiB equals its closed form", "[analysis][collapse]") {
  // 4p(p-1) = 68.7 billion operations in full; one program of 524,284 collapsed.
  const auto registry = algorithms::make_default_registry();
  const auto& ring = registry.find(core::CollectiveKind::allreduce, "ring");
  const core::Scenario scenario = io::load_scenario("textbook");
  constexpr std::uint32_t p = 131072;
  const core::Topology topo = topologies::build(scenario.topology, p);
  algorithms::Request req = request(p, std::uint64_t{1} << 30);
  req.topology = &topo;
  const analysis::EngineChoice engine("loggp", scenario);
  CHECK(programs(analysis::collapse_for(registry, ring, topo, engine, req)) == 1);
  core::RunResult run;
  const core::ResultRow row = analysis::simulate(registry, ring, topo, engine, req, &run);
  // 2(p-1) a + 2(p-1)/p n b + (p-1)/p n g with a = 2 us, b = 1/(10 GB/s), g = 1/(20 GB/s).
  const double moved = static_cast<double>(p - 1) * (1 << 30) / p;
  const double closed = 2.0 * (p - 1) * 2e-6 + 2.0 * moved / 10e9 + moved / 20e9;
  CHECK(std::abs(row.time.value - closed) <= 1e-9 * closed);
  CHECK(run.operations == 4ULL * p * (p - 1));
  CHECK(run.rank_finish.size() == p);
}

TEST_CASE("ring, NCCL ring and recursive doubling collapse on 131072 GPUs of a fat tree",
          "[.][heavy-collapse]") {
  // 16384 DGX H100 nodes on a three-level rail-optimised fat tree (bench/scale/dgx-h100-16k.yaml):
  // every node is alike and GPU i of every node hangs from rail i, so the rings repeat every
  // node and XOR moves keep a GPU's rail.
  const core::Scenario scenario = io::parse_scenario(R"(name: dgx-h100-16k
base: dgx-h100
topology:
  nodes: 16384
  network: {kind: fat_tree, levels: 3, radix: 128, rail_optimized: true, sharp: false}
)",
                                                     "dgx-h100-16k.yaml");
  constexpr std::uint32_t p = 131072;
  const core::Topology topo = topologies::build(scenario.topology, p);
  const auto registry = algorithms::make_default_registry();
  const analysis::EngineChoice engine("loggp", scenario);
  const std::pair<const char*, std::uint32_t> expected[] = {
      {"ring", 8}, {"nccl_ring", 8}, {"recursive_doubling", 1}};
  for (const auto& [name, programs_expected] : expected) {
    INFO(name);
    const auto& algo = registry.find(core::CollectiveKind::allreduce, name);
    algorithms::Request req = request(p, std::uint64_t{1} << 30);
    req.topology = &topo;
    req = analysis::with_library_params(algo, req, engine);
    CHECK(programs(analysis::collapse_for(registry, algo, topo, engine, req)) == programs_expected);
    core::RunResult run;
    const core::ResultRow row = analysis::simulate(registry, algo, topo, engine, req, &run);
    CHECK(run.rank_finish.size() == p);
    // No faster than the ring's NIC bound: 2(p-1)/p of the vector through a GPU's 400 Gb/s NIC
    // (NDR at 0.95); recursive doubling sends 14 whole vectors through it.
    CHECK(row.time.value > 2.0 * (1 << 30) * (p - 1) / p / (50e9 * 0.95));
  }
}
