#include "algorithm_test_support.hpp"
#include "collsim/algorithms/registry.hpp"

#include <catch2/catch.hpp>

using namespace collsim;

namespace {
core::Schedule tree(std::uint32_t p, std::uint64_t n, core::Rank root, std::int64_t radix) {
  algorithms::Request req = testing::allreduce_request(p, n);
  req.collective = core::CollectiveKind::bcast;
  req.root = root;
  req.params["radix"] = radix;
  const auto reg = algorithms::make_default_registry();
  return reg.generate(reg.find(core::CollectiveKind::bcast, "mpich:tree"), req);
}
} // namespace

TEST_CASE("tree bcast sends the whole vector down MPICH's k-ary tree over relative ranks",
          "[algorithms][bcast][tree]") {
  // 10 ranks, root 4, k = 3: relative ranks 1-3 (ranks 5, 6, 7) are the root's children, 4-6
  // (8, 9, 0) rank 5's, 7-9 (1, 2, 3) rank 6's; every message carries all 20000 bytes.
  const core::Schedule s = tree(10, 20000, 4, 3);
  CHECK(s.header().algorithm == "tree");
  const auto t = testing::traffic(s);
  CHECK(t[4].send_peers == std::vector<core::Rank>{5, 6, 7});
  CHECK(t[5].send_peers == std::vector<core::Rank>{8, 9, 0});
  CHECK(t[6].send_peers == std::vector<core::Rank>{1, 2, 3});
  CHECK(t[6].send_lengths == std::vector<std::uint64_t>{20000, 20000, 20000});
  CHECK(t[7].sends == 0);
  for (core::Rank r = 0; r < 10; ++r) {
    CAPTURE(r);
    CHECK(t[r].recvs == (r == 4 ? 0U : 1U));
  }
  // Nine tree edges, one message each, one dependency per forwarding send.
  CHECK(s.op_count() == 18);
}

TEST_CASE("tree bcast is pipelined_tree in one chunk, whatever the size",
          "[algorithms][bcast][tree]") {
  const auto reg = algorithms::make_default_registry();
  algorithms::Request req = testing::allreduce_request(7, 100000);
  req.collective = core::CollectiveKind::bcast;
  req.root = 2;
  req.params["radix"] = 2;
  req.params["chunk_size"] = 0;
  const core::Schedule piped =
      reg.generate(reg.find(core::CollectiveKind::bcast, "pipelined_tree"), req);
  const core::Schedule plain = tree(7, 100000, 2, 2);
  CHECK(plain.op_count() == piped.op_count());
  CHECK(testing::traffic(plain)[2].send_lengths == testing::traffic(piped)[2].send_lengths);
  CHECK(testing::traffic(plain)[2].send_lengths == std::vector<std::uint64_t>{100000, 100000});
  CHECK(tree(5, 0, 0, 2).op_count() == 0); // nothing to send
  CHECK(tree(1, 64, 0, 2).op_count() == 0);
}
