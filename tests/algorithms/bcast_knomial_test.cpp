#include "algorithm_test_support.hpp"
#include "collsim/algorithms/registry.hpp"

#include <catch2/catch.hpp>

using namespace collsim;

namespace {
algorithms::Request bcast_request(std::uint32_t p, std::uint64_t n, core::Rank root,
                                  std::int64_t radix) {
  algorithms::Request req = testing::allreduce_request(p, n);
  req.collective = core::CollectiveKind::bcast;
  req.root = root;
  req.params["radix"] = radix;
  return req;
}
core::Schedule knomial(std::uint32_t p, std::uint64_t n, core::Rank root, std::int64_t radix) {
  const auto reg = algorithms::make_default_registry();
  return reg.generate(reg.find(core::CollectiveKind::bcast, "knomial"),
                      bcast_request(p, n, root, radix));
}
} // namespace

TEST_CASE("knomial bcast sends to radix-1 children per level, largest subtrees first",
          "[algorithms][bcast][knomial]") {
  // p = 16, radix 4: the root sends to 4, 8, 12, then 1, 2, 3; rank 4 to 5, 6, 7.
  const auto t = testing::traffic(knomial(16, 8, 0, 4));
  CHECK(t[0].send_peers == std::vector<core::Rank>{4, 8, 12, 1, 2, 3});
  CHECK(t[4].send_peers == std::vector<core::Rank>{5, 6, 7});
  CHECK(t[13].sends == 0);
  std::uint64_t messages = 0;
  for (const auto& rank : t) {
    messages += rank.sends;
  }
  CHECK(messages == 15);
}

TEST_CASE("knomial bcast with radix 2 is the binomial tree", "[algorithms][bcast][knomial]") {
  for (const std::uint32_t p : {2U, 6U, 13U}) {
    const auto reg = algorithms::make_default_registry();
    algorithms::Request req = bcast_request(p, 10, p / 2, 2);
    const auto k = testing::traffic(knomial(p, 10, p / 2, 2));
    req.params.clear();
    const auto b =
        testing::traffic(reg.generate(reg.find(core::CollectiveKind::bcast, "binomial"), req));
    for (core::Rank r = 0; r < p; ++r) {
      CAPTURE(p, r);
      CHECK(k[r].send_peers == b[r].send_peers);
    }
  }
}

TEST_CASE("knomial bcast's closed form log_k p a + log_k p (k-1) n b holds for p a power of k",
          "[algorithms][bcast][knomial]") {
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(core::CollectiveKind::bcast, "ompi:7");
  const auto c = reg.cost(algo, bcast_request(16, 10, 0, 4));
  REQUIRE(c.has_value());
  CHECK(c->alpha_terms == 2.0);
  CHECK(c->beta_bytes == 60.0);
  CHECK_FALSE(reg.cost(algo, bcast_request(15, 10, 0, 4)).has_value());
  const core::Schedule s = knomial(16, 10, 3, 4);
  CHECK(s.op_count() == 30);
  CHECK(s.dep_count() == 15 - 6); // every send but the root's waits for its receive
}
