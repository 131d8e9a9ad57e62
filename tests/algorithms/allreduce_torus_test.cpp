#include "hierarchy_test_support.hpp"

#include <catch2/catch.hpp>

using namespace collsim;
using core::CollectiveKind;

namespace {
core::Schedule torus(const algorithms::Registry& reg, algorithms::Request req) {
  return reg.generate(reg.find(CollectiveKind::allreduce, "torus"), std::move(req));
}
} // namespace

TEST_CASE("torus allreduce on 8 ranks is a 2x2x2 grid: halving along x, y, z, then doubling back",
          "[algorithms][allreduce][torus]") {
  const auto reg = algorithms::make_default_registry();
  const core::Schedule s = torus(reg, testing::request(CollectiveKind::allreduce, 8, 800));
  CHECK(core::check_semantics(s).summary() == "");
  const auto t = testing::traffic(s);
  for (core::Rank r = 0; r < 8; ++r) {
    CAPTURE(r);
    CHECK(t[r].send_peers == std::vector<core::Rank>{r ^ 1, r ^ 2, r ^ 4, r ^ 4, r ^ 2, r ^ 1});
    CHECK(t[r].send_lengths == std::vector<std::uint64_t>{400, 200, 100, 100, 200, 400});
    CHECK(t[r].reduced_bytes == 700);
  }
  const auto cost = reg.cost(reg.find(CollectiveKind::allreduce, "torus"),
                             testing::request(CollectiveKind::allreduce, 8, 800));
  REQUIRE(cost.has_value());
  CHECK(cost->alpha_terms == 6);
  CHECK(cost->beta_bytes == 1400);
  CHECK(cost->gamma_bytes == 700);
}

TEST_CASE("torus allreduce takes its dimensions from dim_x, dim_y and dim_z",
          "[algorithms][allreduce][torus]") {
  const auto reg = algorithms::make_default_registry();
  auto req = testing::request(CollectiveKind::allreduce, 8, 800);
  req.params = {{"dim_x", 4}, {"dim_y", 2}};
  const core::Schedule s = torus(reg, req);
  CHECK(core::check_semantics(s).summary() == "");
  const auto t = testing::traffic(s);
  for (core::Rank r = 0; r < 8; ++r) {
    CAPTURE(r);
    const core::Rank right = (r % 4 + 1) % 4 + r / 4 * 4; // ring along x
    CHECK(t[r].send_peers ==
          std::vector<core::Rank>{right, right, right, r ^ 4, r ^ 4, right, right, right});
    CHECK(t[r].send_lengths == std::vector<std::uint64_t>{200, 200, 200, 100, 100, 200, 200, 200});
  }
  req.params = {{"dim_x", 3}};
  CHECK(reg.refusal(reg.find(CollectiveKind::allreduce, "torus"), req) ==
        "dim_x * dim_y * dim_z must equal the rank count (0 = unused): 3 * 1 * 1 = 3, but there "
        "are 8 ranks");
}

TEST_CASE("torus allreduce on a cluster keeps its first dimension inside the nodes",
          "[algorithms][allreduce][torus]") {
  const auto reg = algorithms::make_default_registry();
  // 16 ranks, 4 per node: 4 x 2 x 2, n = 1600: x moves 3 blocks of 400 inside the node, y and z
  // move 200 and 100 across nodes, and back.
  const core::Topology topo = testing::cluster_topology(16);
  const core::Schedule s =
      torus(reg, testing::request(CollectiveKind::allreduce, 16, 1600, 0, &topo));
  CHECK(core::check_semantics(s).summary() == "");
  const auto inter = testing::inter_node_bytes(s, 4);
  const auto intra = testing::intra_node_bytes(s, 4);
  for (core::Rank r = 0; r < 16; ++r) {
    CAPTURE(r);
    CHECK(intra[r] == 2 * 3 * 400);
    CHECK(inter[r] == 2 * (200 + 100));
  }
}

TEST_CASE("torus allreduce chooses near-cubic dimensions without a topology",
          "[algorithms][allreduce][torus]") {
  const auto reg = algorithms::make_default_registry();
  // 12 = 2 x 2 x 3: 1 + 1 + 2 ring steps to reduce-scatter, as many to allgather.
  const auto t =
      testing::traffic(torus(reg, testing::request(CollectiveKind::allreduce, 12, 1200)));
  CHECK(t[0].sends == 8);
  // A prime is one dimension: the ring.
  const auto ring =
      testing::traffic(torus(reg, testing::request(CollectiveKind::allreduce, 7, 70)));
  CHECK(ring[0].sends == 12);
  CHECK(ring[0].send_peers == std::vector<core::Rank>(12, 1));
}

TEST_CASE("torus allreduce: every level choice gives a correct schedule or a reason",
          "[algorithms][allreduce][torus]") {
  const auto reg = algorithms::make_default_registry();
  CHECK(testing::check_every_choice(reg, reg.find(CollectiveKind::allreduce, "torus"),
                                    {8, 10, 12}) > 50);
}
