// node_aware alltoall(v) (algorithms/alltoall/alltoall_node_aware.cpp) on placements whose nodes
// are not consecutive ranks: the `rank-renaming` preset puts 32 ranks round robin over 4 nodes
// (Open MPI's --map-by node). Its hand-outs then arrive in tmp and are copied out; the copies
// used to sit before the rank's network sends in program order and every node deadlocked
// (found by the property sweep, docs/testing.md).

#include "algorithm_test_support.hpp"

#include "collsim/algorithms/registry.hpp"
#include "collsim/core/layout.hpp"
#include "collsim/core/verify.hpp"
#include "collsim/io/scenario_loader.hpp"
#include "collsim/topologies/build.hpp"

#include <catch2/catch.hpp>
#include <random>

using namespace collsim;

namespace {

algorithms::Request request(std::uint32_t ranks, const core::Topology& t) {
  algorithms::Request req = testing::allreduce_request(ranks, 128ULL * ranks);
  req.collective = core::CollectiveKind::alltoall;
  req.topology = &t;
  return req;
}

} // namespace

TEST_CASE("node_aware alltoall and alltoallv are correct on a cyclic placement",
          "[algorithms][alltoall][node_aware]") {
  const auto reg = algorithms::make_default_registry();
  const core::Scenario scenario = io::load_scenario("rank-renaming");
  const core::Topology t = topologies::build(scenario.topology, 32);
  REQUIRE(t.node_of(0) == t.node_of(4)); // cyclic: ranks 0, 4, 8, ... share a node
  REQUIRE(t.node_of(0) != t.node_of(1));
  std::mt19937_64 gen(7);
  const auto& algo = reg.find(core::CollectiveKind::alltoall, "node_aware");
  for (std::uint32_t p = 1; p <= 32; ++p) {
    INFO(p << " ranks");
    const core::Schedule s = reg.generate(algo, request(p, t));
    CHECK(core::check_semantics(s).summary() == "");
    // alltoallv: random counts, a quarter zero, so node pairs without bytes are left out too.
    algorithms::Request v = request(p, t);
    v.counts.resize(core::counts_size(core::CollectiveKind::alltoall, p));
    for (auto& n : v.counts) {
      n = gen() % 4 == 0 ? 0 : 1 + gen() % 64;
    }
    v.bytes = core::Bytes{core::counts_bytes(core::CollectiveKind::alltoall, p, v.counts)};
    CHECK(core::check_semantics(reg.generate(algo, v)).summary() == "");
  }
}
