#include "algorithm_test_support.hpp"
#include "collsim/algorithms/registry.hpp"
#include "collsim/core/verify.hpp"

#include <catch2/catch.hpp>

using namespace collsim;

namespace {
algorithms::Request alltoall_request(std::uint32_t p, std::uint64_t n, std::int64_t batch) {
  algorithms::Request req = testing::allreduce_request(p, n);
  req.collective = core::CollectiveKind::alltoall;
  req.params["batch_size"] = batch;
  return req;
}
core::Schedule scattered(std::uint32_t p, std::uint64_t n, std::int64_t batch) {
  const auto reg = algorithms::make_default_registry();
  return reg.generate(reg.find(core::CollectiveKind::alltoall, "mpich:scattered"),
                      alltoall_request(p, n, batch));
}
} // namespace

TEST_CASE("scattered alltoall exchanges with staggered peers in batches it waits for",
          "[algorithms][alltoall][scattered]") {
  // p = 8, B = 3: batches of peers {r, r+1, r+2} (r itself is the local copy), {r+3..r+5},
  // {r+6, r+7}: 5, 6 and 4 operations; the second batch waits for the 5 before it, the third for
  // the 6 before it.
  const core::Schedule s = scattered(8, 80, 3);
  const auto t = testing::traffic(s);
  for (core::Rank r = 0; r < 8; ++r) {
    CAPTURE(r);
    std::vector<core::Rank> expected;
    for (std::uint32_t i = 1; i < 8; ++i) {
      expected.push_back((r + 8 - i) % 8);
    }
    CHECK(t[r].send_peers == expected);
    CHECK(t[r].send_lengths == std::vector<std::uint64_t>(7, 10));
  }
  CHECK(s.op_count() == 8 * 15);
  CHECK(s.dep_count() == 8 * (5 + 6));
  CHECK(core::check_semantics(s).ok());
}

TEST_CASE("scattered alltoall pays one latency per batch that carries a message",
          "[algorithms][alltoall][scattered]") {
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(core::CollectiveKind::alltoall, "scattered");
  auto c = reg.cost(algo, alltoall_request(8, 80, 3));
  REQUIRE(c.has_value());
  CHECK(c->alpha_terms == 3.0);
  CHECK(c->beta_bytes == 70.0);
  CHECK(reg.cost(algo, alltoall_request(8, 80, 32))->alpha_terms == 1.0); // MPICH's default
  CHECK(reg.cost(algo, alltoall_request(8, 80, 0))->alpha_terms == 1.0);  // all at once
  CHECK(reg.cost(algo, alltoall_request(4, 40, 1))->alpha_terms == 3.0);  // first batch: copy
  CHECK(scattered(8, 80, 0).dep_count() == 0);
}
