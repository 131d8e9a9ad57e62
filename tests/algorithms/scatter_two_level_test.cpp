#include "hierarchy_test_support.hpp"

#include <catch2/catch.hpp>

using namespace collsim;
using core::CollectiveKind;

TEST_CASE("two-level scatter: the root scatters node shards to the leaders, which scatter them "
          "inside their node",
          "[algorithms][scatter][two_level]") {
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(CollectiveKind::scatter, "two_level");
  // 10 ranks, 4 per node, root 6, n = 1000: leaders 0, 6 and 8 with shards of 400, 400, 200.
  const core::Topology topo = testing::cluster_topology(10);
  const core::Schedule s =
      reg.generate(algo, testing::request(CollectiveKind::scatter, 10, 1000, 6, &topo));
  CHECK(core::check_semantics(s).summary() == "");
  const auto inter = testing::inter_node_bytes(s, 4);
  const auto t = testing::traffic(s);
  // Linear among the 3 leaders: the root sends node 0's shard to leader 0 and node 2's to leader 8.
  CHECK(inter == std::vector<std::uint64_t>{0, 0, 0, 0, 0, 0, 400 + 200, 0, 0, 0});
  CHECK(t[6].send_bytes == 900);
  CHECK(t[0].recv_bytes == 400);
  CHECK(t[0].send_bytes == 300);
  CHECK(t[8].recv_bytes == 200);
  CHECK(t[8].send_lengths == std::vector<std::uint64_t>{100});
  for (const core::Rank r : {1U, 2U, 3U, 4U, 5U, 7U, 9U}) {
    CAPTURE(r);
    CHECK(t[r].recv_bytes == 100);
  }
  // Binomial among leaders stages subtrees in scratch, which nodes of different sizes cannot map.
  // On 18 ranks (5 leaders) interior leaders stage their subtree in scratch.
  const core::Topology five = testing::cluster_topology(18);
  auto binomial = testing::request(CollectiveKind::scatter, 18, 1800, 6, &five);
  binomial.params["inter"] = 0;
  REQUIRE(algo.params[0].choices[0] == "binomial");
  CHECK(reg.refusal(algo, binomial) == "binomial uses scratch space, which cannot be mapped onto "
                                       "nodes holding different numbers of ranks");
  const core::Topology even = testing::cluster_topology(12);
  binomial = testing::request(CollectiveKind::scatter, 12, 1200, 6, &even);
  binomial.params["inter"] = 0;
  CHECK(core::check_semantics(reg.generate(algo, binomial)).summary() == "");
}

TEST_CASE("two-level scatter with one rank per node is its inter algorithm",
          "[algorithms][scatter][two_level]") {
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(CollectiveKind::scatter, "two_level");
  const auto req = testing::request(CollectiveKind::scatter, 8, 800, 3);
  const auto mine = reg.cost(algo, req);
  const auto theirs = reg.cost(reg.find(CollectiveKind::scatter, "linear"), req);
  CHECK(mine.has_value() == theirs.has_value());
  if (mine && theirs) {
    CHECK(mine->alpha_terms == theirs->alpha_terms);
    CHECK(mine->beta_bytes == theirs->beta_bytes);
  }
}

TEST_CASE("two-level scatter: every level choice gives a correct schedule or a reason",
          "[algorithms][scatter][two_level]") {
  const auto reg = algorithms::make_default_registry();
  CHECK(testing::check_every_choice(reg, reg.find(CollectiveKind::scatter, "two_level"),
                                    {5, 10, 12}) > 50);
}
