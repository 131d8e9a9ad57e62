#include "algorithm_test_support.hpp"
#include "collsim/algorithms/registry.hpp"

#include <catch2/catch.hpp>

using namespace collsim;

namespace {
core::Schedule bidirectional(std::uint32_t p, std::uint64_t n) {
  const auto reg = algorithms::make_default_registry();
  algorithms::Request req = testing::allreduce_request(p, n);
  req.collective = core::CollectiveKind::reduce_scatter;
  return reg.generate(reg.find(core::CollectiveKind::reduce_scatter, "ucc:ring"), req);
}
} // namespace

TEST_CASE("ring_bidirectional sends half of every block each way round the ring",
          "[algorithms][reduce_scatter][ring_bidirectional]") {
  // p = 4, n = 64: blocks of 16, halves of 8. Rank 1 alternates its rings: to 2 (half 0 of block
  // 0, then 3, then 2) and to 0 (half 1 of block 2, then 3, then 0), p - 1 = 3 steps each.
  const core::Schedule s = bidirectional(4, 64);
  const auto t = testing::traffic(s);
  CHECK(t[1].send_peers == std::vector<core::Rank>{2, 0, 2, 0, 2, 0});
  CHECK(t[1].send_lengths == std::vector<std::uint64_t>(6, 8));
  for (core::Rank r = 0; r < 4; ++r) {
    CAPTURE(r);
    // (p-1)/p n each way in all, half of it on each ring; every byte received is reduced.
    CHECK(t[r].send_bytes == 48);
    CHECK(t[r].recv_bytes == 48);
    CHECK(t[r].reduced_bytes == 48);
  }
  // Ring 0 on stream 0 and tag 0, ring 1 on stream 1 and tag 1: the rings neither wait for nor
  // match each other.
  const core::Op first = s.op(s.rank_begin(1));
  const core::Op second = s.op(s.rank_begin(1) + 2);
  CHECK(first.stream == 0);
  CHECK(first.tag == 0);
  CHECK(second.stream == 1);
  CHECK(second.tag == 1);
  CHECK(s.op_count() == 4 * 4 * 3);
  // On 2 ranks both rings join the same pair; odd halves (7 and 8 bytes of a 15-byte block) still
  // match their own ring.
  CHECK(bidirectional(2, 30).op_count() == 8);
  CHECK(bidirectional(1, 30).op_count() == 0);
}
