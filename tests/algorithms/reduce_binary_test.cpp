#include "algorithm_test_support.hpp"
#include "collsim/algorithms/registry.hpp"

#include <catch2/catch.hpp>

using namespace collsim;

namespace {
algorithms::Request reduce_request(std::uint32_t p, std::uint64_t n, core::Rank root,
                                   std::int64_t segment) {
  algorithms::Request req = testing::allreduce_request(p, n);
  req.collective = core::CollectiveKind::reduce;
  req.root = root;
  req.params["segment_size"] = segment;
  return req;
}
core::Schedule binary(std::uint32_t p, std::uint64_t n, core::Rank root, std::int64_t segment) {
  const auto reg = algorithms::make_default_registry();
  return reg.generate(reg.find(core::CollectiveKind::reduce, "binary"),
                      reduce_request(p, n, root, segment));
}
} // namespace

TEST_CASE("binary reduce runs Open MPI's level-order binary tree towards the root",
          "[algorithms][reduce][binary]") {
  // p = 7, root 0: 1, 2 -> 0; 3, 5 -> 1; 4, 6 -> 2. 10 bytes in segments of 4, 4, 2.
  const auto t = testing::traffic(binary(7, 10, 0, 4));
  CHECK(t[1].send_peers == std::vector<core::Rank>{0, 0, 0});
  CHECK(t[1].send_lengths == std::vector<std::uint64_t>{4, 4, 2});
  CHECK(t[3].send_peers == std::vector<core::Rank>{1, 1, 1});
  CHECK(t[5].send_peers == std::vector<core::Rank>{1, 1, 1});
  CHECK(t[6].send_peers == std::vector<core::Rank>{2, 2, 2});
  CHECK(t[0].reduced_bytes == 2 * 10);
  CHECK(t[4].reduced_bytes == 0);
}

TEST_CASE("binary reduce reserves 3(p-1)k operations", "[algorithms][reduce][binary]") {
  const core::Schedule s = binary(7, 10, 0, 4);
  CHECK(s.op_count() == 3 * 6 * 3);
  // Per segment: the root's 2 + 1 reduction dependencies; ranks 1 and 2: 3 + 1 (send).
  CHECK(s.dep_count() == (3 + 2 * 4) * 3);
  CHECK(s.header().tmp_bytes == 20);
}
