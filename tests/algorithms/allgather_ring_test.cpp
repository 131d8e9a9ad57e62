#include "algorithm_test_support.hpp"
#include "collsim/algorithms/registry.hpp"

#include <catch2/catch.hpp>

using namespace collsim;

namespace {
algorithms::Request allgather_request(std::uint32_t p, std::uint64_t n) {
  algorithms::Request req = testing::allreduce_request(p, n);
  req.collective = core::CollectiveKind::allgather;
  return req;
}

core::Schedule ring(std::uint32_t p, std::uint64_t n) {
  const auto reg = algorithms::make_default_registry();
  return reg.generate(reg.find(core::CollectiveKind::allgather, "ring"), allgather_request(p, n));
}
} // namespace

TEST_CASE("ring allgather sends p-1 blocks of n/p bytes per rank to its right neighbour",
          "[algorithms][allgather][ring]") {
  for (const std::uint32_t p : {2U, 3U, 4U, 7U, 16U}) {
    const std::uint64_t n = 12ULL * p;
    const auto t = testing::traffic(ring(p, n));
    for (core::Rank r = 0; r < p; ++r) {
      CAPTURE(p, r);
      CHECK(t[r].sends == p - 1);
      CHECK(t[r].recvs == p - 1);
      CHECK(t[r].send_bytes == (p - 1) * (n / p));
      CHECK(t[r].reduced_bytes == 0);
      for (std::size_t i = 0; i < t[r].send_peers.size(); ++i) {
        CHECK(t[r].send_peers[i] == (r + 1) % p);
        CHECK(t[r].send_lengths[i] == n / p);
      }
    }
  }
}

TEST_CASE("ring allgather forwards its own block first, then the blocks of r-1, r-2, ...",
          "[algorithms][allgather][ring]") {
  // 10 bytes on 4 ranks: blocks [0,3) [3,6) [6,8) [8,10).
  const core::Schedule s = ring(4, 10);
  const core::Rank r = 1;
  const std::uint64_t expected_offsets[] = {3, 0, 8};
  const std::uint64_t expected_lengths[] = {3, 3, 2};
  std::size_t sends = 0;
  for (core::OpId id = s.rank_begin(r); id < s.rank_end(r); ++id) {
    if (s.kind(id) == core::OpKind::send) {
      CHECK(s.target(id).offset == expected_offsets[sends]);
      CHECK(s.length(id) == expected_lengths[sends]);
      ++sends;
    }
  }
  CHECK(sends == 3);
}

TEST_CASE("ring allgather keeps zero-length messages when there are fewer bytes than ranks",
          "[algorithms][allgather][ring]") {
  for (const auto& rank : testing::traffic(ring(5, 2))) {
    CHECK(rank.sends == 4);
  }
}

TEST_CASE("ring allgather reserves exactly 2(p-1) operations and p-2 dependencies per rank",
          "[algorithms][allgather][ring]") {
  for (const std::uint32_t p : {1U, 2U, 3U, 10U, 33U}) {
    const core::Schedule s = ring(p, 1000);
    CAPTURE(p);
    CHECK(s.op_count() == (p > 1 ? 2ULL * p * (p - 1) : 0));
    CHECK(s.dep_count() == (p > 1 ? 1ULL * p * (p - 2) : 0));
    CHECK(s.header().tmp_bytes == 0);
  }
}

TEST_CASE("ring allgather declares (p-1)a + (p-1)/p n b only when p divides n",
          "[algorithms][allgather][ring]") {
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(core::CollectiveKind::allgather, "ompi:4");
  CHECK(algo.name == "ring");
  CHECK(&reg.find(core::CollectiveKind::allgather, "smpi:NTSLR") == &algo);
  const auto c = reg.cost(algo, allgather_request(4, 4096));
  REQUIRE(c.has_value());
  CHECK(c->alpha_terms == 3.0);
  CHECK(c->beta_bytes == 3.0 * 1024);
  CHECK(c->gamma_bytes == 0.0);
  CHECK_FALSE(reg.cost(algo, allgather_request(3, 4096)).has_value());
}
