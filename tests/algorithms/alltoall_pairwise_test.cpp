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
core::Schedule pairwise(std::uint32_t p, std::uint64_t n) {
  const auto reg = algorithms::make_default_registry();
  return reg.generate(reg.find(core::CollectiveKind::alltoall, "pairwise"), alltoall_request(p, n));
}
} // namespace

TEST_CASE("pairwise alltoall sends one n/p block to each other rank, r+1 first",
          "[algorithms][alltoall][pairwise]") {
  for (const std::uint32_t p : {2U, 3U, 4U, 7U, 16U}) {
    const std::uint64_t n = 8ULL * p;
    const auto t = testing::traffic(pairwise(p, n));
    for (core::Rank r = 0; r < p; ++r) {
      CAPTURE(p, r);
      CHECK(t[r].sends == p - 1);
      CHECK(t[r].recvs == p - 1);
      CHECK(t[r].send_bytes == (p - 1) * 8ULL);
      CHECK(t[r].reduced_bytes == 0);
      for (std::uint32_t i = 1; i < p; ++i) {
        CHECK(t[r].send_peers[i - 1] == (r + i) % p);
        CHECK(t[r].send_lengths[i - 1] == 8);
      }
    }
  }
}

TEST_CASE("pairwise alltoall reserves p(2p-1) operations and 2p(p-2) dependencies",
          "[algorithms][alltoall][pairwise]") {
  for (const std::uint32_t p : {1U, 2U, 3U, 10U}) {
    const core::Schedule s = pairwise(p, 10ULL * p);
    CAPTURE(p);
    CHECK(s.op_count() == 1ULL * p * (2 * p - 1));
    CHECK(s.dep_count() == (p >= 2 ? 2ULL * p * (p - 2) : 0));
    CHECK(s.header().data_bytes == 20ULL * p);
  }
}

TEST_CASE("pairwise alltoall on one rank copies its block to the output half",
          "[algorithms][alltoall][pairwise]") {
  const core::Schedule s = pairwise(1, 6);
  REQUIRE(s.op_count() == 1);
  const core::Op op = s.op(0);
  CHECK(op.kind == core::OpKind::copy);
  CHECK(op.source == core::Range{core::Buffer::data, 0, 6});
  CHECK(op.target == core::Range{core::Buffer::data, 6, 6});
}

TEST_CASE("pairwise alltoall refuses sizes not divisible by the rank count",
          "[algorithms][alltoall][pairwise]") {
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(core::CollectiveKind::alltoall, "ompi:2");
  CHECK(algo.name == "pairwise");
  // SMPI's "ring" alltoall is this rotating exchange (algorithms.md 2.5), not a neighbour ring.
  CHECK(reg.find(core::CollectiveKind::alltoall, "smpi:ring").name == "pairwise");
  CHECK_THROWS_WITH(reg.generate(algo, alltoall_request(3, 10)),
                    "pairwise: alltoall needs bytes divisible by ranks");
}

TEST_CASE("pairwise alltoall costs (p-1)(a + n/p b)", "[algorithms][alltoall][pairwise]") {
  const auto reg = algorithms::make_default_registry();
  const auto c =
      reg.cost(reg.find(core::CollectiveKind::alltoall, "pairwise"), alltoall_request(5, 100));
  REQUIRE(c.has_value());
  CHECK(c->alpha_terms == 4.0);
  CHECK(c->beta_bytes == 80.0);
  CHECK(c->gamma_bytes == 0.0);
}
