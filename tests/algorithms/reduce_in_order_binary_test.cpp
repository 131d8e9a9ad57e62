#include "algorithm_test_support.hpp"
#include "collsim/algorithms/registry.hpp"

#include <catch2/catch.hpp>

using namespace collsim;

namespace {
algorithms::Request reduce_request(std::uint32_t p, std::uint64_t n, core::Rank root) {
  algorithms::Request req = testing::allreduce_request(p, n);
  req.collective = core::CollectiveKind::reduce;
  req.root = root;
  return req;
}
core::Schedule in_order(std::uint32_t p, std::uint64_t n, core::Rank root) {
  const auto reg = algorithms::make_default_registry();
  return reg.generate(reg.find(core::CollectiveKind::reduce, "in_order_binary"),
                      reduce_request(p, n, root));
}
} // namespace

TEST_CASE("in_order_binary reduce builds Open MPI's in-order tree rooted at p-1",
          "[algorithms][reduce][in_order_binary]") {
  // p = 7: rank 6 reduces left child 5 (ranks 3-5) and right child 2 (ranks 0-2); 5 reduces 4
  // and 3, 2 reduces 1 and 0.
  const auto t = testing::traffic(in_order(7, 8, 6));
  CHECK(t[5].send_peers == std::vector<core::Rank>{6});
  CHECK(t[2].send_peers == std::vector<core::Rank>{6});
  CHECK(t[4].send_peers == std::vector<core::Rank>{5});
  CHECK(t[3].send_peers == std::vector<core::Rank>{5});
  CHECK(t[1].send_peers == std::vector<core::Rank>{2});
  CHECK(t[0].send_peers == std::vector<core::Rank>{2});
  CHECK(t[6].sends == 0);
  CHECK(t[6].reduced_bytes == 2 * 8);
}

TEST_CASE("in_order_binary reduce hands the result from p-1 to another root",
          "[algorithms][reduce][in_order_binary]") {
  const auto t = testing::traffic(in_order(7, 8, 2));
  CHECK(t[6].send_peers == std::vector<core::Rank>{2});
  CHECK(t[6].send_lengths == std::vector<std::uint64_t>{8});
  CHECK(t[2].send_peers == std::vector<core::Rank>{6});
  CHECK(t[2].recvs == 3); // its two children, then the result
  const core::Schedule s = in_order(7, 8, 2);
  // 6 tree edges (3 ops each) and the hand-over (2 ops). Dependencies: 3 reductions at each of
  // ranks 6, 5 and 2, the sends of 5 and 2, and the hand-over's send and receive (1 each).
  CHECK(s.dep_count() == 3 * 3 + 2 + 2);
}
