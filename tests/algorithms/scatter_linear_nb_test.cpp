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

TEST_CASE("non-blocking linear scatter posts every send at once",
          "[algorithms][scatter][linear_nb]") {
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(core::CollectiveKind::scatter, "ompi:3");
  CHECK(algo.name == "linear_nb");
  const core::Schedule s = reg.generate(algo, scatter_request(5, 52, 4));
  const auto t = testing::traffic(s);
  CHECK(t[4].send_peers == std::vector<core::Rank>{0, 1, 2, 3});
  CHECK(t[4].send_lengths == std::vector<std::uint64_t>{11, 11, 10, 10});
  CHECK(s.op_count() == 8);
  CHECK(s.dep_count() == 0); // unlike the blocking linear scatter's p-2
  const auto c = reg.cost(algo, scatter_request(5, 52, 4));
  REQUIRE(c.has_value());
  CHECK(c->alpha_terms == 1.0);
  CHECK(c->beta_bytes == 42.0);
}
