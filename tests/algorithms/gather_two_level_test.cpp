#include "hierarchy_test_support.hpp"

#include <catch2/catch.hpp>

using namespace collsim;
using core::CollectiveKind;

TEST_CASE("two-level gather: node leaders gather their node, then send its shard to the root",
          "[algorithms][gather][two_level]") {
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(CollectiveKind::gather, "two_level");
  // 10 ranks, 4 per node, root 6, n = 1000: leaders 0, 6 and 8 with shards of 400, 400, 200.
  const core::Topology topo = testing::cluster_topology(10);
  const core::Schedule s =
      reg.generate(algo, testing::request(CollectiveKind::gather, 10, 1000, 6, &topo));
  CHECK(core::check_semantics(s).summary() == "");
  const auto inter = testing::inter_node_bytes(s, 4);
  CHECK(inter == std::vector<std::uint64_t>{400, 0, 0, 0, 0, 0, 0, 0, 200, 0});
  const auto t = testing::traffic(s);
  CHECK(t[6].recv_bytes == 900);
  CHECK(t[6].recvs == 3 + 2);
  for (const core::Rank r : {4U, 5U, 7U}) {
    CHECK(t[r].send_peers == std::vector<core::Rank>{6});
  }
  CHECK(t[0].recv_bytes == 300);
  CHECK(t[9].send_peers == std::vector<core::Rank>{8});
}

TEST_CASE("two-level gather with one rank per node is its inter algorithm",
          "[algorithms][gather][two_level]") {
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(CollectiveKind::gather, "two_level");
  const auto req = testing::request(CollectiveKind::gather, 5, 500, 2);
  const auto cost = reg.cost(algo, req);
  REQUIRE(cost.has_value());
  CHECK(cost->alpha_terms == 1);
  CHECK(cost->beta_bytes == 400);
}

TEST_CASE("two-level gather: every level choice gives a correct schedule or a reason",
          "[algorithms][gather][two_level]") {
  const auto reg = algorithms::make_default_registry();
  CHECK(testing::check_every_choice(reg, reg.find(CollectiveKind::gather, "two_level"),
                                    {5, 10, 12}) > 50);
}
