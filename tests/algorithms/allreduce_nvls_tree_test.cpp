#include "algorithm_test_support.hpp"
#include "collsim/algorithms/registry.hpp"
#include "collsim/topologies/build.hpp"

#include <catch2/catch.hpp>

using namespace collsim;

namespace {
core::Topology cluster(std::uint32_t ranks, std::uint32_t per_node, bool nvswitch) {
  core::ClusterSpec c;
  c.devices_per_node = per_node;
  c.node_switch_reduces = nvswitch;
  return topologies::build_cluster(c, core::EndpointSpec{}, ranks);
}

algorithms::Request nvls_request(const core::Topology* t, std::uint32_t p, std::uint64_t n) {
  algorithms::Request req = testing::allreduce_request(p, n);
  req.topology = t;
  return req;
}

struct Peers {
  std::vector<core::Rank> sends;
  std::vector<core::Rank> recvs;
  std::uint64_t reduced = 0;
};

/// What any participant (rank or agent) sends to and receives from, in program order.
Peers peers(const core::Schedule& s, core::Rank who) {
  Peers out;
  for (core::OpId id = s.rank_begin(who); id < s.rank_end(who); ++id) {
    switch (s.kind(id)) {
    case core::OpKind::send: out.sends.push_back(s.peer(id)); break;
    case core::OpKind::recv_reduce: out.reduced += s.length(id); [[fallthrough]];
    case core::OpKind::recv: out.recvs.push_back(s.peer(id)); break;
    default: break;
    }
  }
  return out;
}
} // namespace

TEST_CASE("nvls_tree allreduce: node switches reduce and multicast, heads join the double tree",
          "[algorithms][allreduce][nccl][in-network]") {
  // 2 nodes x 4 ranks, 8 bytes, 2 channels of 4 bytes: chunk 0 on tree 0 (node 0 root) with head
  // local rank 0, chunk 1 on tree 1 (mirror: node 1 root) with head local rank 1.
  const core::Topology t = cluster(8, 4, true);
  const auto reg = algorithms::make_default_registry();
  const core::Schedule s = reg.generate(reg.find(core::CollectiveKind::allreduce, "nccl:nvlstree"),
                                        nvls_request(&t, 8, 8));
  REQUIRE(s.header().agents == std::vector<std::string>{"node0/switch", "node1/switch"});
  CHECK(s.participants() == 10);
  CHECK(s.header().protocol.name == "Simple");
  // NCCL charges NVLSTree one 25 us intraLat for its four intra-node messages: 6.25 us each.
  CHECK(s.header().protocol.message_latency.value == Approx(25e-6 / 4));
  CHECK(s.header().protocol.inter_node_latency.value == Approx(20.9e-6));
  CHECK(s.header().protocol.launch.value == 0.0);
  // Parts are ordered by level (nccl::tree_steps, a level being 2 x 8 x 2 = 32 chunk positions).
  // Rank 1 (node 0 is 1 deep in tree 1, 0 deep in tree 0): chunk 1 to its switch (position 1),
  // chunk 0 to its switch (32), chunk 1's node sum back and up to rank 5, the head of node 1 and
  // root of tree 1 (65), chunk 1's result from rank 5, handed to the switch to multicast (129),
  // chunk 0's result from the switch (160).
  const Peers r1 = peers(s, 1);
  CHECK(r1.sends == std::vector<core::Rank>{8, 8, 5, 8});
  CHECK(r1.recvs == std::vector<core::Rank>{8, 5, 8});
  // Rank 4 heads chunk 0 in node 1 (a child of node 0 in tree 0): chunk 0 and chunk 1 to its
  // switch (0, 33), chunk 0's node sum up to rank 0 (64), its result from rank 0 to the switch
  // (128), chunk 1's result from the switch (161).
  const Peers r4 = peers(s, 4);
  CHECK(r4.sends == std::vector<core::Rank>{9, 9, 0, 9});
  CHECK(r4.recvs == std::vector<core::Rank>{9, 0, 9});
  // Rank 5 heads chunk 1 in node 1, the root of tree 1: it reduces rank 1's node sum.
  const Peers r5 = peers(s, 5);
  CHECK(r5.sends == std::vector<core::Rank>{9, 9, 1, 9});
  CHECK(r5.reduced == 4);
  // Switch of node 0: 4 receives per chunk (3 reduced), the sum to the head, the result from the
  // head, 3 multicast sends; chunk 1's up part (33) before chunk 0's (64), chunk 0's down part
  // (128) before chunk 1's (161).
  const Peers sw0 = peers(s, 8);
  CHECK(sw0.recvs == std::vector<core::Rank>{0, 1, 2, 3, 0, 1, 2, 3, 0, 1});
  CHECK(sw0.reduced == 2 * 3 * 4);
  CHECK(sw0.sends == std::vector<core::Rank>{1, 0, 1, 2, 3, 0, 2, 3});
}

TEST_CASE("nvls_tree allreduce refuses without reducing node switches, on one node, and with LL",
          "[algorithms][allreduce][nccl][in-network]") {
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(core::CollectiveKind::allreduce, "nvls_tree");
  algorithms::Request none = nvls_request(nullptr, 8, 64);
  CHECK(reg.refusal(algo, none) == "NVLS-tree needs a topology whose nodes have a reducing NVLink "
                                   "switch (NVLink SHARP); there is no topology");
  const core::Topology pcie = cluster(8, 4, false);
  algorithms::Request plain = nvls_request(&pcie, 8, 64);
  CHECK(reg.refusal(algo, plain) ==
        "NVLS-tree needs a reducing NVLink switch (NVLink SHARP) in every node; node 0 has none");
  const core::Topology one = cluster(4, 4, true);
  algorithms::Request single = nvls_request(&one, 4, 64);
  CHECK(reg.refusal(algo, single) == "NCCL disables NVLS-tree on a single node");
  const core::Topology two = cluster(8, 4, true);
  algorithms::Request ll = nvls_request(&two, 8, 64);
  ll.params["protocol"] = 1;
  CHECK(reg.refusal(algo, ll) == "NCCL runs NVLS-tree with the Simple protocol only");
  algorithms::Request tiny = nvls_request(&two, 8, 64);
  tiny.params["max_chunk"] = 100;
  CHECK(reg.refusal(algo, tiny) == "max_chunk=100 is below 4096 bytes (0 takes NCCL's default "
                                   "chunk)");
}

TEST_CASE("nvls_tree's max_chunk is the chunk NCCL shrinks for smaller messages",
          "[algorithms][allreduce][nccl][in-network]") {
  // 2 nodes of 4, 2 channels: concurrentOps = 2 x 4 = 8 (enqueue.cc's size rules). With
  // max_chunk 512 KiB (NCCL 2.18 to 2.20) a 256 MiB message (not below 32 x 8 x 512 KiB = 128
  // MiB) keeps 512 KiB chunks; the default, 128 KiB, stays 128 KiB: 4 times the chunks. At 4 MiB
  // the rules take 512 KiB down to 128 KiB (4 MiB < 16 x 8 x 256 KiB), as the default.
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(core::CollectiveKind::allreduce, "nvls_tree");
  const core::Topology t = cluster(8, 4, true);
  const auto sends = [&](std::uint64_t n, std::int64_t max_chunk) {
    algorithms::Request req = nvls_request(&t, 8, n);
    req.params["channels"] = 2;
    req.params["max_chunk"] = max_chunk;
    REQUIRE(reg.refusal(algo, req).empty());
    return peers(reg.generate(algo, req), 0).sends.size();
  };
  CHECK(sends(256ULL << 20, 0) == 4 * sends(256ULL << 20, 512 << 10));
  CHECK(sends(256ULL << 20, 0) == sends(256ULL << 20, 128 << 10));
  CHECK(sends(4ULL << 20, 0) == sends(4ULL << 20, 512 << 10));
}

TEST_CASE("nvls_tree allreduce computes the allreduce on partial nodes and many chunks",
          "[algorithms][allreduce][nccl][in-network]") {
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(core::CollectiveKind::allreduce, "nvls_tree");
  for (const std::uint32_t p : {5U, 9U, 14U}) {
    const core::Topology t = cluster(p, 4, true);
    // 1 MiB on 2+ nodes: 64 KiB chunks from 4 nodes (nvlsChunkSize 128 KiB below).
    const core::Schedule s = reg.generate(algo, nvls_request(&t, p, (1 << 20) + 7));
    CAPTURE(p);
    CHECK(s.header().agents.size() == (p + 3) / 4);
  }
}
