#include "hierarchy_test_support.hpp"

#include <catch2/catch.hpp>

using namespace collsim;
using core::CollectiveKind;

TEST_CASE("hierarchical ring allreduce sends n/ppn-sized shards across nodes between ranks of "
          "the same local index",
          "[algorithms][allreduce][hierarchical_ring]") {
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(CollectiveKind::allreduce, "hierarchical_ring");
  // 12 ranks, 3 nodes of 4; n = 1200: shards of 300, ring blocks of 100 across the 3 nodes.
  const core::Topology topo = testing::cluster_topology(12);
  const core::Schedule s =
      reg.generate(algo, testing::request(CollectiveKind::allreduce, 12, 1200, 0, &topo));
  CHECK(core::check_semantics(s).summary() == "");
  const auto inter = testing::inter_node_bytes(s, 4);
  const auto intra = testing::intra_node_bytes(s, 4);
  const auto t = testing::traffic(s);
  for (core::Rank r = 0; r < 12; ++r) {
    CAPTURE(r);
    CHECK(intra[r] == 900 + 900); // ring reduce-scatter + ring allgather: 3 blocks of 300 each
    CHECK(inter[r] == 2 * 2 * 100);
    for (std::size_t i = 0; i < t[r].send_peers.size(); ++i) {
      const core::Rank q = t[r].send_peers[i];
      if (q / 4 != r / 4) {
        CHECK(q % 4 == r % 4);           // same local index
        CHECK(q / 4 == (r / 4 + 1) % 3); // the next node on the ring
      }
    }
  }
}

TEST_CASE("hierarchical ring allreduce refuses nodes of different sizes",
          "[algorithms][allreduce][hierarchical_ring]") {
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(CollectiveKind::allreduce, "hierarchical_ring");
  const core::Topology topo = testing::cluster_topology(10);
  auto req = testing::request(CollectiveKind::allreduce, 10, 1000, 0, &topo);
  CHECK(reg.refusal(algo, req) ==
        "every node must hold the same number of ranks (the 3 nodes hold 4, 4, 2 ranks)");
}

TEST_CASE("hierarchical ring allreduce with one rank per node is its inter algorithm",
          "[algorithms][allreduce][hierarchical_ring]") {
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(CollectiveKind::allreduce, "hierarchical_ring");
  const auto req = testing::request(CollectiveKind::allreduce, 6, 600);
  const auto& ring = reg.find(CollectiveKind::allreduce, "ring");
  CHECK(reg.generate(algo, req).op_count() == reg.generate(ring, req).op_count());
  const auto cost = reg.cost(algo, req);
  REQUIRE(cost.has_value());
  CHECK(cost->alpha_terms == 10);
  CHECK(cost->beta_bytes == 1000);
  CHECK(cost->gamma_bytes == 500);
}

TEST_CASE("hierarchical ring allreduce: every level choice gives a correct schedule or a reason",
          "[algorithms][allreduce][hierarchical_ring]") {
  const auto reg = algorithms::make_default_registry();
  CHECK(testing::check_every_choice(reg, reg.find(CollectiveKind::allreduce, "hierarchical_ring"),
                                    {8, 12}) > 50);
}
