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
} // namespace

TEST_CASE("linear scatter: the root sends each block in rank order, each after the last",
          "[algorithms][scatter][linear]") {
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(core::CollectiveKind::scatter, "ompi:1");
  const core::Schedule s = reg.generate(algo, scatter_request(5, 52, 2));
  const auto t = testing::traffic(s);
  CHECK(t[2].send_peers == std::vector<core::Rank>{0, 1, 3, 4});
  CHECK(t[2].send_lengths == std::vector<std::uint64_t>{11, 11, 10, 10});
  for (const core::Rank r : {0U, 1U, 3U, 4U}) {
    CHECK(t[r].recvs == 1);
    CHECK(t[r].sends == 0);
  }
  CHECK(s.op_count() == 8);
  CHECK(s.dep_count() == 3); // blocking sends
}

TEST_CASE("linear scatter costs one latency and every block but the root's through its link",
          "[algorithms][scatter][linear]") {
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(core::CollectiveKind::scatter, "linear");
  const auto c = reg.cost(algo, scatter_request(4, 400, 3));
  REQUIRE(c.has_value());
  CHECK(c->alpha_terms == 1.0);
  CHECK(c->beta_bytes == 300.0);
}
