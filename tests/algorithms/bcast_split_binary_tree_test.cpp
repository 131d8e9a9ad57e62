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
core::Schedule split(std::uint32_t p, std::uint64_t n, core::Rank root, std::int64_t segment) {
  const auto reg = algorithms::make_default_registry();
  return reg.generate(reg.find(core::CollectiveKind::bcast, "split_binary_tree"),
                      bcast_request(p, n, root, segment));
}
} // namespace

TEST_CASE("split_binary_tree pipelines one half down each subtree, then swaps halves",
          "[algorithms][bcast][split_binary_tree]") {
  // p = 7, n = 16, segments of 4: halves of 8 bytes, 2 segments each. The root alternates
  // segments of half 0 (to 1) and half 1 (to 2); rank 1 forwards half 0 to 3 and 5, then swaps
  // with 2; leaf 6 (under 2) swaps with 5.
  const auto t = testing::traffic(split(7, 16, 0, 4));
  CHECK(t[0].send_peers == std::vector<core::Rank>{1, 2, 1, 2});
  CHECK(t[0].send_lengths == std::vector<std::uint64_t>{4, 4, 4, 4});
  CHECK(t[1].send_peers == std::vector<core::Rank>{3, 5, 3, 5, 2});
  CHECK(t[1].send_lengths == std::vector<std::uint64_t>{4, 4, 4, 4, 8});
  CHECK(t[6].send_peers == std::vector<core::Rank>{5});
  for (core::Rank r = 1; r < 7; ++r) {
    CHECK(t[r].recv_bytes == 16);
  }
  const core::Schedule s = split(7, 16, 0, 4);
  CHECK(s.op_count() == 6 * 2 * 2 + 6 * 2);
  CHECK(s.dep_count() == 4 * 2 + 6 * 2); // forwarded segments, exchange sends (one per segment)
}

TEST_CASE("split_binary_tree sends the second half to the unpaired last rank when p is even",
          "[algorithms][bcast][split_binary_tree]") {
  // p = 6, root 2: relative rank 5 (rank 1) is odd and has no partner.
  const auto t = testing::traffic(split(6, 15, 2, 0));
  CHECK(t[2].send_peers == std::vector<core::Rank>{3, 4, 1});
  CHECK(t[2].send_lengths == std::vector<std::uint64_t>{8, 7, 7});
  CHECK(t[1].recvs == 2);
}

TEST_CASE("split_binary_tree falls back to the pipeline when a half is shorter than a segment",
          "[algorithms][bcast][split_binary_tree]") {
  const auto t = testing::traffic(split(4, 3, 0, 4));
  CHECK(t[0].send_peers == std::vector<core::Rank>{1});
  CHECK(t[1].send_peers == std::vector<core::Rank>{2});
  CHECK(t[2].send_peers == std::vector<core::Rank>{3});
}
