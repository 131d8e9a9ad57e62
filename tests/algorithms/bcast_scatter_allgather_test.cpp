#include "algorithm_test_support.hpp"
#include "collsim/algorithms/registry.hpp"

#include <catch2/catch.hpp>

using namespace collsim;

namespace {
algorithms::Request bcast_request(std::uint32_t p, std::uint64_t n, core::Rank root) {
  algorithms::Request req = testing::allreduce_request(p, n);
  req.collective = core::CollectiveKind::bcast;
  req.root = root;
  return req;
}
core::Schedule scatter_allgather(std::uint32_t p, std::uint64_t n, core::Rank root) {
  const auto reg = algorithms::make_default_registry();
  return reg.generate(reg.find(core::CollectiveKind::bcast, "scatter_allgather"),
                      bcast_request(p, n, root));
}
} // namespace

TEST_CASE("scatter_allgather halves the vector down a binomial tree, then doubles it back",
          "[algorithms][bcast][scatter_allgather]") {
  // p = 8, n = 64: blocks of 8. The root scatters 32, 16, 8 bytes, then exchanges 8, 16, 32.
  const auto t = testing::traffic(scatter_allgather(8, 64, 0));
  CHECK(t[0].send_peers == std::vector<core::Rank>{4, 2, 1, 1, 2, 4});
  CHECK(t[0].send_lengths == std::vector<std::uint64_t>{32, 16, 8, 8, 16, 32});
  for (core::Rank r = 1; r < 8; ++r) {
    CAPTURE(r);
    // Every rank's allgather sends 8, 16 and 32 bytes to r^1, r^2, r^4 (after its scatter sends).
    const auto& peers = t[r].send_peers;
    REQUIRE(peers.size() >= 3);
    CHECK(std::vector<core::Rank>(peers.end() - 3, peers.end()) ==
          std::vector<core::Rank>{r ^ 1U, r ^ 2U, r ^ 4U});
    CHECK(t[r].recv_bytes == 64 - 8 + 8 * (r & (~r + 1U) & 7U)); // scatter subtree sent again
  }
}

TEST_CASE("scatter_allgather passes missing blocks on inside a subtree when p is not a power of "
          "two",
          "[algorithms][bcast][scatter_allgather]") {
  // p = 5, n = 10: blocks of 2. At mask 4 only rank 0 has a partner (4); it passes block 4 to 2
  // and 1, and 2 passes it to 3 (MPICH's recursive-halving fix-up).
  const auto t = testing::traffic(scatter_allgather(5, 10, 0));
  CHECK(t[0].send_peers == std::vector<core::Rank>{4, 2, 1, 1, 2, 4, 2, 1});
  CHECK(t[0].send_lengths == std::vector<std::uint64_t>{2, 4, 2, 2, 4, 8, 2, 2});
  CHECK(t[2].send_peers.back() == 3);
  CHECK(t[2].send_lengths.back() == 2);
  CHECK(t[4].send_peers == std::vector<core::Rank>{0});
}

TEST_CASE("scatter_allgather reserves exactly its operations and skips empty blocks",
          "[algorithms][bcast][scatter_allgather]") {
  // p = 8 dividing n: scatter 2(p-1) operations, allgather 2 p lg p; dependencies: 4 scatter
  // forwards, 45 allgather sends (each waits for every earlier receive), 7 receives that
  // overwrite blocks the scatter passed on.
  const core::Schedule s = scatter_allgather(8, 64, 3);
  CHECK(s.op_count() == 62);
  CHECK(s.dep_count() == 56);
  CHECK(s.header().tmp_bytes == 0);
  CHECK(scatter_allgather(8, 0, 3).op_count() == 0);
  CHECK(scatter_allgather(1, 100, 0).op_count() == 0);
}

TEST_CASE("scatter_allgather's closed form is 2 lg p a + 2 (p-1)/p n b for p a power of two",
          "[algorithms][bcast][scatter_allgather]") {
  const auto reg = algorithms::make_default_registry();
  const auto& algo =
      reg.find(core::CollectiveKind::bcast, "mpich:scatter_recursive_doubling_allgather");
  const auto c = reg.cost(algo, bcast_request(8, 64, 0));
  REQUIRE(c.has_value());
  CHECK(c->alpha_terms == 6.0);
  CHECK(c->beta_bytes == 112.0);
  CHECK_FALSE(reg.cost(algo, bcast_request(6, 60, 0)).has_value());
  CHECK_FALSE(reg.cost(algo, bcast_request(8, 60, 0)).has_value());
}
