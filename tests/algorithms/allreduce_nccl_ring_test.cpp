#include "algorithm_test_support.hpp"
#include "collsim/algorithms/registry.hpp"
#include "collsim/topologies/build.hpp"

#include <catch2/catch.hpp>

using namespace collsim;

namespace {
constexpr std::uint64_t kKiB = 1024;
constexpr std::uint64_t kMiB = 1024 * kKiB;

algorithms::Request ring_request(std::uint32_t p, std::uint64_t n, std::int64_t protocol,
                                 std::int64_t channels) {
  algorithms::Request req = testing::allreduce_request(p, n);
  req.params["protocol"] = protocol;
  req.params["channels"] = channels;
  return req;
}

core::Schedule ring(const algorithms::Request& req) {
  const auto reg = algorithms::make_default_registry();
  return reg.generate(reg.find(core::CollectiveKind::allreduce, "nccl:ring"), req);
}

core::Topology cluster(std::uint32_t ranks, std::uint32_t per_node, bool nvswitch) {
  core::ClusterSpec c;
  c.devices_per_node = per_node;
  c.node_switch_reduces = nvswitch;
  return topologies::build_cluster(c, core::EndpointSpec{}, ranks);
}
} // namespace

TEST_CASE("nccl ring allreduce cuts each channel's slice into loops of p chunks of the protocol's "
          "chunk size",
          "[algorithms][allreduce][nccl]") {
  // chunk = buffSize / NCCL_STEPS x chunkSteps: Simple 4 MiB / 8 x 4, LL 512 KiB / 8 / 2, LL128
  // 4,915,200 / 8 x 15/16. Two ranks, one channel, exactly three loops of two chunks.
  struct Case {
    std::int64_t protocol;
    std::uint64_t chunk;
  };
  for (const Case c : {Case{0, 2 * kMiB}, Case{1, 32 * kKiB}, Case{2, 576000}}) {
    CAPTURE(c.protocol);
    const auto t = testing::traffic(ring(ring_request(2, 6 * c.chunk, c.protocol, 1)));
    for (const auto& rank : t) {
      CHECK(rank.sends == 3 * 2 * (2 - 1));
      CHECK(rank.send_lengths == std::vector<std::uint64_t>(6, c.chunk));
      CHECK(rank.reduced_bytes == 3 * c.chunk);
    }
  }
  // A shorter last loop is split into p near-equal chunks: 2 MiB + 5 bytes on 2 ranks -> one loop.
  const auto t = testing::traffic(ring(ring_request(2, 2 * kMiB + 5, 0, 1)));
  CHECK(t[0].send_lengths == std::vector<std::uint64_t>{kMiB + 2, kMiB + 3});
}

TEST_CASE("nccl ring allreduce's chunk is an eighth of `buffsize` x chunkSteps (NCCL_BUFFSIZE)",
          "[algorithms][allreduce][nccl]") {
  // init.cc computeBuffSizes: buffSizes[proto] from NCCL_BUFFSIZE (Simple), NCCL_LL_BUFFSIZE,
  // NCCL_LL128_BUFFSIZE; enqueue.cc: stepSize = buffSize / NCCL_STEPS. Simple at 8 MiB: 4 MiB
  // chunks (chunkSteps 4); LL at 1 MiB: 64 KiB chunks (half of a 128 KiB step); LL128 at 2 MiB:
  // 256 KiB steps x 15/16 = 245760 B.
  struct Case {
    std::int64_t protocol;
    std::int64_t buffer;
    std::uint64_t chunk;
  };
  for (const Case c : {Case{0, 8 * kMiB, 4 * kMiB}, Case{1, kMiB, 64 * kKiB},
                       Case{2, 2 * kMiB, 245760}, Case{0, 0, 2 * kMiB}}) {
    CAPTURE(c.protocol, c.buffer);
    algorithms::Request req = ring_request(2, 6 * c.chunk, c.protocol, 1);
    req.params["buffsize"] = c.buffer;
    const auto t = testing::traffic(ring(req));
    CHECK(t[0].send_lengths == std::vector<std::uint64_t>(6, c.chunk));
  }
  const auto reg = algorithms::make_default_registry();
  algorithms::Request tiny = ring_request(2, kMiB, 0, 1);
  tiny.params["buffsize"] = 4096;
  for (const char* name : {"nccl_ring", "nccl_tree"}) {
    CHECK(reg.refusal(reg.find(core::CollectiveKind::allreduce, name), tiny) ==
          "buffsize=4096 is below 65536 bytes (0 takes NCCL's default buffer)");
  }
  for (const auto c : {core::CollectiveKind::allgather, core::CollectiveKind::reduce_scatter,
                       core::CollectiveKind::bcast, core::CollectiveKind::reduce}) {
    algorithms::Request r = tiny;
    r.collective = c;
    CHECK(reg.refusal(reg.find(c, "nccl_ring"), r) ==
          "buffsize=4096 is below 65536 bytes (0 takes NCCL's default buffer)");
  }
}

TEST_CASE("nccl ring allreduce splits the buffer into near-equal channel slices, interleaved",
          "[algorithms][allreduce][nccl]") {
  // 301 bytes, 3 channels: slices of 101, 100 and 100 bytes, each a 2-rank ring of two chunks.
  const core::Schedule s = ring(ring_request(2, 301, 0, 3));
  const auto t = testing::traffic(s);
  // Rank 0 (ring position 0) first sends chunk i-1 = chunk 1 of every channel: 50, 50, 50 bytes;
  // then chunk 0 (51, 50, 50) after reducing it.
  CHECK(t[0].send_lengths == std::vector<std::uint64_t>{50, 50, 50, 51, 50, 50});
  CHECK(t[0].send_bytes == 301);
  std::vector<std::uint64_t> first_offsets;
  for (core::OpId id = s.rank_begin(0); id < s.rank_begin(0) + 3; ++id) {
    first_offsets.push_back(s.target(id).offset);
  }
  CHECK(first_offsets == std::vector<std::uint64_t>{51, 151, 251});
  CHECK(s.op_count() == 2ULL * 3 * 4);
}

TEST_CASE("nccl ring allreduce follows the node layout's ring and sends 2(p-1) chunks per loop",
          "[algorithms][allreduce][nccl]") {
  for (const std::uint32_t p : {3U, 5U, 8U}) {
    CAPTURE(p);
    const auto t = testing::traffic(ring(ring_request(p, 64 * p, 0, 1)));
    for (core::Rank r = 0; r < p; ++r) {
      CHECK(t[r].send_peers == std::vector<core::Rank>(2 * (p - 1), (r + 1) % p));
      CHECK(t[r].send_bytes == 2ULL * (p - 1) * 64);
      CHECK(t[r].reduced_bytes == (p - 1) * 64ULL);
    }
  }
}

TEST_CASE("nccl algorithms fill the wire protocol with NCCL's baseLatencies and hwLatencies",
          "[algorithms][allreduce][nccl]") {
  // algorithms.md 3.1: Ring LL base 6.6 us; PCI 1.0, NVLINK 0.6, NET 2.7.
  const core::Schedule pci = ring(ring_request(4, 64, 1, 1));
  const core::Protocol& ll = pci.header().protocol;
  CHECK(ll.name == "LL");
  CHECK(ll.efficiency == 0.5);
  CHECK(ll.launch.value == Approx(6.6e-6));
  CHECK(ll.message_latency.value == Approx(1.0e-6));
  CHECK(ll.inter_node_latency.value == Approx(2.7e-6));
  // With NVSwitches in the nodes the intra-node class is NVLINK.
  const core::Topology nv = cluster(8, 4, true);
  algorithms::Request req = ring_request(8, 64, 2, 1);
  req.topology = &nv;
  const core::Protocol ll128 = ring(req).header().protocol;
  CHECK(ll128.name == "LL128");
  CHECK(ll128.efficiency == 120.0 / 128.0);
  CHECK(ll128.launch.value == Approx(14.0e-6));
  CHECK(ll128.message_latency.value == Approx(1.9e-6));
  CHECK(ll128.inter_node_latency.value == Approx(4.0e-6));
  // PCIe switches: Ring Simple 8.4 us launch, PCI 5.7, NET 14.
  const core::Topology pcie = cluster(8, 4, false);
  req = ring_request(8, 64, 0, 1);
  req.topology = &pcie;
  const core::Protocol simple = ring(req).header().protocol;
  CHECK(simple.name == "Simple");
  CHECK(simple.efficiency == 1.0);
  CHECK(simple.launch.value == Approx(8.4e-6));
  CHECK(simple.message_latency.value == Approx(5.7e-6));
  CHECK(simple.inter_node_latency.value == Approx(14.0e-6));
}

TEST_CASE("nccl ring allreduce offers the protocol as a choice and declares no closed form",
          "[algorithms][allreduce][nccl]") {
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(core::CollectiveKind::allreduce, "nccl_ring");
  const algorithms::ParamSpec& protocol = algo.params.at(0);
  CHECK(protocol.name == "protocol");
  CHECK(protocol.choices == std::vector<std::string>{"simple", "ll", "ll128"});
  CHECK(protocol.default_value == 0);
  CHECK(algorithms::resolve_params(algo, {{"protocol", "ll128"}}).at("protocol") == 2);
  CHECK_FALSE(reg.cost(algo, testing::allreduce_request(4, 4096)).has_value());
  CHECK(algo.cost_formula.find("not exact") != std::string::npos);
}
