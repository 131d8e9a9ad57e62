// The mpich-4 stack and its `mpich_ch4` allreduce: composition alpha's three levels (release_gather
// in shared memory, MPIR's recursive doubling or Rabenseifner among node roots), gamma on one
// node, the GPU swap buffer up to 1 MiB (staged as coll/cuda without fresh pages), GPU-direct
// above it, and UCX's protocols on host buffers.

#include "collsim/stacks/stack.hpp"

#include "collsim/algorithms/registry.hpp"
#include "collsim/analysis/auto_choice.hpp"
#include "collsim/core/verify.hpp"
#include "collsim/engines/loggp.hpp"
#include "collsim/topologies/build.hpp"

#include "stack_test_support.hpp"

#include <catch2/catch.hpp>
#include <set>

using namespace collsim;
using collsim::testing::cpu_nodes;
using collsim::testing::gpu_nodes;
using core::CollectiveKind;

namespace {

core::Schedule generate(const char* algorithm, CollectiveKind c, const core::Topology* topo,
                        std::uint32_t p, std::uint64_t n) {
  const auto registry = algorithms::make_default_registry();
  algorithms::Request req;
  req.collective = c;
  req.ranks = p;
  req.bytes = core::Bytes{n};
  req.topology = topo;
  return registry.generate(registry.find(c, algorithm), req);
}

/// The lengths of rank r's sends to `peer`, in program order.
std::vector<std::uint64_t> sends_to(const core::Schedule& s, core::Rank r, core::Rank peer) {
  std::vector<std::uint64_t> out;
  for (core::OpId id = s.rank_begin(r); id < s.rank_end(r); ++id) {
    if (s.kind(id) == core::OpKind::send && s.peer(id) == peer) {
      out.push_back(s.length(id));
    }
  }
  return out;
}

} // namespace

TEST_CASE("release_gather reduces 8 KiB cells up MPICH's 4-ary tree with no matching cost",
          "[stacks][mpich][algorithms]") {
  // 10 ranks, root 0: rank 0's children 1-4, rank 1's 5-8, rank 2's 9.
  const core::Schedule s = generate("release_gather", CollectiveKind::reduce, nullptr, 10, 20000);
  REQUIRE(core::check_semantics(s).ok());
  CHECK(s.header().protocol.intra_node_overhead.value == 0.0);
  CHECK(sends_to(s, 9, 2) == std::vector<std::uint64_t>{8192, 8192, 3616});
  CHECK(sends_to(s, 5, 1).size() == 3);
  CHECK(sends_to(s, 2, 0).size() == 3);
  for (core::Rank r = 1; r <= 4; ++r) {
    CHECK(sends_to(s, r, 0).size() == 3); // the root's four children
  }
  CHECK(sends_to(s, 5, 0).empty());
}

TEST_CASE("mpich_ch4 allreduces correctly on uneven nodes and on one node",
          "[stacks][mpich][algorithms]") {
  const auto spec = cpu_nodes(3, 5);
  for (const std::uint32_t p : {1U, 2U, 5U, 7U, 13U, 15U}) {
    const auto topo = topologies::build(spec, p);
    for (const std::uint64_t n : {std::uint64_t{0}, std::uint64_t{4}, std::uint64_t{20000}}) {
      CAPTURE(p, n);
      const core::Schedule s = generate("mpich_ch4", CollectiveKind::allreduce, &topo, p, n);
      CHECK(core::check_semantics(s).ok());
      CHECK(s.header().protocol.intra_node_overhead.value == 0.0);
    }
  }
}

TEST_CASE("mpich_ch4 picks MPIR's network allreduce by size and element count", "[stacks][mpich]") {
  // Four nodes of two cores: the leaders are ranks 0, 2, 4, 6. Recursive doubling sends the
  // whole vector to rank 0's first partner (rank 2); Rabenseifner's reduce-scatter sends half.
  const auto topo = topologies::build(cpu_nodes(4, 2), 8);
  const auto first = [&](std::uint64_t n) {
    const core::Schedule s = generate("mpich_ch4", CollectiveKind::allreduce, &topo, 8, n);
    REQUIRE(core::check_semantics(s).ok());
    const auto lengths = sends_to(s, 0, 2);
    REQUIRE_FALSE(lengths.empty());
    return lengths.front();
  };
  CHECK(first(8) == 8);   // avg_msg_size <= 8: recursive doubling
  CHECK(first(12) == 12); // 3 floats < 4 leaders: recursive doubling
  CHECK(first(16) == 8);  // 4 floats: reduce_scatter_allgather
  CHECK(first(1 << 20) == (1 << 19));
  // Node 0's second core hands its vector to the leader in shared memory, 8 KiB cells.
  const core::Schedule s = generate("mpich_ch4", CollectiveKind::allreduce, &topo, 8, 20000);
  CHECK(sends_to(s, 1, 0) == std::vector<std::uint64_t>{8192, 8192, 3616});
}

TEST_CASE("mpich_ch4 on one node is release_gather's allreduce, cell after cell",
          "[stacks][mpich]") {
  const auto topo = topologies::build(cpu_nodes(1, 6), 6);
  const core::Schedule s = generate("mpich_ch4", CollectiveKind::allreduce, &topo, 6, 20000);
  REQUIRE(core::check_semantics(s).ok());
  // Rank 5 (a child of rank 1) sends each cell up and receives it back from the root's 64-ary
  // release: three cells, one reduce and one bcast each.
  CHECK(sends_to(s, 5, 1) == std::vector<std::uint64_t>{8192, 8192, 3616});
  std::set<core::Rank> from;
  for (core::OpId id = s.rank_begin(5); id < s.rank_end(5); ++id) {
    if (s.kind(id) == core::OpKind::recv) {
      from.insert(s.peer(id));
    }
  }
  CHECK(from == std::set<core::Rank>{0});
}

TEST_CASE("mpich-4 swaps device allreduces up to 1 MiB through pooled host buffers",
          "[stacks][mpich]") {
  const auto stacks = stacks::default_stacks();
  const auto registry = algorithms::make_default_registry();
  const auto& ring = registry.find(CollectiveKind::allreduce, "ring");
  const auto spec = gpu_nodes(1, 2);
  const auto topo = topologies::build(spec, 2);
  const auto run = [&](const char* stack, std::uint64_t n, stacks::Buffers buffers) {
    stacks::LowerContext ctx{topo, {}, ring, &spec};
    ctx.buffers = buffers;
    return stacks::lower(stacks, generate("ring", CollectiveKind::allreduce, &topo, 2, n), ctx,
                         stack);
  };
  const auto time = [&](const core::Schedule& s) {
    return engines::LogGPEngine().run(s, topo, {}).time.value;
  };
  // 1 MiB: staged like coll/cuda (below glibc's mmap threshold neither pays page faults).
  const core::Schedule mib = run("mpich-4", 1 << 20, stacks::Buffers::device);
  CHECK(mib.participants() == 4);
  CHECK(core::check_semantics(mib).ok());
  CHECK(time(mib) == Approx(time(run("openmpi-4.1", 1 << 20, stacks::Buffers::device))));
  // 64 MiB: GPU-direct with GPU reductions, where coll/cuda stages and faults fresh pages.
  const core::Schedule big = run("mpich-4", 64 << 20, stacks::Buffers::device);
  CHECK(big.participants() == 2);
  CHECK(big.header().protocol.port_per_link);
  CHECK(time(big) < time(run("openmpi-4.1", 64 << 20, stacks::Buffers::device)) / 4);
  // Host buffers: UCX's rendezvous above its 8 KiB auto threshold.
  CHECK(run("mpich-4", 1 << 20, stacks::Buffers::host).header().protocol.rendezvous_bytes == 8192);
}

TEST_CASE("the mpich-4 stack's auto is ch4's allreduce composition, Open MPI's rules otherwise",
          "[stacks][mpich]") {
  const auto stacks = stacks::default_stacks();
  CHECK(stacks.find("mpich-4").info().chooser == stacks::Chooser::mpich4);
  const auto c = analysis::mpich4_default(CollectiveKind::allreduce);
  REQUIRE(c);
  CHECK(c->algorithm == "mpich_ch4");
  CHECK_FALSE(analysis::mpich4_default(CollectiveKind::bcast));
  const auto registry = algorithms::make_default_registry();
  CHECK_THROWS_WITH(
      stacks.resolve("mpich-4", registry.find(CollectiveKind::allreduce, "nccl_ring")),
      Catch::Contains("runs MPI algorithms"));
}
