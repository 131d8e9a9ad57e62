#include "algorithm_test_support.hpp"
#include "collsim/algorithms/registry.hpp"

#include <catch2/catch.hpp>

using namespace collsim;

namespace {
algorithms::Request allgather_request(std::uint32_t p, std::uint64_t n) {
  algorithms::Request req = testing::allreduce_request(p, n);
  req.collective = core::CollectiveKind::allgather;
  return req;
}

core::Schedule direct(std::uint32_t p, std::uint64_t n) {
  const auto reg = algorithms::make_default_registry();
  return reg.generate(reg.find(core::CollectiveKind::allgather, "direct"), allgather_request(p, n));
}
} // namespace

TEST_CASE("direct allgather sends the own block to r+1, r+2, ... without waiting",
          "[algorithms][allgather][direct]") {
  for (const std::uint32_t p : {2U, 5U, 12U}) {
    const core::Schedule s = direct(p, 10ULL * p);
    CHECK(s.op_count() == 2ULL * p * (p - 1));
    CHECK(s.dep_count() == 0);
    const auto t = testing::traffic(s);
    for (core::Rank r = 0; r < p; ++r) {
      CAPTURE(p, r);
      REQUIRE(t[r].sends == p - 1);
      CHECK(t[r].recv_bytes == 10ULL * (p - 1));
      for (std::uint32_t i = 1; i < p; ++i) {
        CHECK(t[r].send_peers[i - 1] == (r + i) % p);
        CHECK(t[r].send_lengths[i - 1] == 10);
      }
    }
  }
}

TEST_CASE("direct allgather answers to Open MPI's, SMPI's spreading and STAR-MPI ring names",
          "[algorithms][allgather][direct]") {
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(core::CollectiveKind::allgather, "ompi:8");
  CHECK(&reg.find(core::CollectiveKind::allgather, "smpi:ring") == &algo);
  CHECK(&reg.find(core::CollectiveKind::allgather, "smpi:spreading_simple") == &algo);
  CHECK(reg.find(core::CollectiveKind::allgather, "ring").name == "ring"); // the neighbour ring
  const auto c = reg.cost(algo, allgather_request(8, 800));
  REQUIRE(c.has_value());
  CHECK(c->alpha_terms == 1.0);
  CHECK(c->beta_bytes == 700.0);
  CHECK_FALSE(reg.cost(algo, allgather_request(8, 801)).has_value());
}
