#include "algorithm_test_support.hpp"
#include "collsim/algorithms/registry.hpp"
#include "in_network_test_support.hpp"

#include <catch2/catch.hpp>

using namespace collsim;

namespace {
constexpr auto kAllreduce = core::CollectiveKind::allreduce;

core::Schedule direct(const core::Topology* t, std::uint32_t p, std::uint64_t n) {
  const auto reg = algorithms::make_default_registry();
  return reg.generate(reg.find(kAllreduce, "collnet_direct"),
                      testing::innet_request(kAllreduce, p, n, t));
}
} // namespace

TEST_CASE("collnet_direct scatters to one head per NIC and reduces shards in the network switch",
          "[algorithms][allreduce][collnet_direct][in-network]") {
  // 2 nodes x 4 ranks, 2 NICs per node: devices 0-1 leave through NIC 0, 2-3 through NIC 1, so
  // the heads are ranks 0, 2 (node 0) and 4, 6 (node 1); shard 0 is [0, 400), shard 1 [400, 800).
  const core::Topology t = testing::innet_cluster(8, 4, false, true, 2);
  const std::uint64_t n = 800;
  const core::Schedule s = direct(&t, 8, n);
  REQUIRE(s.header().agents == std::vector<std::string>{"network"});
  REQUIRE(s.participants() == 9);
  // Simple only; per intra-node message NCCL's intraLat (3.7 us), and its interLat (31 us) shared
  // by the two messages of the round trip through the network switch.
  CHECK(s.header().protocol.name == "Simple");
  CHECK(s.header().protocol.message_latency.value == Approx(3.7e-6));
  CHECK(s.header().protocol.inter_node_latency.value == Approx(15.5e-6));
  const auto tr = testing::participant_traffic(s);
  for (const core::Rank r : {1U, 3U, 5U, 7U}) {
    CAPTURE(r);
    const core::Rank base = r < 4 ? 0 : 4;
    CHECK(tr[r].sends == 2);
    // Places 1 and 3 of their node start at head 1 mod 2 (NCCL's shift).
    CHECK(tr[r].send_peers == std::vector<core::Rank>{base + 2, base});
    CHECK(tr[r].send_bytes == n);
    CHECK(tr[r].recvs == 2);
    CHECK(tr[r].recv_bytes == n);
    CHECK(tr[r].reduced_bytes == 0);
  }
  for (const core::Rank r : {0U, 2U, 4U, 6U}) {
    CAPTURE(r);
    const core::Rank base = r < 4 ? 0 : 4;
    const core::Rank other_head = r == base ? base + 2 : base;
    // Its other shard to the other head, its shard to the switch, then to the 3 other ranks.
    CHECK(tr[r].sends == 5);
    CHECK(tr[r].send_peers.front() == other_head);
    CHECK(tr[r].send_peers[1] == 8);
    CHECK(tr[r].send_bytes == 5 * n / 2);
    // 3 contributions, the switch's result, the other head's shard.
    CHECK(tr[r].recvs == 5);
    CHECK(tr[r].reduced_bytes == 3 * n / 2);
  }
  // The switch receives each shard from both nodes' heads and sends it back to both.
  CHECK(tr[8].recvs == 4);
  CHECK(tr[8].reduced_bytes == n); // one recv_reduce per shard
  CHECK(tr[8].send_peers == std::vector<core::Rank>{0, 4, 2, 6});
  CHECK(tr[8].send_bytes == 2 * n);
}

TEST_CASE("collnet_direct on one node uses no agent and takes the first ranks as heads without "
          "NICs",
          "[algorithms][allreduce][collnet_direct][in-network]") {
  // One node with one NIC: rank 0 is the only head.
  const core::Topology t = testing::innet_cluster(4, 4, false, false, 1);
  const core::Schedule s = direct(&t, 4, 120);
  CHECK(s.header().agents.empty());
  const auto tr = testing::participant_traffic(s);
  CHECK(tr[0].recvs == 3);
  CHECK(tr[0].reduced_bytes == 360);
  CHECK(tr[0].send_peers == std::vector<core::Rank>{1, 2, 3});
  for (core::Rank r = 1; r < 4; ++r) {
    CHECK(tr[r].send_peers == std::vector<core::Rank>{0});
    CHECK(tr[r].send_bytes == 120);
    CHECK(tr[r].recv_bytes == 120);
  }
  // A partial last node: 6 ranks on nodes of 4 with 2 NICs; node 1's two ranks share NIC 0, so
  // rank 4 is its only head and owns both shards.
  const core::Topology partial = testing::innet_cluster(6, 4, false, true, 2);
  const auto tp = testing::participant_traffic(direct(&partial, 6, 100));
  CHECK(tp[5].send_peers == std::vector<core::Rank>{4, 4});
  CHECK(tp[4].send_peers == std::vector<core::Rank>{6, 6, 5, 5});
  CHECK(tp[6].send_peers == std::vector<core::Rank>{0, 4, 2, 4});
}

TEST_CASE("collnet_direct rotates each rank's scatter and the heads' results so that no rank "
          "receives from all at once",
          "[algorithms][allreduce][collnet_direct][in-network]") {
  // One node of 4 ranks with 4 NICs: every rank a head of one shard of 100 bytes. NCCL's shift
  // (connect.cc: localRank mod nHeads): rank r scatters to r+1, r+2, r+3 (mod 4), and a head's
  // result goes to the ranks after it in the same order.
  const core::Topology t = testing::innet_cluster(4, 4, false, false, 4);
  const core::Schedule s = direct(&t, 4, 400);
  const auto tr = testing::participant_traffic(s);
  for (core::Rank r = 0; r < 4; ++r) {
    CAPTURE(r);
    const std::vector<core::Rank> next{(r + 1) % 4, (r + 2) % 4, (r + 3) % 4};
    std::vector<core::Rank> twice = next;
    twice.insert(twice.end(), next.begin(), next.end());
    CHECK(tr[r].send_peers == twice);
    CHECK(tr[r].reduced_bytes == 300);
  }
  // Head 2 reduces its shard in the order the scatters reach it: rank 1 (its first send), then 0,
  // then 3 (its last).
  std::vector<core::Rank> reduce_from;
  for (core::OpId id = s.rank_begin(2); id < s.rank_end(2); ++id) {
    if (s.kind(id) == core::OpKind::recv_reduce) {
      reduce_from.push_back(s.peer(id));
    }
  }
  CHECK(reduce_from == std::vector<core::Rank>{1, 0, 3});
}

TEST_CASE("collnet_direct refuses more than 8 ranks per node and several nodes without SHARP",
          "[algorithms][allreduce][collnet_direct][in-network]") {
  const auto reg = algorithms::make_default_registry();
  const core::Topology big = testing::innet_cluster(16, 16, true, true);
  CHECK(testing::innet_refusal(reg, kAllreduce, "collnet_direct",
                               testing::innet_request(kAllreduce, 16, 64, &big)) ==
        "collnet_direct takes at most 8 ranks per node (NCCL_MAX_DIRECT_ARITY+1); the node of "
        "rank 0 holds 16");
  const core::Topology plain = testing::innet_cluster(8, 4, true, false);
  CHECK(testing::innet_refusal(reg, kAllreduce, "collnet_direct",
                               testing::innet_request(kAllreduce, 8, 64, &plain)) ==
        "collnet_direct reduces in the network switch (InfiniBand SHARP) when the ranks span more "
        "than one node (2 here); the topology has no reducing network switch");
  CHECK(testing::innet_refusal(reg, kAllreduce, "collnet_direct",
                               testing::innet_request(kAllreduce, 3, 64)) ==
        "collnet_direct reduces in the network switch (InfiniBand SHARP) when the ranks span more "
        "than one node; without a topology every rank is a node of its own (3 nodes) and there is "
        "no reducing switch");
  // One node needs no switch; one rank needs nothing.
  CHECK(testing::innet_refusal(reg, kAllreduce, "collnet_direct",
                               testing::innet_request(kAllreduce, 4, 64, &plain))
            .empty());
  CHECK(testing::innet_refusal(reg, kAllreduce, "collnet_direct",
                               testing::innet_request(kAllreduce, 1, 64))
            .empty());
  CHECK(reg.find(kAllreduce, "nccl:collnetdirect").name == "collnet_direct");
  CHECK_FALSE(reg.cost(reg.find(kAllreduce, "collnet_direct"),
                       testing::innet_request(kAllreduce, 4, 64, &plain))
                  .has_value());
}
