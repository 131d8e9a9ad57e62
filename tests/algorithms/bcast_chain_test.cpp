#include "algorithm_test_support.hpp"
#include "collsim/algorithms/registry.hpp"

#include <catch2/catch.hpp>

using namespace collsim;

namespace {
algorithms::Request bcast_request(std::uint32_t p, std::uint64_t n, core::Rank root,
                                  std::int64_t chains, std::int64_t segment) {
  algorithms::Request req = testing::allreduce_request(p, n);
  req.collective = core::CollectiveKind::bcast;
  req.root = root;
  req.params["chains"] = chains;
  req.params["segment_size"] = segment;
  return req;
}
core::Schedule chain(const algorithms::Request& req) {
  const auto reg = algorithms::make_default_registry();
  return reg.generate(reg.find(core::CollectiveKind::bcast, "chain"), req);
}
} // namespace

TEST_CASE("chain bcast splits ranks 1..p-1 into chains of consecutive ranks, longer ones first",
          "[algorithms][bcast][chain]") {
  // p = 10, 4 chains: 1-2-3, 4-5, 6-7, 8-9.
  const auto t = testing::traffic(chain(bcast_request(10, 8, 0, 4, 0)));
  CHECK(t[0].send_peers == std::vector<core::Rank>{1, 4, 6, 8});
  CHECK(t[1].send_peers == std::vector<core::Rank>{2});
  CHECK(t[2].send_peers == std::vector<core::Rank>{3});
  CHECK(t[4].send_peers == std::vector<core::Rank>{5});
  CHECK(t[6].send_peers == std::vector<core::Rank>{7});
  CHECK(t[8].send_peers == std::vector<core::Rank>{9});
  for (const core::Rank r : {3U, 5U, 7U, 9U}) {
    CHECK(t[r].sends == 0);
  }
}

TEST_CASE("chain bcast sends each segment to every chain head, and caps chains at p-1",
          "[algorithms][bcast][chain]") {
  // Root 1 of 3 with 4 chains: two chains of one rank each (2 and 0), two segments.
  const auto t = testing::traffic(chain(bcast_request(3, 10, 1, 4, 5)));
  CHECK(t[1].send_peers == std::vector<core::Rank>{2, 0, 2, 0});
  CHECK(t[1].send_lengths == std::vector<std::uint64_t>{5, 5, 5, 5});
  CHECK(t[0].sends == 0);
  CHECK(t[2].sends == 0);
}

TEST_CASE("chain bcast reserves 2(p-1)k operations and (p-1-f)k dependencies",
          "[algorithms][bcast][chain]") {
  for (const std::uint32_t p : {1U, 2U, 5U, 10U, 33U}) {
    const core::Schedule s = chain(bcast_request(p, 1000, p / 2, 4, 250)); // k = 4
    const std::uint64_t f = std::min<std::uint64_t>(4, p > 1 ? p - 1 : 0);
    CAPTURE(p);
    CHECK(s.op_count() == 2ULL * (p - 1) * 4);
    CHECK(s.dep_count() == (p > 1 ? (p - 1 - f) * 4 : 0));
  }
}

TEST_CASE("chain bcast's closed form is L a + (k f + L - 1) s b when f divides p-1",
          "[algorithms][bcast][chain]") {
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(core::CollectiveKind::bcast, "ompi:chain");
  // p = 9, f = 4 chains of L = 2, k = 2: the root's 8th send, then one more hop.
  auto c = reg.cost(algo, bcast_request(9, 8, 0, 4, 4));
  REQUIRE(c.has_value());
  CHECK(c->alpha_terms == 2.0);
  CHECK(c->beta_bytes == (2 * 4 + 2 - 1) * 4.0);
  // One chain is the pipeline: (p-1) a + (p + k - 2) s b.
  c = reg.cost(algo, bcast_request(9, 8, 0, 1, 4));
  REQUIRE(c.has_value());
  CHECK(c->alpha_terms == 8.0);
  CHECK(c->beta_bytes == 9 * 4.0);
  CHECK_FALSE(reg.cost(algo, bcast_request(10, 8, 0, 4, 4)).has_value()); // chains of 3 and 2
  CHECK_FALSE(reg.cost(algo, bcast_request(9, 9, 0, 4, 4)).has_value());  // a short segment
}
