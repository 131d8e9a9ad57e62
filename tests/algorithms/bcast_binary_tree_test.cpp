#include "algorithm_test_support.hpp"
#include "collsim/algorithms/registry.hpp"

#include <catch2/catch.hpp>

using namespace collsim;

namespace {
algorithms::Request bcast_request(std::uint32_t p, std::uint64_t n, core::Rank root,
                                  std::int64_t segment) {
  algorithms::Request req = testing::allreduce_request(p, n);
  req.collective = core::CollectiveKind::bcast;
  req.root = root;
  req.params["segment_size"] = segment;
  return req;
}
core::Schedule binary(std::uint32_t p, std::uint64_t n, core::Rank root, std::int64_t segment) {
  const auto reg = algorithms::make_default_registry();
  return reg.generate(reg.find(core::CollectiveKind::bcast, "binary_tree"),
                      bcast_request(p, n, root, segment));
}
} // namespace

TEST_CASE("binary_tree bcast follows Open MPI's level-order binary tree",
          "[algorithms][bcast][binary_tree]") {
  // p = 10, root 0: 0 -> 1, 2; 1 -> 3, 5; 2 -> 4, 6; 3 -> 7; 4 -> 8; 5 -> 9.
  const auto t = testing::traffic(binary(10, 8, 0, 0));
  CHECK(t[0].send_peers == std::vector<core::Rank>{1, 2});
  CHECK(t[1].send_peers == std::vector<core::Rank>{3, 5});
  CHECK(t[2].send_peers == std::vector<core::Rank>{4, 6});
  CHECK(t[3].send_peers == std::vector<core::Rank>{7});
  CHECK(t[4].send_peers == std::vector<core::Rank>{8});
  CHECK(t[5].send_peers == std::vector<core::Rank>{9});
  CHECK(t[6].sends == 0);
}

TEST_CASE("binary_tree bcast sends every segment down every edge",
          "[algorithms][bcast][binary_tree]") {
  // 10 bytes in segments of 4: 4, 4, 2 on each of the p-1 edges.
  const auto t = testing::traffic(binary(7, 10, 6, 4));
  std::uint64_t bytes = 0;
  for (const auto& rank : t) {
    bytes += rank.send_bytes;
    CHECK(rank.sends % 3 == 0);
  }
  CHECK(bytes == 6 * 10);
  const core::Schedule s = binary(7, 10, 6, 4);
  CHECK(s.op_count() == 2 * 6 * 3);
  CHECK(s.dep_count() == (6 - 2) * 3); // the root's two edges need no receive first
  const auto reg = algorithms::make_default_registry();
  CHECK_FALSE(reg.cost(reg.find(core::CollectiveKind::bcast, "ompi:5"), bcast_request(7, 12, 0, 4))
                  .has_value());
}
