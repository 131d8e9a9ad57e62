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
} // namespace

TEST_CASE("two-process alltoall swaps one n/2 block and refuses other rank counts",
          "[algorithms][alltoall][two_proc]") {
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(core::CollectiveKind::alltoall, "ompi:5");
  const core::Schedule s = reg.generate(algo, alltoall_request(2, 16));
  const auto t = testing::traffic(s);
  CHECK(t[0].send_peers == std::vector<core::Rank>{1});
  CHECK(t[0].send_lengths == std::vector<std::uint64_t>{8});
  CHECK(t[1].send_peers == std::vector<core::Rank>{0});
  CHECK(s.op_count() == 6);
  CHECK(s.dep_count() == 0);
  CHECK(reg.cost(algo, alltoall_request(2, 16))->beta_bytes == 8.0);
  CHECK_THROWS_WITH(reg.generate(algo, alltoall_request(4, 16)),
                    "two_proc: needs exactly 2 ranks (got 4)");
  CHECK_THROWS_WITH(reg.generate(algo, alltoall_request(2, 15)),
                    "two_proc: alltoall needs bytes divisible by ranks");
}
