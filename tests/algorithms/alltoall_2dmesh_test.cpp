#include "algorithm_test_support.hpp"
#include "collsim/algorithms/registry.hpp"
#include "collsim/core/errors.hpp"
#include "collsim/core/verify.hpp"

#include <catch2/catch.hpp>

using namespace collsim;

namespace {
algorithms::Request alltoall_request(std::uint32_t p, std::uint64_t n) {
  algorithms::Request req = testing::allreduce_request(p, n);
  req.collective = core::CollectiveKind::alltoall;
  return req;
}
core::Schedule mesh(std::uint32_t p, std::uint64_t n) {
  const auto reg = algorithms::make_default_registry();
  return reg.generate(reg.find(core::CollectiveKind::alltoall, "2dmesh"), alltoall_request(p, n));
}
} // namespace

TEST_CASE("2dmesh alltoall combines X blocks per row member, then Y blocks per column member",
          "[algorithms][alltoall][2dmesh]") {
  // p = 6: SMPI's grid is 2 x 3; rank 4 is row 1 (3..5), column 1 (1, 4).
  const auto t = testing::traffic(mesh(6, 60));
  CHECK(t[4].send_peers == std::vector<core::Rank>{3, 5, 1});
  CHECK(t[4].send_lengths == std::vector<std::uint64_t>{20, 20, 30});
  CHECK(t[4].recv_bytes == 70);
  // p = 12 (3 x 4): X + Y - 2 = 5 messages per rank instead of 11.
  const auto t12 = testing::traffic(mesh(12, 120));
  CHECK(t12[0].send_peers == std::vector<core::Rank>{1, 2, 3, 4, 8});
  CHECK(t12[0].send_lengths == std::vector<std::uint64_t>{30, 30, 30, 40, 40});
}

TEST_CASE("2dmesh alltoall is correct and race-free on every rank count SMPI accepts up to 40",
          "[algorithms][alltoall][2dmesh]") {
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(core::CollectiveKind::alltoall, "smpi:2dmesh");
  CHECK(algo.name == "2dmesh");
  for (std::uint32_t p = 1; p <= 40; ++p) {
    algorithms::Request req = alltoall_request(p, 3ULL * p);
    if (!reg.refusal(algo, req).empty()) {
      bool prime = p >= 2;
      for (std::uint32_t d = 2; d * d <= p; ++d) {
        prime = prime && p % d != 0;
      }
      CHECK(prime); // only primes (>= 5) are refused
      continue;
    }
    CAPTURE(p);
    CHECK(core::check_semantics(reg.generate(algo, req)).summary() == "");
  }
  CHECK_THROWS_WITH(reg.generate(algo, alltoall_request(7, 70)),
                    "2dmesh: ranks must have a divisor between floor(sqrt(p)) and p/2 to form "
                    "SMPI's X x Y grid (got 7, a prime); use 'pairwise' or 'bruck'");
}

TEST_CASE("2dmesh alltoall costs a + (2Y-3) X n/p b + a + (2X-3) Y n/p b",
          "[algorithms][alltoall][2dmesh]") {
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(core::CollectiveKind::alltoall, "2dmesh");
  const auto c = reg.cost(algo, alltoall_request(6, 60));
  REQUIRE(c.has_value());
  CHECK(c->alpha_terms == 2.0);
  CHECK(c->beta_bytes == 3.0 * 2.0 * 10.0 + 1.0 * 3.0 * 10.0);
  const auto one_row = reg.cost(algo, alltoall_request(3, 30));
  REQUIRE(one_row.has_value());
  CHECK(one_row->alpha_terms == 1.0);
  CHECK(one_row->beta_bytes == 30.0);
}
