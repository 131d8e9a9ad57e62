#include "algorithm_test_support.hpp"
#include "collsim/algorithms/registry.hpp"
#include "in_network_test_support.hpp"

#include <catch2/catch.hpp>

using namespace collsim;

namespace {
constexpr auto kAllreduce = core::CollectiveKind::allreduce;

core::Schedule sharp(const core::Topology* t, std::uint32_t p, std::uint64_t n) {
  const auto reg = algorithms::make_default_registry();
  return reg.generate(reg.find(kAllreduce, "mv2:sharp"),
                      testing::innet_request(kAllreduce, p, n, t));
}
} // namespace

TEST_CASE("sharp allreduce: binomial reduce to the node leader, switch allreduce, binomial bcast",
          "[algorithms][allreduce][sharp][in-network]") {
  const core::Topology t = testing::innet_cluster(8, 4, false, true);
  const std::uint64_t n = 100;
  const core::Schedule s = sharp(&t, 8, n);
  REQUIRE(s.header().agents == std::vector<std::string>{"network"});
  const auto tr = testing::participant_traffic(s);
  for (const core::Rank b : {0U, 4U}) {
    CAPTURE(b);
    // Leader: reduces from local 1 and 2, round trip through the switch, sends to 2 then 1.
    CHECK(tr[b].send_peers == std::vector<core::Rank>{8, b + 2, b + 1});
    CHECK(tr[b].recvs == 3);
    CHECK(tr[b].reduced_bytes == 2 * n);
    CHECK(tr[b + 1].send_peers == std::vector<core::Rank>{b});
    CHECK(tr[b + 2].send_peers == std::vector<core::Rank>{b, b + 3});
    CHECK(tr[b + 2].reduced_bytes == n);
    CHECK(tr[b + 3].send_peers == std::vector<core::Rank>{b + 2});
    CHECK(tr[b + 3].recv_bytes == n);
  }
  CHECK(tr[8].recvs == 2);
  CHECK(tr[8].reduced_bytes == n);
  CHECK(tr[8].send_peers == std::vector<core::Rank>{0, 4});
}

TEST_CASE("sharp allreduce on one node of 6 ranks is a binomial reduce and bcast, no agent",
          "[algorithms][allreduce][sharp][in-network]") {
  const core::Topology t = testing::innet_cluster(6, 6, false, false);
  const core::Schedule s = sharp(&t, 6, 10);
  CHECK(s.header().agents.empty());
  const auto tr = testing::participant_traffic(s);
  CHECK(tr[0].send_peers == std::vector<core::Rank>{4, 2, 1});
  CHECK(tr[0].reduced_bytes == 30);
  CHECK(tr[4].send_peers == std::vector<core::Rank>{0, 5});
  CHECK(tr[5].send_peers == std::vector<core::Rank>{4});
  CHECK(tr[3].send_peers == std::vector<core::Rank>{2});
  std::uint64_t sends = 0;
  for (const auto& r : tr) {
    sends += r.sends;
  }
  CHECK(sends == 2 * 5); // p-1 up, p-1 down
}

TEST_CASE("sharp allreduce refuses several nodes without a reducing network switch",
          "[algorithms][allreduce][sharp][in-network]") {
  const auto reg = algorithms::make_default_registry();
  const core::Topology plain = testing::innet_cluster(8, 4, true, false);
  CHECK(testing::innet_refusal(reg, kAllreduce, "sharp",
                               testing::innet_request(kAllreduce, 8, 64, &plain)) ==
        "sharp reduces in the network switch (InfiniBand SHARP) when the ranks span more than one "
        "node (2 here); the topology has no reducing network switch");
  CHECK_FALSE(
      testing::innet_refusal(reg, kAllreduce, "sharp", testing::innet_request(kAllreduce, 2, 64))
          .empty());
  CHECK(testing::innet_refusal(reg, kAllreduce, "sharp",
                               testing::innet_request(kAllreduce, 4, 64, &plain))
            .empty());
}
