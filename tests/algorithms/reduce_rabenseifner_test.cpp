#include "algorithm_test_support.hpp"
#include "collsim/algorithms/registry.hpp"

#include <catch2/catch.hpp>

using namespace collsim;

namespace {
algorithms::Request reduce_request(std::uint32_t p, std::uint64_t n, core::Rank root) {
  algorithms::Request req = testing::allreduce_request(p, n);
  req.collective = core::CollectiveKind::reduce;
  req.root = root;
  return req;
}
core::Schedule rabenseifner(std::uint32_t p, std::uint64_t n, core::Rank root) {
  const auto reg = algorithms::make_default_registry();
  return reg.generate(reg.find(core::CollectiveKind::reduce, "rabenseifner"),
                      reduce_request(p, n, root));
}
} // namespace

TEST_CASE("rabenseifner reduce halves the vector while doubling the distance, then gathers it",
          "[algorithms][reduce][rabenseifner]") {
  // p = 8, n = 64, root 0: rank 1 sends 32, 16, 8 bytes to 0, 3, 5, receives 8 and 16 back from
  // 5 and 3 in the gather, and sends its 32-byte window to the root.
  const auto t = testing::traffic(rabenseifner(8, 64, 0));
  CHECK(t[1].send_peers == std::vector<core::Rank>{0, 3, 5, 0});
  CHECK(t[1].send_lengths == std::vector<std::uint64_t>{32, 16, 8, 32});
  CHECK(t[0].reduced_bytes == 32 + 16 + 8);
  CHECK(t[0].recv_bytes == 2 * 56);
  std::uint64_t messages = 0;
  for (const auto& rank : t) {
    messages += rank.sends;
  }
  CHECK(messages == 8 * 3 + 7);
}

TEST_CASE("rabenseifner reduce hands the result to a root the fold excluded",
          "[algorithms][reduce][rabenseifner]") {
  // p = 6: ranks 0-1 and 2-3 fold; root 3 is excluded, so rank 2 gathers and sends it all on.
  const auto t = testing::traffic(rabenseifner(6, 60, 3));
  CHECK(t[2].send_peers.back() == 3);
  CHECK(t[2].send_lengths.back() == 60);
  CHECK(t[3].recvs == 2);
  CHECK(t[3].send_peers == std::vector<core::Rank>{2, 2});
}

TEST_CASE("rabenseifner reduce uses one scratch vector and reserves exactly",
          "[algorithms][reduce][rabenseifner]") {
  // p = 4: 3 ops per reduce-scatter step and rank, 3 gather messages (6 ops). Dependencies: per
  // rank, step 0's reduction and step 1's send, receive and reduction (4); in the gather, ranks 3
  // and 2 send at once (1 each, the last reduction), rank 1 receives from 3 (1) and sends to 0
  // (2), rank 0 receives twice (1 each: the reduce-scatter send that read those bytes).
  const core::Schedule s = rabenseifner(4, 40, 0);
  CHECK(s.op_count() == 4 * 6 + 6);
  CHECK(s.dep_count() == 4 * 4 + 1 + 1 + 2 + (1 + 2));
  CHECK(s.header().tmp_bytes == 40);
}

TEST_CASE("rabenseifner reduce's closed form holds for p a power of two dividing n",
          "[algorithms][reduce][rabenseifner]") {
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(core::CollectiveKind::reduce, "mpich:reduce_scatter_gather");
  auto c = reg.cost(algo, reduce_request(8, 64, 0));
  REQUIRE(c.has_value());
  CHECK(c->alpha_terms == 6.0);
  CHECK(c->beta_bytes == 112.0);
  CHECK(c->gamma_bytes == 56.0);
  CHECK_FALSE(reg.cost(algo, reduce_request(6, 64, 0)).has_value()); // the fold overlaps
  CHECK_FALSE(reg.cost(algo, reduce_request(8, 60, 0)).has_value());
}
