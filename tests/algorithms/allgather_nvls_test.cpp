#include "algorithm_test_support.hpp"
#include "collsim/algorithms/registry.hpp"
#include "in_network_test_support.hpp"

#include <catch2/catch.hpp>

using namespace collsim;

namespace {
constexpr auto kAllgather = core::CollectiveKind::allgather;

core::Schedule nvls(const core::Topology* t, std::uint32_t p, std::uint64_t n) {
  const auto reg = algorithms::make_default_registry();
  return reg.generate(reg.find(kAllgather, "nccl:nvls"),
                      testing::innet_request(kAllgather, p, n, t));
}
} // namespace

TEST_CASE("nvls allgather: every rank sends its block once and receives the others from its "
          "switch",
          "[algorithms][allgather][nvls][in-network]") {
  // 2 nodes x 3 ranks, blocks of 100 bytes.
  const core::Topology t = testing::innet_cluster(6, 3, true, true);
  const std::uint64_t n = 600;
  const core::Schedule s = nvls(&t, 6, n);
  REQUIRE(s.header().agents == std::vector<std::string>{"node0/switch", "node1/switch", "network"});
  const auto tr = testing::participant_traffic(s);
  for (core::Rank r = 0; r < 6; ++r) {
    CAPTURE(r);
    CHECK(tr[r].send_peers == std::vector<core::Rank>{r < 3 ? 6U : 7U});
    CHECK(tr[r].send_bytes == n / 6);
    CHECK(tr[r].recvs == 5);
    CHECK(tr[r].recv_bytes == n - n / 6);
    CHECK(tr[r].reduced_bytes == 0);
  }
  for (const core::Rank sw : {6U, 7U}) {
    CAPTURE(sw);
    CHECK(tr[sw].recvs == 6);             // 3 local blocks, 3 from the network switch
    CHECK(tr[sw].sends == 3 * 3 + 3 * 3); // local: 2 ranks + network; remote: 3 ranks
    CHECK(tr[sw].reduced_bytes == 0);
  }
  CHECK(std::vector<core::Rank>(tr[6].send_peers.begin(), tr[6].send_peers.begin() + 3) ==
        std::vector<core::Rank>{1, 2, 8});
  CHECK(tr[8].recvs == 6);
  CHECK(tr[8].send_peers == std::vector<core::Rank>{7, 7, 7, 6, 6, 6});
}

TEST_CASE("nvls allgather on one node multicasts through the switch alone",
          "[algorithms][allgather][nvls][in-network]") {
  const core::Topology t = testing::innet_cluster(4, 4, true, false);
  const core::Schedule s = nvls(&t, 4, 40);
  CHECK(s.header().agents == std::vector<std::string>{"node0/switch"});
  const auto tr = testing::participant_traffic(s);
  CHECK(tr[4].recvs == 4);
  CHECK(tr[4].sends == 12);
  CHECK(tr[2].recv_bytes == 30);
}

TEST_CASE("nvls allgather refuses without NVLink SHARP, beyond 32 ranks per node, and across "
          "nodes without SHARP",
          "[algorithms][allgather][nvls][in-network]") {
  const auto reg = algorithms::make_default_registry();
  const core::Topology none = testing::innet_cluster(4, 4, false, true);
  CHECK(testing::innet_refusal(reg, kAllgather, "nvls",
                               testing::innet_request(kAllgather, 4, 64, &none)) ==
        "nvls reduces in each node's NVSwitch (NVLink SHARP); topology node 0 (of rank 0) has no "
        "reducing switch");
  const core::Topology big = testing::innet_cluster(33, 33, true, true);
  CHECK(testing::innet_refusal(reg, kAllgather, "nvls",
                               testing::innet_request(kAllgather, 33, 64, &big)) ==
        "nvls takes at most 32 ranks per node (NCCL_MAX_NVLS_ARITY); the node of rank 0 holds 33");
  const core::Topology no_net = testing::innet_cluster(8, 4, true, false);
  CHECK_FALSE(testing::innet_refusal(reg, kAllgather, "nvls",
                                     testing::innet_request(kAllgather, 8, 64, &no_net))
                  .empty());
}
