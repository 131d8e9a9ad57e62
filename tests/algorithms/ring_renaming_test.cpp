// Rank renaming of the rings (issue 20; Rico-Gallego and Diaz-Martin, NESUS 2014): allreduce
// `ring_reordered`, allgather `ring` and reduce-scatter `ring` with order=renamed on a round-robin
// placement cross each node boundary once and still compute their collective.

#include "algorithm_test_support.hpp"
#include "collsim/algorithms/registry.hpp"
#include "collsim/core/verify.hpp"
#include "collsim/topologies/build.hpp"

#include <catch2/catch.hpp>

using namespace collsim;

namespace {

/// `nodes` CPU nodes of 4 cores, `ranks` ranks placed round-robin over the nodes they need.
core::Topology cyclic(std::uint32_t nodes, std::uint32_t ranks) {
  core::TopologySpec spec;
  spec.kind = "system";
  spec.system.nodes = nodes;
  spec.system.node.cpu.sockets = 1;
  spec.system.node.cpu.cores_per_socket = 4;
  spec.system.placement.order = "cyclic";
  return topologies::build(spec, ranks);
}

/// Ring links (a rank and the peer of its first send) that join two nodes.
std::uint32_t crossings(const core::Schedule& s, const core::Topology& t) {
  const auto traffic = testing::traffic(s);
  std::uint32_t n = 0;
  for (core::Rank r = 0; r < s.ranks(); ++r) {
    n += t.node_of(traffic[r].send_peers.front()) != t.node_of(r) ? 1 : 0;
  }
  return n;
}

} // namespace

TEST_CASE("renamed rings cross each node boundary once on a cyclic placement and stay correct",
          "[algorithms][ring][renaming]") {
  const auto reg = algorithms::make_default_registry();
  const std::vector<std::pair<core::CollectiveKind, std::string>> rings{
      {core::CollectiveKind::allreduce, "ring_reordered"},
      {core::CollectiveKind::allgather, "ring"},
      {core::CollectiveKind::reduce_scatter, "ring"}};
  for (const auto& [kind, name] : rings) {
    for (const auto& [nodes, p] :
         std::vector<std::pair<std::uint32_t, std::uint32_t>>{{3, 12}, {3, 7}, {2, 8}, {4, 5}}) {
      const core::Topology t = cyclic(nodes, p);
      for (const std::uint64_t n : {std::uint64_t{0}, std::uint64_t{p} - 1, std::uint64_t{1001}}) {
        CAPTURE(name, core::to_string(kind), nodes, p, n);
        algorithms::Request req;
        req.collective = kind;
        req.ranks = p;
        req.bytes = core::Bytes{n};
        req.topology = &t;
        const auto& algo = reg.find(kind, name);
        const core::Schedule plain = reg.generate(algo, req);
        req.params["order"] = 1; // renamed
        const core::Schedule renamed = reg.generate(algo, req);
        CHECK(core::check_semantics(renamed).summary() == "");
        // Cyclic placement uses ceil(p / 4) of the nodes (docs/scenario-format.md, placement).
        const std::uint32_t used = (p + 3) / 4;
        CHECK(crossings(renamed, t) == used); // once per node: the ring's node-to-node hops
        CHECK(crossings(plain, t) == (p % used == 1 ? p - 1 : p)); // round robin: nearly every hop
      }
    }
  }
}
