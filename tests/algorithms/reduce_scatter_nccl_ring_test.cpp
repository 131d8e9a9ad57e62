#include "algorithm_test_support.hpp"
#include "collsim/algorithms/registry.hpp"
#include "collsim/core/verify.hpp"

#include <catch2/catch.hpp>

using namespace collsim;

namespace {
core::Schedule rs(std::uint32_t p, std::uint64_t n, std::int64_t channels) {
  algorithms::Request req = testing::allreduce_request(p, n);
  req.collective = core::CollectiveKind::reduce_scatter;
  req.params["channels"] = channels;
  const auto reg = algorithms::make_default_registry();
  return reg.generate(reg.find(core::CollectiveKind::reduce_scatter, "nccl:ring"), req);
}
} // namespace

TEST_CASE("nccl ring reduce-scatter reduces each channel's slice of every block around the ring",
          "[algorithms][reduce_scatter][nccl]") {
  // 5 ranks, blocks of 20 bytes, 2 channels of 10.
  const core::Schedule s = rs(5, 100, 2);
  const auto t = testing::traffic(s);
  for (core::Rank r = 0; r < 5; ++r) {
    CAPTURE(r);
    CHECK(t[r].send_peers == std::vector<core::Rank>(2 * 4, (r + 1) % 5));
    CHECK(t[r].send_bytes == 2 * 4 * 10);
    CHECK(t[r].reduced_bytes == 2 * 4 * 10);
  }
  // Rank 0 first sends its predecessor's block (block 4, at 80) of each channel.
  CHECK(s.target(s.rank_begin(0)).offset == 80);
  CHECK(s.target(s.rank_begin(0) + 1).offset == 90);
  CHECK(core::check_semantics(s).ok());
}
