#include "hierarchy_test_support.hpp"

#include <catch2/catch.hpp>

using namespace collsim;
using core::CollectiveKind;

TEST_CASE("two-level allgather: leaders exchange whole node shards, of different sizes on a "
          "partial last node",
          "[algorithms][allgather][two_level]") {
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(CollectiveKind::allgather, "two_level");
  // 10 ranks, 4 per node, n = 1000 (blocks of 100): shards of 400, 400 and 200 bytes on leaders
  // 0, 4 and 8. Ring among the leaders: each sends its shard, then forwards its left neighbour's.
  const core::Topology topo = testing::cluster_topology(10);
  const core::Schedule s =
      reg.generate(algo, testing::request(CollectiveKind::allgather, 10, 1000, 0, &topo));
  CHECK(core::check_semantics(s).summary() == "");
  const auto inter = testing::inter_node_bytes(s, 4);
  CHECK(inter == std::vector<std::uint64_t>{400 + 200, 0, 0, 0, 400 + 400, 0, 0, 0, 200 + 400, 0});
  const auto t = testing::traffic(s);
  // Non-leaders: their block to the leader (linear gather), the whole vector back (bcast).
  for (const core::Rank r : {1U, 2U, 3U, 5U, 6U, 7U, 9U}) {
    CAPTURE(r);
    CHECK(t[r].recv_bytes == 1000);
    CHECK(t[r].send_peers.front() == r / 4 * 4);
    CHECK(t[r].send_lengths.front() == 100);
  }
}

TEST_CASE("two-level allgather refuses an inter algorithm that needs scratch when node shards "
          "differ",
          "[algorithms][allgather][two_level]") {
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(CollectiveKind::allgather, "two_level");
  const core::Topology topo = testing::cluster_topology(10);
  auto req = testing::request(CollectiveKind::allgather, 10, 1000, 0, &topo);
  req.params["inter"] = 2; // bruck
  REQUIRE(algo.params[1].choices[2] == "bruck");
  CHECK(reg.refusal(algo, req) == "bruck uses scratch space, which cannot be mapped onto nodes "
                                  "holding different numbers of ranks");
  // Equal shards: a plain shift, any inter algorithm.
  const core::Topology even = testing::cluster_topology(12);
  auto ok = testing::request(CollectiveKind::allgather, 12, 1200, 0, &even);
  ok.params["inter"] = 2;
  CHECK(reg.refusal(algo, ok) == "");
  CHECK(core::check_semantics(reg.generate(algo, ok)).summary() == "");
}

TEST_CASE("two-level allgather with one rank per node is its inter algorithm",
          "[algorithms][allgather][two_level]") {
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(CollectiveKind::allgather, "two_level");
  const auto req = testing::request(CollectiveKind::allgather, 6, 600);
  const auto cost = reg.cost(algo, req);
  REQUIRE(cost.has_value());
  CHECK(cost->alpha_terms == 5);
  CHECK(cost->beta_bytes == 500);
  CHECK_FALSE(reg.cost(algo, testing::request(CollectiveKind::allgather, 6, 601)));
}

TEST_CASE("two-level allgather: every level choice gives a correct schedule or a reason",
          "[algorithms][allgather][two_level]") {
  const auto reg = algorithms::make_default_registry();
  CHECK(testing::check_every_choice(reg, reg.find(CollectiveKind::allgather, "two_level"),
                                    {5, 10, 12}) > 50);
}
