#include "algorithm_test_support.hpp"
#include "collsim/algorithms/registry.hpp"

#include <catch2/catch.hpp>

using namespace collsim;

namespace {
algorithms::Request reduce_request(std::uint32_t p, std::uint64_t n, core::Rank root,
                                   std::int64_t radix) {
  algorithms::Request req = testing::allreduce_request(p, n);
  req.collective = core::CollectiveKind::reduce;
  req.root = root;
  req.params["radix"] = radix;
  return req;
}
core::Schedule knomial(std::uint32_t p, std::uint64_t n, core::Rank root, std::int64_t radix) {
  const auto reg = algorithms::make_default_registry();
  return reg.generate(reg.find(core::CollectiveKind::reduce, "knomial"),
                      reduce_request(p, n, root, radix));
}
} // namespace

TEST_CASE("knomial reduce: every rank sends once to the rank with its lowest digit cleared",
          "[algorithms][reduce][knomial]") {
  // p = 9, radix 3, root 0: 1, 2, 3, 6 -> 0; 4, 5 -> 3; 7, 8 -> 6.
  const auto t = testing::traffic(knomial(9, 8, 0, 3));
  for (const core::Rank r : {1U, 2U, 3U, 6U}) {
    CHECK(t[r].send_peers == std::vector<core::Rank>{0});
  }
  CHECK(t[4].send_peers == std::vector<core::Rank>{3});
  CHECK(t[8].send_peers == std::vector<core::Rank>{6});
  CHECK(t[0].recvs == 4);
  CHECK(t[0].reduced_bytes == 4 * 8);
  CHECK(t[3].reduced_bytes == 2 * 8);
}

TEST_CASE("knomial reduce reserves 3(p-1) operations and two scratch vectors",
          "[algorithms][reduce][knomial]") {
  const core::Schedule s = knomial(9, 10, 4, 3);
  CHECK(s.op_count() == 3 * 8);
  // Root (4 children): 2 receives into reused buffers, 4 + 3 reductions; ranks 3 and 6 (2
  // children): 2 + 1 reductions and the send.
  CHECK(s.dep_count() == 9 + 2 * 4);
  CHECK(s.header().tmp_bytes == 20);
  const auto reg = algorithms::make_default_registry();
  CHECK_FALSE(reg.cost(reg.find(core::CollectiveKind::reduce, "ompi:8"), reduce_request(9, 9, 0, 3))
                  .has_value());
}
