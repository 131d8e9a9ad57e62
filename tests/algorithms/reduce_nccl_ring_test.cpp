#include "algorithm_test_support.hpp"
#include "collsim/algorithms/registry.hpp"

#include <catch2/catch.hpp>

using namespace collsim;

TEST_CASE("nccl ring reduce is a chain along the ring that ends at the root",
          "[algorithms][reduce][nccl]") {
  // 4 ranks, root 1: chain 2 -> 3 -> 0 -> 1; 1 MiB on one channel in 512 KiB chunks.
  algorithms::Request req = testing::allreduce_request(4, 1 << 20);
  req.collective = core::CollectiveKind::reduce;
  req.root = 1;
  req.params["channels"] = 1;
  const auto reg = algorithms::make_default_registry();
  const auto t =
      testing::traffic(reg.generate(reg.find(core::CollectiveKind::reduce, "nccl:ring"), req));
  CHECK(t[2].send_peers == std::vector<core::Rank>{3, 3});
  CHECK(t[2].recvs == 0);
  CHECK(t[3].send_peers == std::vector<core::Rank>{0, 0});
  CHECK(t[3].reduced_bytes == 1 << 20);
  CHECK(t[0].send_peers == std::vector<core::Rank>{1, 1});
  CHECK(t[1].sends == 0);
  CHECK(t[1].reduced_bytes == 1 << 20);
  CHECK(t[1].send_lengths.empty());
}
