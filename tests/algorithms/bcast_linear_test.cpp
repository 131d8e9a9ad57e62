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
core::Schedule linear(std::uint32_t p, std::uint64_t n, core::Rank root) {
  const auto reg = algorithms::make_default_registry();
  return reg.generate(reg.find(core::CollectiveKind::bcast, "linear"), bcast_request(p, n, root));
}
} // namespace

TEST_CASE("linear bcast: the root sends the whole vector to every other rank in rank order",
          "[algorithms][bcast][linear]") {
  const auto t = testing::traffic(linear(5, 7, 2));
  CHECK(t[2].send_peers == std::vector<core::Rank>{0, 1, 3, 4});
  CHECK(t[2].send_bytes == 4 * 7);
  CHECK(t[2].recvs == 0);
  for (const core::Rank r : {0U, 1U, 3U, 4U}) {
    CHECK(t[r].sends == 0);
    CHECK(t[r].recvs == 1);
    CHECK(t[r].recv_bytes == 7);
  }
}

TEST_CASE("linear bcast reserves 2(p-1) operations and no dependencies",
          "[algorithms][bcast][linear]") {
  for (const std::uint32_t p : {1U, 2U, 7U, 33U}) {
    const core::Schedule s = linear(p, 10, p - 1);
    CAPTURE(p);
    CHECK(s.op_count() == 2ULL * (p - 1));
    CHECK(s.dep_count() == 0);
  }
}

TEST_CASE("linear bcast's closed form is a + (p-1) n b: the root's sends overlap their latencies",
          "[algorithms][bcast][linear]") {
  const auto reg = algorithms::make_default_registry();
  const auto c =
      reg.cost(reg.find(core::CollectiveKind::bcast, "ompi:basic_linear"), bcast_request(6, 10, 0));
  REQUIRE(c.has_value());
  CHECK(c->alpha_terms == 1.0);
  CHECK(c->beta_bytes == 50.0);
  CHECK(c->gamma_bytes == 0.0);
}
