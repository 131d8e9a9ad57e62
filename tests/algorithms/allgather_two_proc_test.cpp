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

TEST_CASE("two-process allgather swaps the two blocks in one exchange",
          "[algorithms][allgather][two_proc]") {
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(core::CollectiveKind::allgather, "ompi:6");
  const core::Schedule s = reg.generate(algo, allgather_request(2, 7));
  CHECK(s.op_count() == 4);
  CHECK(s.dep_count() == 0);
  const auto t = testing::traffic(s);
  CHECK(t[0].send_peers == std::vector<core::Rank>{1});
  CHECK(t[0].send_lengths == std::vector<std::uint64_t>{4}); // blocks of 4 and 3 bytes
  CHECK(t[1].send_lengths == std::vector<std::uint64_t>{3});
  CHECK(t[0].recv_bytes == 3);
}

TEST_CASE("two-process allgather refuses any other rank count, as Open MPI does",
          "[algorithms][allgather][two_proc]") {
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(core::CollectiveKind::allgather, "two_proc");
  for (const std::uint32_t p : {1U, 3U, 64U}) {
    auto req = allgather_request(p, 64);
    CHECK(reg.refusal(algo, req) ==
          "needs exactly 2 ranks (got " + std::to_string(p) + "), as Open MPI's does");
  }
  const auto c = reg.cost(algo, allgather_request(2, 64));
  REQUIRE(c.has_value());
  CHECK(c->alpha_terms == 1.0);
  CHECK(c->beta_bytes == 32.0);
  CHECK_FALSE(reg.cost(algo, allgather_request(2, 63)).has_value());
}
