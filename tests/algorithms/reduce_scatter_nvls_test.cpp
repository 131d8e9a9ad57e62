#include "algorithm_test_support.hpp"
#include "collsim/algorithms/registry.hpp"
#include "in_network_test_support.hpp"

#include <catch2/catch.hpp>

using namespace collsim;

namespace {
constexpr auto kReduceScatter = core::CollectiveKind::reduce_scatter;

core::Schedule nvls(const core::Topology* t, std::uint32_t p, std::uint64_t n) {
  const auto reg = algorithms::make_default_registry();
  return reg.generate(reg.find(kReduceScatter, "nccl:nvls"),
                      testing::innet_request(kReduceScatter, p, n, t));
}
} // namespace

TEST_CASE("nvls reduce_scatter: every rank sends n to its switch and receives its block",
          "[algorithms][reduce_scatter][nvls][in-network]") {
  // 2 nodes x 2 ranks, blocks of 100 bytes.
  const core::Topology t = testing::innet_cluster(4, 2, true, true);
  const std::uint64_t n = 400;
  const core::Schedule s = nvls(&t, 4, n);
  REQUIRE(s.header().agents == std::vector<std::string>{"node0/switch", "node1/switch", "network"});
  const auto tr = testing::participant_traffic(s);
  for (core::Rank r = 0; r < 4; ++r) {
    CAPTURE(r);
    CHECK(tr[r].send_peers == std::vector<core::Rank>(4, r < 2 ? 4U : 5U));
    CHECK(tr[r].send_bytes == n);
    CHECK(tr[r].recvs == 1);
    CHECK(tr[r].recv_bytes == n / 4);
  }
  CHECK(tr[4].recvs == 4 * 2 + 2);
  CHECK(tr[4].reduced_bytes == n);
  CHECK(tr[4].send_peers == std::vector<core::Rank>{6, 6, 6, 6, 0, 1});
  CHECK(tr[5].send_peers == std::vector<core::Rank>{6, 6, 6, 6, 2, 3});
  CHECK(tr[6].recvs == 8);
  CHECK(tr[6].reduced_bytes == n);
  CHECK(tr[6].send_peers == std::vector<core::Rank>{4, 4, 5, 5});
}

TEST_CASE("nvls reduce_scatter on one node delivers each block from the switch to its owner",
          "[algorithms][reduce_scatter][nvls][in-network]") {
  const core::Topology t = testing::innet_cluster(3, 3, true, false);
  const core::Schedule s = nvls(&t, 3, 30);
  CHECK(s.header().agents == std::vector<std::string>{"node0/switch"});
  const auto tr = testing::participant_traffic(s);
  CHECK(tr[3].recvs == 9);
  CHECK(tr[3].reduced_bytes == 2 * 30);
  CHECK(tr[3].send_peers == std::vector<core::Rank>{0, 1, 2});
}

TEST_CASE("nvls reduce_scatter refuses without NVLink SHARP and across nodes without SHARP",
          "[algorithms][reduce_scatter][nvls][in-network]") {
  const auto reg = algorithms::make_default_registry();
  const core::Topology no_net = testing::innet_cluster(8, 4, true, false);
  CHECK(testing::innet_refusal(reg, kReduceScatter, "nvls",
                               testing::innet_request(kReduceScatter, 8, 64, &no_net)) ==
        "nvls reduces in the network switch (InfiniBand SHARP) when the ranks span more than one "
        "node (2 here); the topology has no reducing network switch");
  CHECK_FALSE(testing::innet_refusal(reg, kReduceScatter, "nvls",
                                     testing::innet_request(kReduceScatter, 4, 64))
                  .empty());
}
