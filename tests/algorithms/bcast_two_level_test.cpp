#include "hierarchy_test_support.hpp"

#include <catch2/catch.hpp>

using namespace collsim;
using core::CollectiveKind;

TEST_CASE("two-level bcast: the root leads its node and alone sends across nodes",
          "[algorithms][bcast][two_level]") {
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(CollectiveKind::bcast, "two_level");
  // 10 ranks, 4 per node, root 5 (local rank 1 of node 1): leaders 0, 5 and 8. The knomial
  // (radix 4) bcast among 3 leaders: the root sends to both other leaders.
  const core::Topology topo = testing::cluster_topology(10);
  const std::uint64_t n = 1000;
  const core::Schedule s =
      reg.generate(algo, testing::request(CollectiveKind::bcast, 10, n, 5, &topo));
  CHECK(core::check_semantics(s).summary() == "");
  const auto inter = testing::inter_node_bytes(s, 4);
  const auto t = testing::traffic(s);
  for (core::Rank r = 0; r < 10; ++r) {
    CAPTURE(r);
    CHECK(inter[r] == (r == 5 ? 2 * n : 0));
    CHECK(t[r].recvs == (r == 5 ? 0 : 1));
    CHECK(t[r].recv_bytes == (r == 5 ? 0 : n));
  }
  CHECK(t[5].send_peers.front() / 4 != 1); // inter-node first, then the node
  CHECK(t[8].send_peers == std::vector<core::Rank>{9});
}

TEST_CASE("two-level bcast with one rank per node is its inter algorithm",
          "[algorithms][bcast][two_level]") {
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(CollectiveKind::bcast, "two_level");
  const auto req = testing::request(CollectiveKind::bcast, 9, 900, 4);
  const auto& knomial = reg.find(CollectiveKind::bcast, "knomial");
  CHECK(testing::traffic(reg.generate(algo, req))[4].send_peers ==
        testing::traffic(reg.generate(knomial, req))[4].send_peers);
  const auto mine = reg.cost(algo, req);
  const auto theirs = reg.cost(knomial, req);
  CHECK(mine.has_value() == theirs.has_value());
  if (mine && theirs) {
    CHECK(mine->alpha_terms == theirs->alpha_terms);
    CHECK(mine->beta_bytes == theirs->beta_bytes);
  }
}

TEST_CASE("two-level bcast: every level choice gives a correct schedule or a reason",
          "[algorithms][bcast][two_level]") {
  const auto reg = algorithms::make_default_registry();
  CHECK(testing::check_every_choice(reg, reg.find(CollectiveKind::bcast, "two_level"),
                                    {5, 10, 12}) > 100);
}
