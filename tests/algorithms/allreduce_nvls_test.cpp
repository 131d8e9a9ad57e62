#include "algorithm_test_support.hpp"
#include "collsim/algorithms/registry.hpp"
#include "in_network_test_support.hpp"

#include <catch2/catch.hpp>

using namespace collsim;

namespace {
constexpr auto kAllreduce = core::CollectiveKind::allreduce;

core::Schedule nvls(const core::Topology* t, std::uint32_t p, std::uint64_t n) {
  const auto reg = algorithms::make_default_registry();
  return reg.generate(reg.find(kAllreduce, "nvls"), testing::innet_request(kAllreduce, p, n, t));
}
} // namespace

TEST_CASE("nvls allreduce: every rank sends n to its NVSwitch and receives n back",
          "[algorithms][allreduce][nvls][in-network]") {
  // 2 nodes x 4 ranks; 4 shards of 200 bytes.
  const core::Topology t = testing::innet_cluster(8, 4, true, true);
  const std::uint64_t n = 800;
  const core::Schedule s = nvls(&t, 8, n);
  REQUIRE(s.header().agents == std::vector<std::string>{"node0/switch", "node1/switch", "network"});
  // NCCL runs NVLS with Simple; its model charges one intraLat (25 us) and one interLat (18 us)
  // per operation, here two messages each (to the switch and back): half per message.
  CHECK(s.header().protocol.name == "Simple");
  CHECK(s.header().protocol.efficiency == 1.0);
  CHECK(s.header().protocol.launch.value == 0.0);
  CHECK(s.header().protocol.message_latency.value == Approx(12.5e-6));
  CHECK(s.header().protocol.inter_node_latency.value == Approx(9e-6));
  const auto tr = testing::participant_traffic(s);
  for (core::Rank r = 0; r < 8; ++r) {
    CAPTURE(r);
    const core::Rank sw = r < 4 ? 8 : 9;
    CHECK(tr[r].send_peers == std::vector<core::Rank>(4, sw));
    CHECK(tr[r].send_bytes == n);
    CHECK(tr[r].recvs == 4);
    CHECK(tr[r].recv_bytes == n);
    CHECK(tr[r].reduced_bytes == 0);
  }
  for (const core::Rank sw : {8U, 9U}) {
    CAPTURE(sw);
    CHECK(tr[sw].recvs == 4 * 4 + 4);       // 4 ranks' shards, then the network's results
    CHECK(tr[sw].reduced_bytes == 3 * n);   // 3 recv_reduces per shard
    CHECK(tr[sw].sends == 4 + 4 * 4);       // to the network switch, then multicast
    CHECK(tr[sw].send_peers.front() == 10); // shard 0 to the network switch first
    CHECK(tr[sw].send_bytes == 5 * n);
  }
  CHECK(tr[10].recvs == 8);
  CHECK(tr[10].reduced_bytes == n);
  CHECK(tr[10].send_peers == std::vector<core::Rank>{8, 9, 8, 9, 8, 9, 8, 9});
}

TEST_CASE("nvls allreduce on one node uses only the node switch, a partial node keeps the shards",
          "[algorithms][allreduce][nvls][in-network]") {
  const core::Topology one = testing::innet_cluster(4, 4, true, false);
  const core::Schedule s = nvls(&one, 4, 400);
  CHECK(s.header().agents == std::vector<std::string>{"node0/switch"});
  const auto tr = testing::participant_traffic(s);
  CHECK(tr[4].recvs == 16);
  CHECK(tr[4].sends == 16);
  CHECK(tr[4].reduced_bytes == 3 * 400);
  // 6 ranks on nodes of 4: node 1 holds 2 ranks but uses the same 4 shards.
  const core::Topology partial = testing::innet_cluster(6, 4, true, true);
  const auto tp = testing::participant_traffic(nvls(&partial, 6, 400));
  CHECK(tp[5].sends == 4);
  CHECK(tp[7].recvs == 4 * 2 + 4);
  CHECK(tp[7].reduced_bytes == 400);
  CHECK(tp[8].send_peers == std::vector<core::Rank>{6, 7, 6, 7, 6, 7, 6, 7});
}

TEST_CASE("nvls allreduce refuses without NVLink SHARP, and across nodes without SHARP",
          "[algorithms][allreduce][nvls][in-network]") {
  const auto reg = algorithms::make_default_registry();
  const core::Topology none = testing::innet_cluster(4, 4, false, true);
  CHECK(testing::innet_refusal(reg, kAllreduce, "nvls",
                               testing::innet_request(kAllreduce, 4, 64, &none)) ==
        "nvls reduces in each node's NVSwitch (NVLink SHARP); topology node 0 (of rank 0) has no "
        "reducing switch");
  const core::Topology no_net = testing::innet_cluster(8, 4, true, false);
  CHECK(testing::innet_refusal(reg, kAllreduce, "nvls",
                               testing::innet_request(kAllreduce, 8, 64, &no_net)) ==
        "nvls reduces in the network switch (InfiniBand SHARP) when the ranks span more than one "
        "node (2 here); the topology has no reducing network switch");
  CHECK(
      testing::innet_refusal(reg, kAllreduce, "nvls", testing::innet_request(kAllreduce, 2, 64)) ==
      "nvls reduces in each node's NVSwitch (NVLink SHARP); without a topology there is no "
      "reducing switch");
  CHECK(testing::innet_refusal(reg, kAllreduce, "nvls", testing::innet_request(kAllreduce, 1, 64))
            .empty());
  CHECK(reg.find(kAllreduce, "nccl:nvls").name == "nvls");
}
