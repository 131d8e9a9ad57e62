// nccl_p2p: NCCL's alltoall, gather and scatter as grouped send/recv (algorithms/nccl_p2p.cpp): the
// peers in init.cc's p2pSchedule order, each transfer split over `channels` parts, each part in
// chunks of the P2P chunk size.

#include "collsim/algorithms/nccl_constants.hpp"
#include "collsim/algorithms/registry.hpp"
#include "collsim/core/layout.hpp"
#include "collsim/core/verify.hpp"
#include "collsim/topologies/build.hpp"

#include <catch2/catch.hpp>
#include <set>
#include <vector>

using namespace collsim;

namespace {

core::Schedule p2p(std::uint32_t p, std::uint64_t n, std::int64_t channels,
                   const core::Topology* topo,
                   core::CollectiveKind collective = core::CollectiveKind::alltoall,
                   core::Rank root = 0) {
  const auto reg = algorithms::make_default_registry();
  algorithms::Request req;
  req.collective = collective;
  req.root = root;
  req.ranks = p;
  req.bytes = core::Bytes{n};
  req.topology = topo;
  req.params["channels"] = channels;
  const auto& algo = reg.find(collective, "nccl_p2p");
  REQUIRE(reg.refusal(algo, req).empty());
  return reg.generate(algo, req);
}

/// Two GPUs on one PCIe node (`system` topology): NCCL's PCI P2P chunk, 128 KiB.
core::Topology pcie_pair() {
  core::TopologySpec spec;
  spec.kind = "system";
  spec.system.nodes = 1;
  spec.system.node.gpus = 2;
  return topologies::build(spec, 2);
}

/// The peers rank r sends to (or receives from), in program order, each once.
std::vector<core::Rank> order(const core::Schedule& s, core::Rank r,
                              core::OpKind kind = core::OpKind::send) {
  std::vector<core::Rank> out;
  for (core::OpId id = s.rank_begin(r); id < s.rank_end(r); ++id) {
    if (s.kind(id) == kind && (out.empty() || out.back() != s.peer(id))) {
      out.push_back(s.peer(id));
    }
  }
  return out;
}

core::Topology cluster(std::uint32_t ranks, std::uint32_t per_node) {
  core::ClusterSpec c;
  c.devices_per_node = per_node;
  return topologies::build_cluster(c, core::EndpointSpec{}, ranks);
}

} // namespace

TEST_CASE("nccl_p2p visits the peers in NCCL's p2pSchedule order", "[algorithms][alltoall][nccl]") {
  // One node of 8: the node is one group, local deltas 0, 1, ..., 7: rank 3 sends to 4, 5, 6, 7,
  // 0, 1, 2.
  const core::Topology one = cluster(8, 8);
  CHECK(order(p2p(8, 8 << 10, 1, &one), 3) == std::vector<core::Rank>{4, 5, 6, 7, 0, 1, 2});
  // Two nodes of 4 (groups of gcd(8, 4) = 4 ranks, one per node): its own node first, then the
  // other node from the same local rank on.
  const core::Topology two = cluster(8, 4);
  CHECK(order(p2p(8, 8 << 10, 1, &two), 1) == std::vector<core::Rank>{2, 3, 0, 5, 6, 7, 4});
  // Five single-rank nodes: groups of one, group deltas (x^2 + x)/2 mod 8 = 0, 1, 3, 6, 2, 7, 5, 4,
  // those below 5: 0, 1, 3, 2, 4.
  CHECK(order(p2p(5, 5 << 10, 1, nullptr), 0) == std::vector<core::Rank>{1, 3, 2, 4});
}

TEST_CASE("nccl_p2p splits each transfer over its channels and cuts them into P2P chunks",
          "[algorithms][alltoall][nccl]") {
  // 2 ranks on one PCIe node (128 KiB chunks), 1 MiB each way in 2 parts of 512 KiB: 4 chunks a
  // part, 8 sends and 8 receives a rank, on issue streams 0 and 1, plus the local copy.
  const core::Topology pcie = pcie_pair();
  const core::Schedule s = p2p(2, 2 << 20, 2, &pcie);
  CHECK(core::check_semantics(s).summary() == "");
  std::uint32_t sends = 0;
  for (core::OpId id = s.rank_begin(0); id < s.rank_end(0); ++id) {
    if (s.kind(id) == core::OpKind::send) {
      ++sends;
      CHECK(s.length(id) == 128U << 10);
      CHECK(s.stream(id) < 2);
    }
  }
  CHECK(sends == 8);
}

TEST_CASE("nccl_p2p's `chunk` is the P2P chunk (NCCL_P2P_*_CHUNKSIZE), refused below 4 KiB",
          "[algorithms][alltoall][nccl]") {
  // The PCIe pair above with NCCL_P2P_PCI_CHUNKSIZE=262144: 1 MiB each way in 2 parts of 512 KiB,
  // 2 chunks of 256 KiB a part: 4 sends a rank.
  const core::Topology pcie = pcie_pair();
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(core::CollectiveKind::alltoall, "nccl_p2p");
  algorithms::Request req;
  req.collective = core::CollectiveKind::alltoall;
  req.ranks = 2;
  req.bytes = core::Bytes{2 << 20};
  req.topology = &pcie;
  req.params["channels"] = 2;
  req.params["chunk"] = 256 << 10;
  const core::Schedule s = reg.generate(algo, req);
  CHECK(core::check_semantics(s).summary() == "");
  std::vector<std::uint64_t> lengths;
  for (core::OpId id = s.rank_begin(0); id < s.rank_end(0); ++id) {
    if (s.kind(id) == core::OpKind::send) {
      lengths.push_back(s.length(id));
    }
  }
  CHECK(lengths == std::vector<std::uint64_t>(4, 256U << 10));
  req.params["chunk"] = 1000;
  CHECK(reg.refusal(algo, req) == "chunk=1000 is below 4096 bytes (0 takes NCCL's default chunk)");
  // The channel split follows the chunk too: parts of at least an eighth of it on one node.
  CHECK(algorithms::nccl::p2p_op_channels(1 << 20, 8, 8, false, false) == 8);
  CHECK(algorithms::nccl::p2p_op_channels(1 << 20, 8, 8, false, false, 1 << 20) == 8);
  CHECK(algorithms::nccl::p2p_op_channels(64 << 10, 8, 8, false, false) == 4);
  CHECK(algorithms::nccl::p2p_op_channels(64 << 10, 8, 8, false, false, 512 << 10) == 1);
}

TEST_CASE("nccl_p2p gather and scatter move each block once, to or from the root, in round order",
          "[algorithms][gather][scatter][nccl]") {
  // Two nodes of 4, root 5 (node 1, local 1): round d pairs a send to local 1 + d with a receive
  // from local 1 - d, its own node first, then node 0. So the root gathers from 4, 7, 6, then 1,
  // 0, 3, 2, and scatters to 6, 7, 4, then 1, 2, 3, 0; every other rank moves one block.
  const core::Topology two = cluster(8, 4);
  const core::Schedule g = p2p(8, 8 << 10, 1, &two, core::CollectiveKind::gather, 5);
  CHECK(core::check_semantics(g).summary() == "");
  CHECK(order(g, 5, core::OpKind::recv) == std::vector<core::Rank>{4, 7, 6, 1, 0, 3, 2});
  CHECK(order(g, 2) == std::vector<core::Rank>{5});
  CHECK(order(g, 5).empty());
  const core::Schedule s = p2p(8, 8 << 10, 1, &two, core::CollectiveKind::scatter, 5);
  CHECK(core::check_semantics(s).summary() == "");
  CHECK(order(s, 5) == std::vector<core::Rank>{6, 7, 4, 1, 2, 3, 0});
  CHECK(order(s, 2, core::OpKind::recv) == std::vector<core::Rank>{5});
}

TEST_CASE("nccl_p2p with per-rank counts splits each operation by its own size, as NCCL does",
          "[algorithms][alltoall][nccl][counts]") {
  // addP2pToPlan on one PCIe node (P2P chunk 128 KiB, parts of at least 16 KiB): 4 MiB on at
  // most 4 channels per peer starting from 1 doubles to 4 (parts above 32 chunks would need more),
  // 8 KiB takes 1; both sides of a message agree because both see its size.
  CHECK(algorithms::nccl::p2p_op_channels(4 << 20, 1, 4, false, false) == 1);
  CHECK(algorithms::nccl::p2p_op_channels(64 << 20, 1, 4, false, false) == 4);
  CHECK(algorithms::nccl::p2p_op_channels(64 << 10, 4, 4, false, false) == 4);
  CHECK(algorithms::nccl::p2p_op_channels(8 << 10, 4, 4, false, false) == 1);
  CHECK(algorithms::nccl::p2p_op_channels(0, 4, 4, false, false) == 1);
  const core::Topology one = cluster(4, 4);
  const auto reg = algorithms::make_default_registry();
  algorithms::Request req;
  req.collective = core::CollectiveKind::alltoall;
  req.ranks = 4;
  req.topology = &one;
  // Every rank sends 64 MiB to rank 0 and 8 KiB to the others.
  req.counts.assign(16, 8 << 10);
  for (core::Rank r = 0; r < 4; ++r) {
    req.counts[r * 4] = std::uint64_t{64} << 20;
  }
  req.bytes = core::Bytes{core::counts_bytes(req.collective, 4, req.counts)};
  req.params = {{"channels", 2}, {"peer_channels", 4}, {"min_channels", 1}};
  const auto& algo = reg.find(req.collective, "nccl_p2p");
  REQUIRE(reg.refusal(algo, req).empty());
  const core::Schedule s = reg.generate(algo, req);
  CHECK(core::check_semantics(s).ok());
  // Rank 1's streams: its 64 MiB to rank 0 on 4, each 8 KiB on one.
  std::vector<std::set<std::uint32_t>> streams_to(4);
  for (core::OpId id = s.rank_begin(1); id < s.rank_end(1); ++id) {
    if (s.kind(id) == core::OpKind::send) {
      streams_to[s.peer(id)].insert(s.stream(id));
    }
  }
  CHECK(streams_to[0].size() == 4);
  CHECK(streams_to[2].size() == 1);
  CHECK(streams_to[3].size() == 1);
  // Without peer_channels every operation takes `channels` (2), as before.
  req.params = {{"channels", 2}};
  const core::Schedule flat = reg.generate(algo, req);
  std::set<std::uint32_t> to_two;
  for (core::OpId id = flat.rank_begin(1); id < flat.rank_end(1); ++id) {
    if (flat.kind(id) == core::OpKind::send && flat.peer(id) == 2) {
      to_two.insert(flat.stream(id));
    }
  }
  CHECK(to_two.size() == 2);
}
