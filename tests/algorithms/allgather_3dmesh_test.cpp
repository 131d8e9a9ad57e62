#include "algorithm_test_support.hpp"
#include "collsim/algorithms/registry.hpp"
#include "collsim/core/errors.hpp"

#include <catch2/catch.hpp>

using namespace collsim;

namespace {
algorithms::Request allgather_request(std::uint32_t p, std::uint64_t n) {
  algorithms::Request req = testing::allreduce_request(p, n);
  req.collective = core::CollectiveKind::allgather;
  return req;
}
core::Schedule mesh(std::uint32_t p, std::uint64_t n) {
  const auto reg = algorithms::make_default_registry();
  return reg.generate(reg.find(core::CollectiveKind::allgather, "3dmesh"), allgather_request(p, n));
}
} // namespace

TEST_CASE("3dmesh allgather on 8 ranks: rows, columns, then planes of a 2 x 2 x 2 grid",
          "[algorithms][allgather][3dmesh]") {
  const auto t = testing::traffic(mesh(8, 80));
  // Rank 5: plane 1 (4..7), row 4-5, column 5, 7; the other plane's rank is 1.
  CHECK(t[5].send_peers == std::vector<core::Rank>{4, 7, 1});
  CHECK(t[5].send_lengths == std::vector<std::uint64_t>{10, 20, 40});
  CHECK(t[5].recv_bytes == 70);
}

TEST_CASE("3dmesh allgather grids follow SMPI: 12 is 2 x 2 x 3, 9 is 3 x 3 x 1, 5 is 1 x 1 x 5",
          "[algorithms][allgather][3dmesh]") {
  // Rank 0 of 12: row 1, column 2, planes 4 and 8 (rotated order).
  CHECK(testing::traffic(mesh(12, 120))[0].send_peers == std::vector<core::Rank>{1, 2, 4, 8});
  CHECK(testing::traffic(mesh(12, 120))[6].send_peers == std::vector<core::Rank>{7, 4, 10, 2});
  CHECK(testing::traffic(mesh(9, 90))[4].send_peers == std::vector<core::Rank>{3, 5, 1, 7});
  CHECK(testing::traffic(mesh(5, 50))[3].send_peers == std::vector<core::Rank>{4, 0, 1, 2});
  // SMPI refuses 2 (its bound p/3 is 0); here it is the 1 x 1 x 2 grid.
  CHECK(testing::traffic(mesh(2, 20))[1].send_peers == std::vector<core::Rank>{0});
}

TEST_CASE("3dmesh allgather refuses rank counts SMPI cannot place",
          "[algorithms][allgather][3dmesh]") {
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(core::CollectiveKind::allgather, "smpi:3dmesh");
  CHECK(algo.name == "3dmesh");
  for (const std::uint32_t p : {10U, 11U, 14U}) {
    algorithms::Request req = allgather_request(p, 10ULL * p);
    CHECK_FALSE(reg.refusal(algo, req).empty());
  }
  CHECK_THROWS_WITH(reg.generate(algo, allgather_request(10, 100)),
                    "3dmesh: ranks must be x*x*z with floor(cbrt(p)) <= x <= p/3 to form SMPI's "
                    "3-D grid (got 10); use '2dmesh', 'direct' or 'ring'");
}

TEST_CASE("3dmesh allgather costs 2 a + (2X-3)(X+1) n/p b + a + (Z-1) X^2 n/p b",
          "[algorithms][allgather][3dmesh]") {
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(core::CollectiveKind::allgather, "3dmesh");
  const auto c = reg.cost(algo, allgather_request(8, 80));
  REQUIRE(c.has_value());
  CHECK(c->alpha_terms == 3.0);
  CHECK(c->beta_bytes == 30.0 + 40.0);
  const auto planes_only = reg.cost(algo, allgather_request(5, 50));
  REQUIRE(planes_only.has_value());
  CHECK(planes_only->alpha_terms == 1.0);
  CHECK(planes_only->beta_bytes == 40.0);
}
