#include "algorithm_test_support.hpp"
#include "collsim/algorithms/registry.hpp"

#include <catch2/catch.hpp>

using namespace collsim;

namespace {
algorithms::Request gather_request(std::uint32_t p, std::uint64_t n, core::Rank root) {
  algorithms::Request req = testing::allreduce_request(p, n);
  req.collective = core::CollectiveKind::gather;
  req.root = root;
  return req;
}
core::Schedule binomial(std::uint32_t p, std::uint64_t n, core::Rank root) {
  const auto reg = algorithms::make_default_registry();
  return reg.generate(reg.find(core::CollectiveKind::gather, "binomial"),
                      gather_request(p, n, root));
}
} // namespace

TEST_CASE("binomial gather forwards each subtree once, 2^k blocks in step k",
          "[algorithms][gather][binomial]") {
  // p = 8, root 0, blocks of 4 bytes: 1 -> 0 (4), 3 -> 2 (4), 2 -> 0 (8), 5 -> 4, 7 -> 6, 6 -> 4
  // (8), 4 -> 0 (16).
  const auto t = testing::traffic(binomial(8, 32, 0));
  CHECK(t[0].sends == 0);
  CHECK(t[0].recvs == 3);
  CHECK(t[0].recv_bytes == 28);
  CHECK(t[1].send_peers == std::vector<core::Rank>{0});
  CHECK(t[2].send_peers == std::vector<core::Rank>{0});
  CHECK(t[2].send_lengths == std::vector<std::uint64_t>{8});
  CHECK(t[4].send_lengths == std::vector<std::uint64_t>{16});
  CHECK(t[6].send_peers == std::vector<core::Rank>{4});
  std::uint64_t messages = 0;
  for (const auto& rank : t) {
    messages += rank.sends;
  }
  CHECK(messages == 7);
}

TEST_CASE("binomial gather numbers ranks relative to the root", "[algorithms][gather][binomial]") {
  // p = 6, root 4: relative rank v is rank (v + 4) mod 6. Relative 1 -> 0, 3 -> 2, 2 -> 0,
  // 5 -> 4, 4 -> 0.
  const auto t = testing::traffic(binomial(6, 60, 4));
  CHECK(t[4].recvs == 3);
  CHECK(t[5].send_peers == std::vector<core::Rank>{4}); // v1
  CHECK(t[1].send_peers == std::vector<core::Rank>{0}); // v3 -> v2
  CHECK(t[0].send_peers == std::vector<core::Rank>{4}); // v2, with v3's block
  CHECK(t[0].send_lengths == std::vector<std::uint64_t>{20});
  CHECK(t[2].send_peers == std::vector<core::Rank>{4}); // v4, with v5's block
}

TEST_CASE("binomial gather unpacks the one subtree that wraps past the last rank",
          "[algorithms][gather][binomial]") {
  // p = 4, root 1: relative ranks 2, 3 are ranks 3, 0, whose blocks are not adjacent in data.
  const core::Schedule s = binomial(4, 40, 1);
  std::uint64_t copies = 0;
  for (core::OpId id = s.rank_begin(1); id < s.rank_end(1); ++id) {
    copies += s.kind(id) == core::OpKind::copy ? 1 : 0;
  }
  CHECK(copies == 2);
  CHECK(s.header().tmp_bytes == 40);
}

TEST_CASE("binomial gather reserves exactly the operations and dependencies it adds",
          "[algorithms][gather][binomial]") {
  // root 0, p = 8: leaves 1, 3, 5, 7 send (1 op); 2, 6 copy + recv + send (3 ops, 2 deps); 4 copy
  // + 2 recvs + send (4 ops, 3 deps); the root receives 3 times.
  const core::Schedule s = binomial(8, 64, 0);
  CHECK(s.op_count() == 4 + 6 + 4 + 3);
  CHECK(s.dep_count() == 4 + 3);
  CHECK(binomial(1, 64, 0).op_count() == 0);
}

TEST_CASE("binomial gather declares lg p a + (p-1)/p n b for powers of two",
          "[algorithms][gather][binomial]") {
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(core::CollectiveKind::gather, "mpich:binomial");
  const auto c = reg.cost(algo, gather_request(8, 64, 3));
  REQUIRE(c.has_value());
  CHECK(c->alpha_terms == 3.0);
  CHECK(c->beta_bytes == 56.0);
  CHECK_FALSE(reg.cost(algo, gather_request(6, 60, 0)).has_value());
  CHECK_FALSE(reg.cost(algo, gather_request(8, 60, 0)).has_value());
}
