#include "algorithm_test_support.hpp"
#include "collsim/algorithms/registry.hpp"

#include <catch2/catch.hpp>

using namespace collsim;

namespace {
algorithms::Request reduce_scatter_request(std::uint32_t p, std::uint64_t n) {
  algorithms::Request req = testing::allreduce_request(p, n);
  req.collective = core::CollectiveKind::reduce_scatter;
  return req;
}

core::Schedule pairwise(std::uint32_t p, std::uint64_t n) {
  const auto reg = algorithms::make_default_registry();
  return reg.generate(reg.find(core::CollectiveKind::reduce_scatter, "pairwise"),
                      reduce_scatter_request(p, n));
}
} // namespace

TEST_CASE("pairwise reduce-scatter sends block r+i to rank r+i in step i",
          "[algorithms][reduce_scatter][pairwise]") {
  for (const std::uint32_t p : {2U, 3U, 5U, 8U}) {
    const std::uint64_t n = 8ULL * p;
    const core::Schedule s = pairwise(p, n);
    const auto t = testing::traffic(s);
    for (core::Rank r = 0; r < p; ++r) {
      CAPTURE(p, r);
      REQUIRE(t[r].sends == p - 1);
      CHECK(t[r].reduced_bytes == (p - 1) * 8);
      for (std::uint32_t i = 1; i < p; ++i) {
        CHECK(t[r].send_peers[i - 1] == (r + i) % p);
        CHECK(t[r].send_lengths[i - 1] == 8);
      }
    }
    // Every send reads the destination's block; every combination writes the rank's own.
    for (core::Rank r = 0; r < p; ++r) {
      for (core::OpId id = s.rank_begin(r); id < s.rank_end(r); ++id) {
        const core::Rank owner = s.kind(id) == core::OpKind::send ? s.peer(id) : r;
        CHECK(s.target(id) == core::Range{core::Buffer::data, 8ULL * owner, 8});
      }
    }
  }
}

TEST_CASE("pairwise reduce-scatter runs its steps one after another, as MPICH's sendrecvs",
          "[algorithms][reduce_scatter][pairwise]") {
  const core::Schedule s = pairwise(4, 40);
  for (core::Rank r = 0; r < 4; ++r) {
    const core::OpId base = s.rank_begin(r);
    // Step i (i >= 2): send at 2(i-1), recv_reduce at 2(i-1)+1, both after recv_reduce 2(i-2)+1.
    for (std::uint32_t i = 2; i < 4; ++i) {
      const std::uint32_t previous = 2 * (i - 2) + 1;
      CHECK(std::vector<std::uint32_t>(s.deps(base + 2 * (i - 1)).begin(),
                                       s.deps(base + 2 * (i - 1)).end()) ==
            std::vector<std::uint32_t>{previous});
      CHECK(std::vector<std::uint32_t>(s.deps(base + 2 * (i - 1) + 1).begin(),
                                       s.deps(base + 2 * (i - 1) + 1).end()) ==
            std::vector<std::uint32_t>{previous});
    }
  }
  CHECK(s.op_count() == 4 * 6);
  CHECK(s.dep_count() == 4 * 4);
  CHECK(s.header().tmp_bytes == 0);
  CHECK(pairwise(1, 10).op_count() == 0);
}

TEST_CASE("pairwise reduce-scatter declares (p-1)(a + n/p b + n/p g) when p divides n",
          "[algorithms][reduce_scatter][pairwise]") {
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(core::CollectiveKind::reduce_scatter, "mpich:pairwise");
  CHECK(&reg.find(core::CollectiveKind::reduce_scatter, "smpi:mpich_pair") == &algo);
  const auto c = reg.cost(algo, reduce_scatter_request(5, 500));
  REQUIRE(c.has_value());
  CHECK(c->alpha_terms == 4.0);
  CHECK(c->beta_bytes == 400.0);
  CHECK(c->gamma_bytes == 400.0);
  CHECK_FALSE(reg.cost(algo, reduce_scatter_request(5, 501)).has_value());
}
