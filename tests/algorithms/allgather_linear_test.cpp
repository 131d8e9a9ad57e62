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

TEST_CASE("linear allgather gathers p-1 blocks at rank 0 and sends it the whole vector p-1 times",
          "[algorithms][allgather][linear]") {
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(core::CollectiveKind::allgather, "ompi:1");
  CHECK(&reg.find(core::CollectiveKind::allgather, "smpi:GB") == &algo);
  for (const std::uint32_t p : {2U, 5U, 16U}) {
    const std::uint64_t n = 10ULL * p;
    const core::Schedule s = reg.generate(algo, allgather_request(p, n));
    CAPTURE(p);
    CHECK(s.op_count() == 4ULL * (p - 1));
    CHECK(s.dep_count() == (2ULL * p - 3) + (p - 1));
    const auto t = testing::traffic(s);
    CHECK(t[0].recv_bytes == n - 10);
    CHECK(t[0].send_bytes == (p - 1) * n);
    for (core::Rank q = 1; q < p; ++q) {
      CHECK(t[q].send_peers == std::vector<core::Rank>{0});
      CHECK(t[q].send_lengths == std::vector<std::uint64_t>{10});
      CHECK(t[q].recv_bytes == n);
    }
  }
}

TEST_CASE("linear allgather declares no closed form", "[algorithms][allgather][linear]") {
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(core::CollectiveKind::allgather, "linear");
  CHECK_FALSE(reg.cost(algo, allgather_request(4, 400)).has_value());
  CHECK_FALSE(algo.cost_formula.empty());
  CHECK(reg.generate(algo, allgather_request(1, 400)).op_count() == 0);
}
