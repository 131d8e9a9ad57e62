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
} // namespace

TEST_CASE("pair allgather swaps the own block with rank r XOR i in step i",
          "[algorithms][allgather][pair]") {
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(core::CollectiveKind::allgather, "smpi:pair");
  for (const std::uint32_t p : {2U, 4U, 16U}) {
    const core::Schedule s = reg.generate(algo, allgather_request(p, 10ULL * p));
    CAPTURE(p);
    CHECK(s.op_count() == 2ULL * p * (p - 1));
    CHECK(s.dep_count() == 1ULL * p * (p - 2));
    const auto t = testing::traffic(s);
    for (core::Rank r = 0; r < p; ++r) {
      REQUIRE(t[r].sends == p - 1);
      for (std::uint32_t i = 1; i < p; ++i) {
        CHECK(t[r].send_peers[i - 1] == (r ^ i));
        CHECK(t[r].send_lengths[i - 1] == 10);
      }
    }
  }
}

TEST_CASE("pair allgather refuses rank counts that are not a power of two, as SMPI does",
          "[algorithms][allgather][pair]") {
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(core::CollectiveKind::allgather, "pair");
  auto req = allgather_request(12, 120);
  CHECK(reg.refusal(algo, req) == "ranks must be a power of two (got 12), as SMPI's pair requires");
  const auto c = reg.cost(algo, allgather_request(8, 800));
  REQUIRE(c.has_value());
  CHECK(c->alpha_terms == 7.0);
  CHECK(c->beta_bytes == 700.0);
  CHECK_FALSE(reg.cost(algo, allgather_request(8, 801)).has_value());
}
