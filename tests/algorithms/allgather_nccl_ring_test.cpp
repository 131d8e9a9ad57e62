#include "algorithm_test_support.hpp"
#include "collsim/algorithms/registry.hpp"
#include "collsim/core/verify.hpp"

#include <catch2/catch.hpp>

using namespace collsim;

namespace {
algorithms::Request ag_request(std::uint32_t p, std::uint64_t n, std::int64_t channels,
                               std::int64_t protocol = 0) {
  algorithms::Request req = testing::allreduce_request(p, n);
  req.collective = core::CollectiveKind::allgather;
  req.params["channels"] = channels;
  req.params["protocol"] = protocol;
  return req;
}

core::Schedule ag(const algorithms::Request& req) {
  const auto reg = algorithms::make_default_registry();
  return reg.generate(reg.find(core::CollectiveKind::allgather, "nccl:ring"), req);
}
} // namespace

TEST_CASE("nccl ring allgather passes each channel's slice of every block p-1 hops around the ring",
          "[algorithms][allgather][nccl]") {
  // 4 ranks, blocks of 30 bytes, 3 channels: slices of 10 bytes of every block.
  const core::Schedule s = ag(ag_request(4, 120, 3));
  const auto t = testing::traffic(s);
  for (core::Rank r = 0; r < 4; ++r) {
    CAPTURE(r);
    CHECK(t[r].send_peers == std::vector<core::Rank>(3 * 3, (r + 1) % 4));
    CHECK(t[r].send_lengths == std::vector<std::uint64_t>(3 * 3, 10));
    CHECK(t[r].recvs == 3 * 3);
  }
  // Rank 0 starts with its own block: the slices at 0, 10 and 20.
  CHECK(s.target(s.rank_begin(0)).offset == 0);
  CHECK(s.target(s.rank_begin(0) + 1).offset == 10);
  CHECK(s.target(s.rank_begin(0) + 2).offset == 20);
  CHECK(core::check_semantics(s).ok());
}

TEST_CASE("nccl ring allgather uses 2 MiB chunks with Simple and 32 KiB with LL",
          "[algorithms][allgather][nccl]") {
  // 2 ranks, blocks of 4 MiB, one channel.
  const std::uint64_t n = std::uint64_t{8} << 20;
  CHECK(testing::traffic(ag(ag_request(2, n, 1, 0)))[0].send_lengths ==
        std::vector<std::uint64_t>(2, std::uint64_t{2} << 20));
  CHECK(testing::traffic(ag(ag_request(2, n, 1, 1)))[0].sends == 128);
}
