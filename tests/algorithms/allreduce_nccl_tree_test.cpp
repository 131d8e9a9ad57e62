#include "algorithm_test_support.hpp"
#include "collsim/algorithms/registry.hpp"
#include "collsim/topologies/build.hpp"

#include <bit>
#include <catch2/catch.hpp>
#include <set>

using namespace collsim;

namespace {
constexpr std::uint32_t kNo = 0xffffffffU;

struct Node {
  std::uint32_t parent = kNo;
  std::set<std::uint32_t> children;
  bool operator==(const Node&) const = default;
};

/// algorithms.md AR13, written from the text: tree 1 of ncclGetBtree.
Node btree_formula(std::uint32_t n, std::uint32_t i) {
  Node out;
  if (i == 0) {
    if (n > 1) {
      out.children.insert(std::bit_floor(n - 1)); // the largest power of two below n
    }
    return out;
  }
  std::uint32_t bit = 1;
  while ((i & bit) == 0) {
    bit <<= 1;
  }
  const std::uint32_t up = (i ^ bit) | (bit << 1);
  out.parent = up < n ? up : i ^ bit;
  if (bit > 1) {
    out.children.insert(i - bit / 2);
    for (std::uint32_t low = bit / 2; low > 0; low /= 2) {
      if (i + low < n) {
        out.children.insert(i + low);
        break;
      }
    }
  }
  return out;
}

/// Tree 2: the mirror i -> n-1-i (n even) or the shift i -> i+1 (n odd) of tree 1.
Node dtree_formula(std::uint32_t n, std::uint32_t i, std::uint32_t tree) {
  if (tree == 0) {
    return btree_formula(n, i);
  }
  const auto map = [&](std::uint32_t j) { return n % 2 == 0 ? n - 1 - j : (j + 1) % n; };
  const std::uint32_t played = n % 2 == 0 ? n - 1 - i : (i + n - 1) % n;
  const Node t = btree_formula(n, played);
  Node out;
  out.parent = t.parent == kNo ? kNo : map(t.parent);
  for (const std::uint32_t c : t.children) {
    out.children.insert(map(c));
  }
  return out;
}

algorithms::Request tree_request(std::uint32_t p, std::uint64_t n, std::int64_t channels) {
  algorithms::Request req = testing::allreduce_request(p, n);
  req.params["channels"] = channels;
  return req;
}

core::Schedule tree(const algorithms::Request& req) {
  const auto reg = algorithms::make_default_registry();
  return reg.generate(reg.find(core::CollectiveKind::allreduce, "nccl:tree"), req);
}

/// Rank r's links for the bytes at `offset`: the peers it reduces from are its children, the peer
/// it receives the result from is its parent.
Node links_at(const core::Schedule& s, core::Rank r, std::uint64_t offset) {
  Node out;
  for (core::OpId id = s.rank_begin(r); id < s.rank_end(r); ++id) {
    if (s.target(id).offset != offset) {
      continue;
    }
    if (s.kind(id) == core::OpKind::recv_reduce) {
      out.children.insert(s.peer(id));
    } else if (s.kind(id) == core::OpKind::recv) {
      out.parent = s.peer(id);
    }
  }
  return out;
}
} // namespace

TEST_CASE("nccl tree allreduce uses ncclGetBtree and its mirror or shift on 1..9 nodes",
          "[algorithms][allreduce][nccl]") {
  // No topology: every rank is a node. Two channels of one byte each: channel 0 (byte 0) runs on
  // tree 0, channel 1 (byte 1) on tree 1.
  for (std::uint32_t n = 2; n <= 9; ++n) {
    const core::Schedule s = tree(tree_request(n, 2, 2));
    for (core::Rank r = 0; r < n; ++r) {
      for (std::uint32_t t = 0; t < 2; ++t) {
        CAPTURE(n, r, t);
        CHECK(links_at(s, r, t) == dtree_formula(n, r, t));
      }
    }
  }
  CHECK(tree(tree_request(1, 2, 2)).op_count() == 0);
}

TEST_CASE("nccl tree allreduce: the double binary tree on 4 and 5 nodes, spelled out",
          "[algorithms][allreduce][nccl]") {
  const auto node = [](std::uint32_t parent, std::set<std::uint32_t> children) {
    return Node{parent, std::move(children)};
  };
  const core::Schedule four = tree(tree_request(4, 2, 2));
  // Tree 0: 0 - 2 - {1, 3}. Tree 1 (mirror): 3 - 1 - {2, 0}.
  CHECK(links_at(four, 0, 0) == node(kNo, {2}));
  CHECK(links_at(four, 2, 0) == node(0, {1, 3}));
  CHECK(links_at(four, 3, 0) == node(2, {}));
  CHECK(links_at(four, 3, 1) == node(kNo, {1}));
  CHECK(links_at(four, 1, 1) == node(3, {0, 2}));
  CHECK(links_at(four, 0, 1) == node(1, {}));
  const core::Schedule five = tree(tree_request(5, 2, 2));
  // Tree 0: 0 - 4 - 2 - {1, 3}. Tree 1 (shift by one): 1 - 0 - 3 - {2, 4}.
  CHECK(links_at(five, 0, 0) == node(kNo, {4}));
  CHECK(links_at(five, 4, 0) == node(0, {2}));
  CHECK(links_at(five, 2, 0) == node(4, {1, 3}));
  CHECK(links_at(five, 1, 1) == node(kNo, {0}));
  CHECK(links_at(five, 0, 1) == node(1, {3}));
  CHECK(links_at(five, 3, 1) == node(0, {2, 4}));
}

TEST_CASE("nccl tree allreduce chains the ranks of a node behind the head in the inter-node tree",
          "[algorithms][allreduce][nccl]") {
  // 3 nodes of 4 ranks: heads 0, 4, 8. Tree 0 over nodes: 0 - 2 - 1 (node 2 is 0's child, node 1
  // is 2's child).
  core::ClusterSpec c;
  c.devices_per_node = 4;
  const core::Topology t = topologies::build_cluster(c, core::EndpointSpec{}, 12);
  algorithms::Request req = tree_request(12, 1, 1);
  req.topology = &t;
  const core::Schedule s = tree(req);
  CHECK(links_at(s, 0, 0) == Node{kNo, {8, 1}});
  CHECK(links_at(s, 8, 0) == Node{0, {4, 9}});
  CHECK(links_at(s, 4, 0) == Node{8, {5}});
  CHECK(links_at(s, 5, 0) == Node{4, {6}});
  CHECK(links_at(s, 7, 0) == Node{6, {}});
}

TEST_CASE("nccl tree allreduce cuts the slices into protocol chunks, LL128 shrinking for small "
          "messages",
          "[algorithms][allreduce][nccl]") {
  // Simple: 512 KiB chunks; LL: 32 KiB.
  for (const auto& [protocol, chunk] : {std::pair<std::int64_t, std::uint64_t>{0, 512 << 10},
                                        std::pair<std::int64_t, std::uint64_t>{1, 32 << 10}}) {
    algorithms::Request req = tree_request(2, 4 * chunk, 1);
    req.params["protocol"] = protocol;
    const auto tr = testing::traffic(tree(req));
    CHECK(tr[1].send_lengths == std::vector<std::uint64_t>(4, chunk)); // rank 1: a leaf, up
    CHECK(tr[0].send_lengths == std::vector<std::uint64_t>(4, chunk)); // rank 0: the root, down
  }
  // LL128 on 2 nodes of 1 rank, 1 MiB: 576,000 halves while n / chunk < (1 + 1 + 0.1) x 64 and
  // chunk > 128 KiB (-> 72,000), then while n / chunk < 2.1 x 16 and chunk > 32 KiB (-> 18,000).
  algorithms::Request req = tree_request(2, 1 << 20, 1);
  req.params["protocol"] = 2;
  const auto tr = testing::traffic(tree(req));
  REQUIRE(tr[1].sends == 59);
  CHECK(tr[1].send_lengths.front() == 18000);
  CHECK(tr[1].send_lengths.back() == (1 << 20) - 58 * 18000);
  CHECK(tree(req).header().protocol.launch.value == Approx(14.0e-6)); // Tree LL128 base latency
}

TEST_CASE("nccl tree allreduce moves about 2n per node in each direction on two trees",
          "[algorithms][allreduce][nccl]") {
  // 8 nodes, 2 channels: every node sends its half up and the other half down (or up and down
  // as a leaf), 2n in all in each direction for interior-in-one-tree nodes.
  const std::uint64_t n = 8000;
  const auto tr = testing::traffic(tree(tree_request(8, n, 2)));
  std::uint64_t total = 0;
  for (core::Rank r = 0; r < 8; ++r) {
    CAPTURE(r);
    CHECK(tr[r].send_bytes <= 2 * n);
    total += tr[r].send_bytes;
  }
  // Each tree has 7 edges, each carrying its half once up and once down.
  CHECK(total == 2 * 7 * n);
}
