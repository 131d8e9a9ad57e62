#include "algorithm_test_support.hpp"
#include "collsim/algorithms/registry.hpp"

#include <catch2/catch.hpp>

using namespace collsim;

namespace {
algorithms::Request scatter_request(std::uint32_t p, std::uint64_t n, core::Rank root) {
  algorithms::Request req = testing::allreduce_request(p, n);
  req.collective = core::CollectiveKind::scatter;
  req.root = root;
  return req;
}
core::Schedule binomial(std::uint32_t p, std::uint64_t n, core::Rank root) {
  const auto reg = algorithms::make_default_registry();
  return reg.generate(reg.find(core::CollectiveKind::scatter, "binomial"),
                      scatter_request(p, n, root));
}
} // namespace

TEST_CASE("binomial scatter sends half the data first, then halves of the rest",
          "[algorithms][scatter][binomial]") {
  // p = 8, root 0, blocks of 4 bytes: 0 -> 4 (16), 2 (8), 1 (4); 4 -> 6 (8), 5 (4); 2 -> 3;
  // 6 -> 7.
  const auto t = testing::traffic(binomial(8, 32, 0));
  CHECK(t[0].send_peers == std::vector<core::Rank>{4, 2, 1});
  CHECK(t[0].send_lengths == std::vector<std::uint64_t>{16, 8, 4});
  CHECK(t[4].send_peers == std::vector<core::Rank>{6, 5});
  CHECK(t[4].send_lengths == std::vector<std::uint64_t>{8, 4});
  CHECK(t[2].send_peers == std::vector<core::Rank>{3});
  CHECK(t[7].sends == 0);
  CHECK(t[7].recv_bytes == 4);
  std::uint64_t messages = 0;
  for (const auto& rank : t) {
    messages += rank.sends;
  }
  CHECK(messages == 7);
  CHECK(t[0].recvs == 0);
}

TEST_CASE("binomial scatter numbers ranks relative to the root, on any p",
          "[algorithms][scatter][binomial]") {
  // p = 6, root 2: relative v is rank (v + 2) mod 6. The root sends v4..v5 (ranks 0, 1: 20 bytes)
  // to rank 0, v2..v3 (ranks 4, 5) to rank 4, v1 to rank 3.
  const auto t = testing::traffic(binomial(6, 60, 2));
  CHECK(t[2].send_peers == std::vector<core::Rank>{0, 4, 3});
  CHECK(t[2].send_lengths == std::vector<std::uint64_t>{20, 20, 10});
  CHECK(t[0].send_peers == std::vector<core::Rank>{1});
  CHECK(t[4].send_peers == std::vector<core::Rank>{5});
}

TEST_CASE("binomial scatter packs the one subtree that wraps past the last rank",
          "[algorithms][scatter][binomial]") {
  // p = 4, root 1: relative ranks 2, 3 are ranks 3, 0.
  const core::Schedule s = binomial(4, 40, 1);
  const auto t = testing::traffic(s);
  CHECK(t[1].send_peers == std::vector<core::Rank>{3, 2});
  CHECK(t[1].send_lengths == std::vector<std::uint64_t>{20, 10});
  CHECK(s.op_count() - (s.rank_end(1) - s.rank_begin(1)) == 1 + 3 + 1); // v1, v2, v3
  CHECK(s.rank_end(1) - s.rank_begin(1) == 4);                          // two copies, two sends
}

TEST_CASE("binomial scatter reserves exactly the operations and dependencies it adds",
          "[algorithms][scatter][binomial]") {
  // root 0, p = 8: leaves 1, 3, 5, 7 receive; 2, 6 recv + send + copy; 4 recv + 2 sends + copy;
  // the root sends 3 times.
  const core::Schedule s = binomial(8, 64, 0);
  CHECK(s.op_count() == 4 + 6 + 4 + 3);
  CHECK(s.dep_count() == 4 + 3);
  CHECK(binomial(1, 64, 0).op_count() == 0);
}

TEST_CASE("binomial scatter declares lg p a + (p-1)/p n b for powers of two",
          "[algorithms][scatter][binomial]") {
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(core::CollectiveKind::scatter, "ompi:2");
  const auto c = reg.cost(algo, scatter_request(16, 160, 5));
  REQUIRE(c.has_value());
  CHECK(c->alpha_terms == 4.0);
  CHECK(c->beta_bytes == 150.0);
  CHECK_FALSE(reg.cost(algo, scatter_request(5, 50, 0)).has_value());
}
