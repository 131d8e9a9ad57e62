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
core::Schedule scatter_ring(std::uint32_t p, std::uint64_t n, core::Rank root) {
  const auto reg = algorithms::make_default_registry();
  return reg.generate(reg.find(core::CollectiveKind::bcast, "scatter_ring_allgather"),
                      bcast_request(p, n, root));
}
} // namespace

TEST_CASE("scatter_ring_allgather scatters binomially, then every rank sends p-1 blocks to its "
          "right neighbour",
          "[algorithms][bcast][scatter_ring_allgather]") {
  // p = 4, n = 8, root 1: relative rank v is rank (v + 1) mod 4; blocks of 2 bytes.
  const auto t = testing::traffic(scatter_ring(4, 8, 1));
  CHECK(t[1].send_peers == std::vector<core::Rank>{3, 2, 2, 2, 2});
  CHECK(t[1].send_lengths == std::vector<std::uint64_t>{4, 2, 2, 2, 2});
  CHECK(t[3].send_peers == std::vector<core::Rank>{0, 0, 0, 0});
  for (core::Rank r = 0; r < 4; ++r) {
    CAPTURE(r);
    CHECK(t[r].send_peers.back() == (r + 1) % 4);
  }
}

TEST_CASE("scatter_ring_allgather reserves exactly its operations",
          "[algorithms][bcast][scatter_ring_allgather]") {
  // p = 4 dividing n: scatter 6 operations and 1 forwarding dependency; ring 24 operations, 11
  // sends that wait for their block and 4 receives that overwrite blocks the scatter passed on.
  const core::Schedule s = scatter_ring(4, 8, 2);
  CHECK(s.op_count() == 30);
  CHECK(s.dep_count() == 16);
  // Fewer bytes than ranks: empty blocks are not sent.
  const auto t = testing::traffic(scatter_ring(4, 2, 0));
  std::uint64_t messages = 0;
  for (const auto& rank : t) {
    messages += rank.sends;
    for (const auto len : rank.send_lengths) {
      CHECK(len == 1);
    }
  }
  CHECK(messages == 1 + 2 * 3); // scatter 0 -> 1; each of blocks 0 and 1 crosses 3 links
}

TEST_CASE("scatter_ring_allgather's closed form is (lg p + p - 1) a + 2 (p-1)/p n b",
          "[algorithms][bcast][scatter_ring_allgather]") {
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(core::CollectiveKind::bcast, "smpi:scatter_LR_allgather");
  const auto c = reg.cost(algo, bcast_request(4, 8, 0));
  REQUIRE(c.has_value());
  CHECK(c->alpha_terms == 5.0);
  CHECK(c->beta_bytes == 12.0);
  CHECK_FALSE(reg.cost(algo, bcast_request(5, 10, 0)).has_value());
}
