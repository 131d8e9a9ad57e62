#include "algorithm_test_support.hpp"
#include "collsim/algorithms/registry.hpp"
#include "in_network_test_support.hpp"

#include <catch2/catch.hpp>

using namespace collsim;

namespace {
constexpr auto kAllreduce = core::CollectiveKind::allreduce;

core::Schedule chain(const core::Topology* t, std::uint32_t p, std::uint64_t n,
                     std::int64_t segment) {
  const auto reg = algorithms::make_default_registry();
  auto req = testing::innet_request(kAllreduce, p, n, t);
  req.params["segment_size"] = segment;
  return reg.generate(reg.find(kAllreduce, "collnet_chain"), req);
}
} // namespace

TEST_CASE("collnet_chain reduces up a chain to each node's lowest rank and through the switch",
          "[algorithms][allreduce][collnet_chain][in-network]") {
  // 2 nodes x 3 ranks, 1000 bytes in segments of 400, 400 and 200 bytes.
  const core::Topology t = testing::innet_cluster(6, 3, false, true);
  const std::uint64_t n = 1000;
  const core::Schedule s = chain(&t, 6, n, 400);
  REQUIRE(s.header().agents == std::vector<std::string>{"network"});
  const auto tr = testing::participant_traffic(s);
  for (const core::Rank base : {0U, 3U}) {
    CAPTURE(base);
    const auto& tail = tr[base + 2];
    CHECK(tail.send_peers == std::vector<core::Rank>(3, base + 1));
    CHECK(tail.send_lengths == std::vector<std::uint64_t>{400, 400, 200});
    CHECK(tail.recv_bytes == n);
    CHECK(tail.reduced_bytes == 0);
    const auto& mid = tr[base + 1];
    CHECK(mid.send_peers ==
          std::vector<core::Rank>{base, base, base, base + 2, base + 2, base + 2});
    CHECK(mid.recvs == 6);
    CHECK(mid.reduced_bytes == n);
    const auto& nic = tr[base];
    CHECK(nic.send_peers == std::vector<core::Rank>{6, 6, 6, base + 1, base + 1, base + 1});
    CHECK(nic.recv_bytes == 2 * n);
    CHECK(nic.reduced_bytes == n);
  }
  CHECK(tr[6].send_peers == std::vector<core::Rank>{0, 3, 0, 3, 0, 3});
  CHECK(tr[6].recvs == 6);
  CHECK(tr[6].reduced_bytes == n);
  // 4(p - N) + 4N operations per segment.
  CHECK(s.op_count() == 3 * (4 * (6 - 2) + 4 * 2));
}

TEST_CASE("collnet_chain sends the whole vector at once with segment_size 0 and needs no agent "
          "on one node",
          "[algorithms][allreduce][collnet_chain][in-network]") {
  const core::Topology t = testing::innet_cluster(4, 4, false, false);
  const core::Schedule s = chain(&t, 4, 1 << 20, 0);
  CHECK(s.header().agents.empty());
  const auto tr = testing::participant_traffic(s);
  CHECK(tr[0].send_peers == std::vector<core::Rank>{1});
  CHECK(tr[3].send_peers == std::vector<core::Rank>{2});
  CHECK(tr[3].send_lengths == std::vector<std::uint64_t>{1 << 20});
  CHECK(s.op_count() == 4 * 3);
  // The default segment is 256 KiB: 4 segments of 1 MiB.
  const auto reg = algorithms::make_default_registry();
  const core::Schedule d = reg.generate(reg.find(kAllreduce, "nccl:collnetchain"),
                                        testing::innet_request(kAllreduce, 4, 1 << 20, &t));
  CHECK(d.op_count() == 4 * 4 * 3);
}

TEST_CASE("collnet_chain refuses more than 8 ranks per node and several nodes without SHARP",
          "[algorithms][allreduce][collnet_chain][in-network]") {
  const auto reg = algorithms::make_default_registry();
  const core::Topology big = testing::innet_cluster(9, 9, true, true);
  CHECK(testing::innet_refusal(reg, kAllreduce, "collnet_chain",
                               testing::innet_request(kAllreduce, 9, 64, &big)) ==
        "collnet_chain takes at most 8 ranks per node (NCCL_MAX_DIRECT_ARITY+1); the node of "
        "rank 0 holds 9");
  const core::Topology plain = testing::innet_cluster(8, 4, true, false);
  CHECK(testing::innet_refusal(reg, kAllreduce, "collnet_chain",
                               testing::innet_request(kAllreduce, 8, 64, &plain)) ==
        "collnet_chain reduces in the network switch (InfiniBand SHARP) when the ranks span more "
        "than one node (2 here); the topology has no reducing network switch");
  CHECK_FALSE(testing::innet_refusal(reg, kAllreduce, "collnet_chain",
                                     testing::innet_request(kAllreduce, 2, 64))
                  .empty());
}
