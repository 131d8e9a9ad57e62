#include "algorithm_test_support.hpp"
#include "collsim/algorithms/registry.hpp"

#include <catch2/catch.hpp>

using namespace collsim;

namespace {
algorithms::Request alltoall_request(std::uint32_t p, std::uint64_t n) {
  algorithms::Request req = testing::allreduce_request(p, n);
  req.collective = core::CollectiveKind::alltoall;
  return req;
}
core::Schedule bruck(std::uint32_t p, std::uint64_t n) {
  const auto reg = algorithms::make_default_registry();
  return reg.generate(reg.find(core::CollectiveKind::alltoall, "bruck"), alltoall_request(p, n));
}
} // namespace

TEST_CASE("bruck alltoall sends lg p messages of n/2 bytes to r + 2^k on a power of two",
          "[algorithms][alltoall][bruck]") {
  const std::uint32_t p = 8;
  const auto t = testing::traffic(bruck(p, 64));
  for (core::Rank r = 0; r < p; ++r) {
    CAPTURE(r);
    CHECK(t[r].send_peers == std::vector<core::Rank>{(r + 1) % p, (r + 2) % p, (r + 4) % p});
    CHECK(t[r].send_lengths == std::vector<std::uint64_t>{32, 32, 32});
  }
}

TEST_CASE("bruck alltoall sends the blocks whose index has bit k set, on any p",
          "[algorithms][alltoall][bruck]") {
  // p = 5: round 0 carries blocks 1, 3; round 1 blocks 2, 3; round 2 block 4.
  const auto t = testing::traffic(bruck(5, 50));
  for (const auto& rank : t) {
    CHECK(rank.send_lengths == std::vector<std::uint64_t>{20, 20, 10});
  }
  const auto reg = algorithms::make_default_registry();
  const auto c =
      reg.cost(reg.find(core::CollectiveKind::alltoall, "mpich:brucks"), alltoall_request(5, 50));
  REQUIRE(c.has_value());
  CHECK(c->alpha_terms == 3.0);
  CHECK(c->beta_bytes == 50.0);
}

TEST_CASE("bruck alltoall reserves exactly its packing copies and dependencies",
          "[algorithms][alltoall][bruck]") {
  // p = 4, rank r != 0: own block, 2 rotation copies; round 0: 2 packs, send, recv, 2 unpacks;
  // round 1: pack, send, recv, unpack; 3 output copies = 16 operations (rank 0: one rotation copy).
  // Dependencies: round 0 packs 2 each (1 on rank 0), send 2, unpacks 2 each; round 1 pack 2,
  // send 1, recv 2, unpack 2; outputs 1 each = 20 (rank 0: 18).
  const core::Schedule s = bruck(4, 40);
  CHECK(s.op_count() == 15 + 3 * 16);
  CHECK(s.dep_count() == 18 + 3 * 20);
  CHECK(s.header().tmp_bytes == 120);
  CHECK(bruck(1, 7).op_count() == 1);
}

TEST_CASE("bruck alltoall refuses rank counts whose schedule would not fit, before generating",
          "[algorithms][alltoall][bruck]") {
  // The p - 1 output copies per rank alone make p(p-1) operations: 40000 ranks need more than
  // 2^30. The refusal names the exact count, computed in closed form.
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(core::CollectiveKind::alltoall, "bruck");
  algorithms::Request req = alltoall_request(40000, 40000);
  CHECK(reg.refusal(algo, req) ==
        "the schedule would need 4801279999 operations; a schedule holds at most 1073741824");
  for (const std::uint32_t p : {2U, 3U, 5U, 13U, 64U}) {
    CAPTURE(p);
    req = alltoall_request(p, 0);
    CHECK(reg.refusal(algo, req).empty());
  }
}
