#include "algorithm_test_support.hpp"
#include "collsim/algorithms/registry.hpp"
#include "collsim/core/errors.hpp"

#include <catch2/catch.hpp>

using namespace collsim;

namespace {
algorithms::Request alltoall_request(std::uint32_t p, std::uint64_t n) {
  algorithms::Request req = testing::allreduce_request(p, n);
  req.collective = core::CollectiveKind::alltoall;
  return req;
}
core::Schedule rdb(std::uint32_t p, std::uint64_t n) {
  const auto reg = algorithms::make_default_registry();
  return reg.generate(reg.find(core::CollectiveKind::alltoall, "recursive_doubling"),
                      alltoall_request(p, n));
}
} // namespace

TEST_CASE("recursive_doubling alltoall sends n/2 bytes to r XOR 2^k in each of lg p steps",
          "[algorithms][alltoall][recursive_doubling]") {
  const core::Schedule s = rdb(8, 64);
  const auto t = testing::traffic(s);
  for (core::Rank r = 0; r < 8; ++r) {
    CAPTURE(r);
    CHECK(t[r].send_peers == std::vector<core::Rank>{r ^ 1U, r ^ 2U, r ^ 4U});
    CHECK(t[r].send_lengths == std::vector<std::uint64_t>{32, 32, 32});
  }
  CHECK(s.header().tmp_bytes == 3 * 64);
  // Per rank: 3 steps of 4 pack copies, a send and a receive, then 8 final copies.
  CHECK(s.op_count() == 8 * (3 * 6 + 8));
}

TEST_CASE("recursive_doubling alltoall refuses rank counts that are not powers of two",
          "[algorithms][alltoall][recursive_doubling]") {
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(core::CollectiveKind::alltoall, "recursive_doubling");
  CHECK(algo.name == "recursive_doubling");
  CHECK_THROWS_WITH(reg.generate(algo, alltoall_request(6, 60)),
                    "recursive_doubling: ranks must be a power of two (got 6); use 'bruck' or "
                    "'pairwise' for other rank counts");
  CHECK_THROWS_WITH(reg.generate(algo, alltoall_request(4, 10)),
                    "recursive_doubling: alltoall needs bytes divisible by ranks");
}

TEST_CASE("recursive_doubling alltoall costs lg p a + (lg p / 2) n b",
          "[algorithms][alltoall][recursive_doubling]") {
  const auto reg = algorithms::make_default_registry();
  const auto c = reg.cost(reg.find(core::CollectiveKind::alltoall, "recursive_doubling"),
                          alltoall_request(8, 64));
  REQUIRE(c.has_value());
  CHECK(c->alpha_terms == 3.0);
  CHECK(c->beta_bytes == 96.0);
}
