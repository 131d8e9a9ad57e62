#include "algorithm_test_support.hpp"
#include "collsim/algorithms/registry.hpp"

#include <catch2/catch.hpp>

using namespace collsim;

namespace {
algorithms::Request reduce_scatter_request(std::uint32_t p, std::uint64_t n) {
  algorithms::Request req = testing::allreduce_request(p, n);
  req.collective = core::CollectiveKind::reduce_scatter;
  return req;
}

core::Schedule non_overlapping(std::uint32_t p, std::uint64_t n) {
  const auto reg = algorithms::make_default_registry();
  return reg.generate(reg.find(core::CollectiveKind::reduce_scatter, "ompi:1"),
                      reduce_scatter_request(p, n));
}
} // namespace

TEST_CASE("non-overlapping reduce-scatter reduces along a binomial tree, then rank 0 scatters",
          "[algorithms][reduce_scatter][non_overlapping]") {
  // p = 6, 60 bytes: rank 0 combines from 1, 2, 4; rank 2 from 3; rank 4 from 5.
  const auto t = testing::traffic(non_overlapping(6, 60));
  CHECK(t[0].reduced_bytes == 3 * 60);
  CHECK(t[0].send_peers == std::vector<core::Rank>{1, 2, 3, 4, 5});
  CHECK(t[0].send_lengths == std::vector<std::uint64_t>{10, 10, 10, 10, 10});
  CHECK(t[2].reduced_bytes == 60);
  CHECK(t[4].reduced_bytes == 60);
  const core::Rank parent[] = {0, 0, 0, 2, 0, 4};
  for (core::Rank r = 1; r < 6; ++r) {
    CAPTURE(r);
    CHECK(t[r].send_peers == std::vector<core::Rank>{parent[r]});
    CHECK(t[r].send_lengths == std::vector<std::uint64_t>{60});
    CHECK(t[r].recv_bytes - t[r].reduced_bytes == 10);
  }
}

TEST_CASE("non-overlapping reduce-scatter reserves exactly its operations and dependencies",
          "[algorithms][reduce_scatter][non_overlapping]") {
  // p = 6: rank 0 has 3 recv_reduces and 5 sends (2 + 5 dependencies); ranks 2 and 4 one
  // recv_reduce, a send and a receive (2 dependencies); ranks 1, 3, 5 a send and a receive (1).
  const core::Schedule s = non_overlapping(6, 600);
  CHECK(s.op_count() == 8 + 2 * 3 + 3 * 2);
  CHECK(s.dep_count() == 7 + 2 * 2 + 3 * 1);
  CHECK(non_overlapping(1, 10).op_count() == 0);
  const auto reg = algorithms::make_default_registry();
  CHECK_FALSE(reg.cost(reg.find(core::CollectiveKind::reduce_scatter, "non_overlapping"),
                       reduce_scatter_request(4, 400))
                  .has_value());
}
