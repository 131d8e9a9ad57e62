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

core::Schedule ring(std::uint32_t p, std::uint64_t n) {
  const auto reg = algorithms::make_default_registry();
  return reg.generate(reg.find(core::CollectiveKind::reduce_scatter, "ring"),
                      reduce_scatter_request(p, n));
}
} // namespace

TEST_CASE("ring reduce-scatter sends and combines p-1 blocks of n/p bytes per rank",
          "[algorithms][reduce_scatter][ring]") {
  for (const std::uint32_t p : {2U, 3U, 4U, 7U, 16U}) {
    const std::uint64_t n = 12ULL * p;
    const auto t = testing::traffic(ring(p, n));
    for (core::Rank r = 0; r < p; ++r) {
      CAPTURE(p, r);
      CHECK(t[r].sends == p - 1);
      CHECK(t[r].recvs == p - 1);
      CHECK(t[r].send_bytes == (p - 1) * (n / p));
      CHECK(t[r].reduced_bytes == (p - 1) * (n / p));
      for (std::size_t i = 0; i < t[r].send_peers.size(); ++i) {
        CHECK(t[r].send_peers[i] == (r + 1) % p);
        CHECK(t[r].send_lengths[i] == n / p);
      }
    }
  }
}

TEST_CASE("ring reduce-scatter starts with block r-1 and combines block r last",
          "[algorithms][reduce_scatter][ring]") {
  // 10 bytes on 4 ranks: blocks [0,3) [3,6) [6,8) [8,10). Rank 2 sends blocks 1, 0, 3 and
  // combines blocks 0, 3, 2.
  const core::Schedule s = ring(4, 10);
  std::vector<std::uint64_t> sent;
  std::vector<std::uint64_t> combined;
  for (core::OpId id = s.rank_begin(2); id < s.rank_end(2); ++id) {
    (s.kind(id) == core::OpKind::send ? sent : combined).push_back(s.target(id).offset);
  }
  CHECK(sent == std::vector<std::uint64_t>{3, 0, 8});
  CHECK(combined == std::vector<std::uint64_t>{0, 8, 6});
}

TEST_CASE("ring reduce-scatter reserves exactly 2(p-1) operations and p-2 dependencies per rank",
          "[algorithms][reduce_scatter][ring]") {
  for (const std::uint32_t p : {1U, 2U, 3U, 10U, 33U}) {
    const core::Schedule s = ring(p, 1000);
    CAPTURE(p);
    CHECK(s.op_count() == (p > 1 ? 2ULL * p * (p - 1) : 0));
    CHECK(s.dep_count() == (p > 1 ? 1ULL * p * (p - 2) : 0));
    CHECK(s.header().tmp_bytes == 0);
  }
}

TEST_CASE("ring reduce-scatter declares (p-1)(a + n/p b + n/p g) only when p divides n",
          "[algorithms][reduce_scatter][ring]") {
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(core::CollectiveKind::reduce_scatter, "ompi:3");
  CHECK(algo.name == "ring");
  CHECK(&reg.find(core::CollectiveKind::reduce_scatter, "smpi:ompi_ring") == &algo);
  const auto c = reg.cost(algo, reduce_scatter_request(8, 8192));
  REQUIRE(c.has_value());
  CHECK(c->alpha_terms == 7.0);
  CHECK(c->beta_bytes == 7.0 * 1024);
  CHECK(c->gamma_bytes == 7.0 * 1024);
  CHECK_FALSE(reg.cost(algo, reduce_scatter_request(3, 4096)).has_value());
}
