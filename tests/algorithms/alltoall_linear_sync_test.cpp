#include "algorithm_test_support.hpp"
#include "collsim/algorithms/registry.hpp"
#include "collsim/core/verify.hpp"

#include <catch2/catch.hpp>

using namespace collsim;

namespace {
algorithms::Request alltoall_request(std::uint32_t p, std::uint64_t n, std::int64_t window) {
  algorithms::Request req = testing::allreduce_request(p, n);
  req.collective = core::CollectiveKind::alltoall;
  req.params["max_outstanding"] = window;
  return req;
}
core::Schedule linear_sync(std::uint32_t p, std::uint64_t n, std::int64_t window) {
  const auto reg = algorithms::make_default_registry();
  return reg.generate(reg.find(core::CollectiveKind::alltoall, "linear_sync"),
                      alltoall_request(p, n, window));
}
} // namespace

TEST_CASE("linear_sync alltoall reuses each of its K request slots in turn",
          "[algorithms][alltoall][linear_sync]") {
  // p = 6, K = 2: receives 2..4 wait for receives 0..2, sends likewise: 2 x 3 dependencies.
  const core::Schedule s = linear_sync(6, 60, 2);
  CHECK(s.op_count() == 6ULL * 11);
  CHECK(s.dep_count() == 6ULL * 2 * 3);
  const auto t = testing::traffic(s);
  CHECK(t[0].send_peers == std::vector<core::Rank>{5, 4, 3, 2, 1});
  CHECK(t[0].send_lengths == std::vector<std::uint64_t>(5, 10));
  // Slot reuse: rank 0's third receive (from rank 3) waits for its first (from rank 1).
  const core::Op third = s.op(s.rank_begin(0) + 4);
  CHECK(third.kind == core::OpKind::recv);
  CHECK(third.peer == 3);
  CHECK(third.deps == std::vector<std::uint32_t>{0});
  CHECK(core::check_semantics(s).ok());
}

TEST_CASE("linear_sync alltoall without a limit has no dependencies",
          "[algorithms][alltoall][linear_sync]") {
  for (const std::int64_t window : {0, 5, 100}) {
    CAPTURE(window);
    const core::Schedule s = linear_sync(6, 60, window);
    CHECK(s.dep_count() == 0);
  }
  const core::Schedule one = linear_sync(6, 60, 1);
  CHECK(one.dep_count() == 6ULL * 2 * 4);
  CHECK(core::check_semantics(one).ok());
  const auto reg = algorithms::make_default_registry();
  CHECK_FALSE(
      reg.cost(reg.find(core::CollectiveKind::alltoall, "ompi:4"), alltoall_request(6, 60, 0))
          .has_value());
}
