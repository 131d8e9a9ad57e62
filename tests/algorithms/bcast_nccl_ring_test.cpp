#include "algorithm_test_support.hpp"
#include "collsim/algorithms/registry.hpp"

#include <catch2/catch.hpp>

using namespace collsim;

namespace {
core::Schedule bcast(std::uint32_t p, std::uint64_t n, core::Rank root, std::int64_t channels,
                     std::int64_t protocol = 0) {
  algorithms::Request req = testing::allreduce_request(p, n);
  req.collective = core::CollectiveKind::bcast;
  req.root = root;
  req.params["channels"] = channels;
  req.params["protocol"] = protocol;
  const auto reg = algorithms::make_default_registry();
  return reg.generate(reg.find(core::CollectiveKind::bcast, "nccl:ring"), req);
}
} // namespace

TEST_CASE("nccl ring bcast is a chain from the root along the ring, 512 KiB chunks with Simple",
          "[algorithms][bcast][nccl]") {
  // 5 ranks, root 2: chain 2 -> 3 -> 4 -> 0 -> 1. 2 MiB + 1 byte on 2 channels: slices of
  // 1 MiB + 1 and 1 MiB, in chunks of 512 KiB (BROADCAST_CHUNKSTEPS = 1): 3 + 2 chunks.
  const std::uint64_t n = (std::uint64_t{2} << 20) + 1;
  const auto t = testing::traffic(bcast(5, n, 2, 2));
  CHECK(t[2].send_peers == std::vector<core::Rank>(5, 3));
  CHECK(t[2].recvs == 0);
  CHECK(t[2].send_lengths ==
        std::vector<std::uint64_t>{512 << 10, 512 << 10, 512 << 10, 512 << 10, 1});
  CHECK(t[0].send_peers == std::vector<core::Rank>(5, 1));
  CHECK(t[0].recv_bytes == n);
  CHECK(t[1].sends == 0); // the root's ring predecessor only receives
  CHECK(t[1].recv_bytes == n);
  // LL: 32 KiB chunks.
  CHECK(testing::traffic(bcast(3, 256 << 10, 0, 1, 1))[0].sends == 8);
}
