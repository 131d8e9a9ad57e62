#include "algorithm_test_support.hpp"
#include "collsim/algorithms/registry.hpp"

#include <catch2/catch.hpp>

using namespace collsim;

namespace {
algorithms::Request bcast_request(std::uint32_t p, std::uint64_t n, core::Rank root,
                                  std::int64_t radix, std::int64_t chunk) {
  algorithms::Request req = testing::allreduce_request(p, n);
  req.collective = core::CollectiveKind::bcast;
  req.root = root;
  req.params["radix"] = radix;
  req.params["chunk_size"] = chunk;
  return req;
}
core::Schedule tree(std::uint32_t p, std::uint64_t n, core::Rank root = 0, std::int64_t radix = 2,
                    std::int64_t chunk = 8192) {
  const auto reg = algorithms::make_default_registry();
  return reg.generate(reg.find(core::CollectiveKind::bcast, "pipelined_tree"),
                      bcast_request(p, n, root, radix, chunk));
}
} // namespace

TEST_CASE("pipelined_tree bcast streams MPICH-sized chunks down a binary tree",
          "[algorithms][bcast][pipelined_tree]") {
  // n = 20000, chunks of 8192: K = 3, the remainder first: 3616, 8192, 8192.
  const auto t = testing::traffic(tree(7, 20000));
  CHECK(t[0].send_peers == std::vector<core::Rank>{1, 2, 1, 2, 1, 2});
  CHECK(t[0].send_lengths == std::vector<std::uint64_t>{3616, 3616, 8192, 8192, 8192, 8192});
  CHECK(t[1].send_peers == std::vector<core::Rank>{3, 4, 3, 4, 3, 4});
  CHECK(t[1].recvs == 3);
  CHECK(t[6].sends == 0);
  CHECK(t[6].recv_bytes == 20000);
}

TEST_CASE("pipelined_tree bcast uses relative ranks, a k-ary tree and one chunk for chunk_size 0",
          "[algorithms][bcast][pipelined_tree]") {
  const auto t = testing::traffic(tree(10, 100, 4, 3, 0));
  CHECK(t[4].send_peers == std::vector<core::Rank>{5, 6, 7});
  CHECK(t[5].send_peers == std::vector<core::Rank>{8, 9, 0});
  CHECK(t[6].send_peers == std::vector<core::Rank>{1, 2, 3});
  CHECK(t[6].send_lengths == std::vector<std::uint64_t>{100, 100, 100});
  CHECK(t[7].sends == 0);
  CHECK(tree(5, 0).op_count() == 0); // MPICH returns at once for zero bytes
}

TEST_CASE("pipelined_tree bcast posts three receives ahead, later ones after the previous chunk",
          "[algorithms][bcast][pipelined_tree]") {
  // p = 2, 5 chunks: rank 1 posts receives 0-2 at once, 3 and 4 each after the one before.
  const core::Schedule s = tree(2, 50, 0, 2, 10);
  const core::OpId base = s.rank_begin(1);
  REQUIRE(s.rank_end(1) - base == 5);
  for (core::OpId i = 0; i < 3; ++i) {
    CHECK(s.op(base + i).deps.empty());
  }
  CHECK(s.op(base + 3).deps == std::vector<std::uint32_t>{2});
  CHECK(s.op(base + 4).deps == std::vector<std::uint32_t>{3});
  CHECK(s.op_count() == 10);
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(core::CollectiveKind::bcast, "mpich:pipelined_tree");
  CHECK(algo.name == "pipelined_tree");
  CHECK_FALSE(reg.cost(algo, bcast_request(8, 1 << 20, 0, 2, 8192)).has_value());
}
