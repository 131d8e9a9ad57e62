#include "algorithm_test_support.hpp"
#include "collsim/algorithms/registry.hpp"

#include <catch2/catch.hpp>

using namespace collsim;

namespace {
algorithms::Request alltoall_request(std::uint32_t p, std::uint64_t n) {
  algorithms::Request req = testing::allreduce_request(p, n);
  req.collective = core::CollectiveKind::alltoall;
  return req;
}
core::Schedule linear(std::uint32_t p, std::uint64_t n) {
  const auto reg = algorithms::make_default_registry();
  return reg.generate(reg.find(core::CollectiveKind::alltoall, "linear"), alltoall_request(p, n));
}
} // namespace

TEST_CASE("linear alltoall posts all receives, then sends to r-1, r-2, ... without waiting",
          "[algorithms][alltoall][linear]") {
  const std::uint32_t p = 5;
  const core::Schedule s = linear(p, 50);
  const auto t = testing::traffic(s);
  for (core::Rank r = 0; r < p; ++r) {
    CAPTURE(r);
    CHECK(t[r].send_peers ==
          std::vector<core::Rank>{(r + 4) % p, (r + 3) % p, (r + 2) % p, (r + 1) % p});
    CHECK(t[r].send_lengths == std::vector<std::uint64_t>(4, 10));
    CHECK(t[r].recvs == 4);
    CHECK(s.kind(s.rank_begin(r)) == core::OpKind::copy);
  }
  CHECK(s.op_count() == 5ULL * 9);
  CHECK(s.dep_count() == 0);
}

TEST_CASE("linear alltoall overlaps the latencies of its p-1 messages",
          "[algorithms][alltoall][linear]") {
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(core::CollectiveKind::alltoall, "ompi:1");
  CHECK(algo.name == "linear");
  const auto c = reg.cost(algo, alltoall_request(8, 800));
  REQUIRE(c.has_value());
  CHECK(c->alpha_terms == 1.0);
  CHECK(c->beta_bytes == 700.0);
  CHECK(reg.cost(algo, alltoall_request(1, 8))->alpha_terms == 0.0);
  CHECK(linear(1, 8).op_count() == 1); // the copy of its own block
}
