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
} // namespace

TEST_CASE("linear gather: every rank sends its block to the root, received in rank order",
          "[algorithms][gather][linear]") {
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(core::CollectiveKind::gather, "ompi:basic_linear");
  const core::Schedule s = reg.generate(algo, gather_request(5, 52, 2));
  const auto t = testing::traffic(s);
  CHECK(t[2].sends == 0);
  CHECK(t[2].recvs == 4);
  CHECK(t[2].recv_bytes == 52 - 10); // blocks 11, 11, 10, 10, 10
  for (const core::Rank r : {0U, 1U, 3U, 4U}) {
    CHECK(t[r].send_peers == std::vector<core::Rank>{2});
  }
  std::vector<core::Rank> order;
  for (core::OpId id = s.rank_begin(2); id < s.rank_end(2); ++id) {
    order.push_back(s.peer(id));
  }
  CHECK(order == std::vector<core::Rank>{0, 1, 3, 4});
  CHECK(s.op_count() == 8);
  CHECK(s.dep_count() == 3); // the root's blocking receives
}

TEST_CASE("linear gather costs one latency and every block but the root's through its link",
          "[algorithms][gather][linear]") {
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(core::CollectiveKind::gather, "linear");
  auto c = reg.cost(algo, gather_request(5, 52, 0));
  REQUIRE(c.has_value());
  CHECK(c->alpha_terms == 1.0);
  CHECK(c->beta_bytes == 41.0);
  c = reg.cost(algo, gather_request(1, 52, 0));
  CHECK(c->alpha_terms == 0.0);
  CHECK(c->beta_bytes == 0.0);
}
