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
  return reg.generate(reg.find(core::CollectiveKind::allgather, "2dmesh"), allgather_request(p, n));
}
} // namespace

TEST_CASE("2dmesh allgather on 12 ranks uses SMPI's 3 x 4 grid: rows of 4, then columns of 3",
          "[algorithms][allgather][2dmesh]") {
  const auto t = testing::traffic(mesh(12, 120));
  // Rank 5 is row 1, column 1: its row is 4..7, its column 1, 5, 9.
  CHECK(t[5].send_peers == std::vector<core::Rank>{4, 6, 7, 1, 9});
  CHECK(t[5].send_lengths == std::vector<std::uint64_t>{10, 10, 10, 40, 40});
  CHECK(t[5].recv_bytes == 110);
  CHECK(t[0].send_peers == std::vector<core::Rank>{1, 2, 3, 4, 8});
}

TEST_CASE("2dmesh allgather grids follow SMPI: 8 is 2 x 4, 10 is 2 x 5, 2 and 3 are one row",
          "[algorithms][allgather][2dmesh]") {
  CHECK(testing::traffic(mesh(8, 80))[0].send_peers == std::vector<core::Rank>{1, 2, 3, 4});
  CHECK(testing::traffic(mesh(10, 100))[7].send_peers == std::vector<core::Rank>{5, 6, 8, 9, 2});
  CHECK(testing::traffic(mesh(3, 30))[1].send_peers == std::vector<core::Rank>{0, 2});
  CHECK(mesh(1, 10).op_count() == 0);
}

TEST_CASE("2dmesh allgather refuses a prime rank count >= 5 as SMPI does",
          "[algorithms][allgather][2dmesh]") {
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(core::CollectiveKind::allgather, "smpi:2dmesh");
  CHECK(algo.name == "2dmesh");
  CHECK_THROWS_WITH(reg.generate(algo, allgather_request(7, 70)),
                    "2dmesh: ranks must have a divisor between floor(sqrt(p)) and p/2 to form "
                    "SMPI's X x Y grid (got 7, a prime); use 'direct' or 'ring'");
}

TEST_CASE("2dmesh allgather costs 2 a + ((2Y-3) + (2X-3) Y) n/p b",
          "[algorithms][allgather][2dmesh]") {
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(core::CollectiveKind::allgather, "2dmesh");
  const auto c = reg.cost(algo, allgather_request(12, 120));
  REQUIRE(c.has_value());
  CHECK(c->alpha_terms == 2.0);
  CHECK(c->beta_bytes == (5.0 + 3.0 * 4.0) * 10.0);
  const auto one_row = reg.cost(algo, allgather_request(3, 30));
  REQUIRE(one_row.has_value());
  CHECK(one_row->alpha_terms == 1.0);
  CHECK(one_row->beta_bytes == 30.0);
  CHECK_FALSE(reg.cost(algo, allgather_request(12, 121)).has_value());
}
