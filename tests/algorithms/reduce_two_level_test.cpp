#include "hierarchy_test_support.hpp"

#include <catch2/catch.hpp>

using namespace collsim;
using core::CollectiveKind;

TEST_CASE("two-level reduce: nodes reduce to their leaders, leaders reduce to the root",
          "[algorithms][reduce][two_level]") {
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(CollectiveKind::reduce, "two_level");
  // 10 ranks, 4 per node, root 6: leaders 0, 6 and 8. Binomial among the leaders (relative ranks
  // 2, 0, 1): both other leaders send their node's sum straight to the root.
  const core::Topology topo = testing::cluster_topology(10);
  const std::uint64_t n = 1000;
  const core::Schedule s =
      reg.generate(algo, testing::request(CollectiveKind::reduce, 10, n, 6, &topo));
  CHECK(core::check_semantics(s).summary() == "");
  const auto inter = testing::inter_node_bytes(s, 4);
  const auto intra = testing::intra_node_bytes(s, 4);
  const auto t = testing::traffic(s);
  for (core::Rank r = 0; r < 10; ++r) {
    CAPTURE(r);
    CHECK(inter[r] == (r == 0 || r == 8 ? n : 0));
  }
  CHECK(t[0].send_peers.back() == 6);
  CHECK(t[8].send_peers == std::vector<core::Rank>{6});
  CHECK(t[9].send_peers == std::vector<core::Rank>{8});
  CHECK(t[6].sends == 0);
  // Binomial trees inside the nodes: k - 1 messages of n each.
  CHECK(intra[0] + intra[1] + intra[2] + intra[3] == 3 * n);
  CHECK(intra[4] + intra[5] + intra[6] + intra[7] == 3 * n);
  CHECK(t[6].reduced_bytes == 4 * n); // two children in its node (7 and 4), two leaders
}

TEST_CASE("two-level reduce with one rank per node is its inter algorithm",
          "[algorithms][reduce][two_level]") {
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(CollectiveKind::reduce, "two_level");
  const auto req = testing::request(CollectiveKind::reduce, 8, 800, 3);
  const auto& binomial = reg.find(CollectiveKind::reduce, "binomial");
  const auto mine = reg.cost(algo, req);
  const auto theirs = reg.cost(binomial, req);
  REQUIRE(mine.has_value());
  REQUIRE(theirs.has_value());
  CHECK(mine->alpha_terms == theirs->alpha_terms);
  CHECK(mine->beta_bytes == theirs->beta_bytes);
  CHECK(mine->gamma_bytes == theirs->gamma_bytes);
}

TEST_CASE("two-level reduce: every level choice gives a correct schedule or a reason",
          "[algorithms][reduce][two_level]") {
  const auto reg = algorithms::make_default_registry();
  CHECK(testing::check_every_choice(reg, reg.find(CollectiveKind::reduce, "two_level"),
                                    {5, 10, 12}) > 100);
}
