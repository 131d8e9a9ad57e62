// MPICH smp barrier: node barrier, leader barrier, node release, composed from registry algorithms.

#include "hierarchy_test_support.hpp"

#include <catch2/catch.hpp>

using namespace collsim;
using core::CollectiveKind;

TEST_CASE("smp barrier on 4 ranks per node: dissemination in each node and among the leaders, "
          "then a binomial release",
          "[algorithms][barrier][smp]") {
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(CollectiveKind::barrier, "smpi:mpich_smp");
  // 10 ranks: nodes {0..3}, {4..7}, {8, 9}; leaders 0, 4, 8.
  const core::Topology topo = testing::cluster_topology(10);
  const core::Schedule s =
      reg.generate(algo, testing::request(CollectiveKind::barrier, 10, 0, 0, &topo));
  CHECK(core::check_semantics(s).summary() == "");
  const auto t = testing::traffic(s);
  // Node barrier (2 rounds on 4 ranks, 1 on 2), leader barrier (2 rounds on 3 leaders), release
  // (local 0 -> 2, 1; 2 -> 3).
  const std::vector<std::uint64_t> sends = {6, 2, 3, 2, 6, 2, 3, 2, 4, 1};
  const std::vector<std::uint64_t> recvs = {4, 3, 3, 3, 4, 3, 3, 3, 3, 2};
  for (core::Rank r = 0; r < 10; ++r) {
    CAPTURE(r);
    CHECK(t[r].sends == sends[r]);
    CHECK(t[r].recvs == recvs[r]);
    CHECK(t[r].send_bytes == 0);
  }
  CHECK(t[0].send_peers == std::vector<core::Rank>{1, 2, 4, 8, 2, 1});
  CHECK(t[8].send_peers == std::vector<core::Rank>{9, 0, 4, 9});
  // Only leaders cross nodes.
  std::uint64_t crossing = 0;
  for (core::Rank r = 0; r < 10; ++r) {
    for (const core::Rank peer : t[r].send_peers) {
      crossing += peer / 4 != r / 4 ? 1 : 0;
      CHECK((peer / 4 == r / 4 || r % 4 == 0));
    }
  }
  CHECK(crossing == 6);
  CHECK_FALSE(
      reg.cost(algo, testing::request(CollectiveKind::barrier, 10, 0, 0, &topo)).has_value());
}

TEST_CASE("smp barrier without a topology is the dissemination barrier on every rank",
          "[algorithms][barrier][smp]") {
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(CollectiveKind::barrier, "mpich:smp");
  const auto req = testing::request(CollectiveKind::barrier, 10, 0);
  const auto t = testing::traffic(reg.generate(algo, req));
  for (core::Rank r = 0; r < 10; ++r) {
    CAPTURE(r);
    CHECK(t[r].send_peers ==
          std::vector<core::Rank>{(r + 1) % 10, (r + 2) % 10, (r + 4) % 10, (r + 8) % 10});
    CHECK(t[r].recvs == 4);
  }
  const auto c = reg.cost(algo, req);
  REQUIRE(c.has_value());
  CHECK(c->alpha_terms == 4.0);
  CHECK(reg.generate(algo, testing::request(CollectiveKind::barrier, 1, 0)).op_count() == 0);
}

TEST_CASE("smp barrier takes no parameters", "[algorithms][barrier][smp]") {
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(CollectiveKind::barrier, "smp");
  auto req = testing::request(CollectiveKind::barrier, 8, 0);
  req.params["radix"] = 4;
  CHECK_THROWS_WITH(reg.generate(algo, req),
                    "smp: unknown parameter 'radix': smp takes no parameters");
}
