#include "algorithm_test_support.hpp"
#include "collsim/algorithms/registry.hpp"
#include "collsim/core/errors.hpp"
#include "collsim/core/verify.hpp"
#include "collsim/topologies/build.hpp"

#include <catch2/catch.hpp>
#include <numeric>

using namespace collsim;

namespace {
algorithms::Request reordered_request(std::uint32_t p, std::uint64_t n, std::int64_t stride) {
  algorithms::Request req = testing::allreduce_request(p, n);
  req.params["stride"] = stride;
  return req;
}
core::Schedule ring_reordered(std::uint32_t p, std::uint64_t n, std::int64_t stride) {
  const auto reg = algorithms::make_default_registry();
  return reg.generate(reg.find(core::CollectiveKind::allreduce, "ring_reordered"),
                      reordered_request(p, n, stride));
}
} // namespace

TEST_CASE("ring_reordered allreduce sends 2(p-1) chunks of n/p bytes to rank r + stride",
          "[algorithms][allreduce][ring_reordered]") {
  for (const auto& [p, stride] : std::vector<std::pair<std::uint32_t, std::int64_t>>{
           {8, 3}, {7, 2}, {16, 5}, {9, 4}, {5, 12}}) {
    const std::uint64_t n = 12ULL * p;
    const auto t = testing::traffic(ring_reordered(p, n, stride));
    for (core::Rank r = 0; r < p; ++r) {
      CAPTURE(p, stride, r);
      CHECK(t[r].sends == 2ULL * (p - 1));
      CHECK(t[r].recvs == 2ULL * (p - 1));
      CHECK(t[r].send_bytes == 2ULL * (p - 1) * (n / p));
      CHECK(t[r].reduced_bytes == (p - 1) * (n / p));
      for (const core::Rank q : t[r].send_peers) {
        CHECK(q == (r + static_cast<std::uint64_t>(stride)) % p);
      }
    }
  }
}

TEST_CASE("ring_reordered allreduce computes the sum for every stride coprime with p",
          "[algorithms][allreduce][ring_reordered]") {
  // The conformance test runs the default stride only.
  for (const std::uint32_t p : {2U, 5U, 8U, 9U, 12U}) {
    for (std::int64_t stride = 1; stride < 2 * p; stride += 2) {
      if (std::gcd(static_cast<std::uint32_t>(stride), p) != 1) {
        continue;
      }
      for (const std::uint64_t n : {std::uint64_t{0}, std::uint64_t{p} - 1, std::uint64_t{1001}}) {
        CAPTURE(p, stride, n);
        const core::VerifyReport report = core::check_semantics(ring_reordered(p, n, stride));
        CHECK(report.summary() == "");
      }
    }
  }
}

TEST_CASE("ring_reordered allreduce with stride 1 is the ring allreduce",
          "[algorithms][allreduce][ring_reordered]") {
  const auto reg = algorithms::make_default_registry();
  const core::Schedule ring = reg.generate(reg.find(core::CollectiveKind::allreduce, "ring"),
                                           testing::allreduce_request(6, 100));
  const core::Schedule reordered = ring_reordered(6, 100, 1);
  REQUIRE(reordered.op_count() == ring.op_count());
  for (core::OpId id = 0; id < ring.op_count(); ++id) {
    CAPTURE(id);
    CHECK(reordered.op(id) == ring.op(id));
  }
  CHECK(reordered.op_count() == 4ULL * 6 * 5);
  CHECK(reordered.dep_count() == 6ULL * (3 * 6 - 4));
}

TEST_CASE("ring_reordered allreduce moves every ring link off-node with a stride that jumps nodes",
          "[algorithms][allreduce][ring_reordered]") {
  // 16 ranks placed node-major, 4 per node: stride 1 crosses a node boundary on 4 of 16 links,
  // stride 5 (coprime with 16, between ppn and p - ppn) on all of them.
  constexpr std::uint32_t p = 16;
  constexpr std::uint32_t ppn = 4;
  const auto crossings = [&](std::int64_t stride) {
    const auto t = testing::traffic(ring_reordered(p, 1600, stride));
    std::uint32_t off_node = 0;
    for (core::Rank r = 0; r < p; ++r) {
      off_node += t[r].send_peers.front() / ppn != r / ppn ? 1 : 0;
    }
    return off_node;
  };
  CHECK(crossings(1) == 4);
  CHECK(crossings(5) == 16);
  CHECK(crossings(15) == 4); // the ring backwards
}

TEST_CASE("ring_reordered allreduce refuses a stride that shares a factor with the rank count",
          "[algorithms][allreduce][ring_reordered]") {
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(core::CollectiveKind::allreduce, "ring_reordered");
  algorithms::Request req = reordered_request(8, 64, 6);
  CHECK(reg.refusal(algo, req) ==
        "stride 6 shares the factor 2 with ranks 8: i * stride mod p would visit only 4 of the "
        "ranks (choose a stride coprime with the rank count)");
  CHECK_THROWS_AS(reg.generate(algo, reordered_request(8, 64, 6)), core::UsageError);
  algorithms::Request zero = reordered_request(8, 64, 0);
  CHECK(reg.refusal(algo, zero) == "parameter 'stride' = 0 is out of range [1, 1073741824]");
  algorithms::Request one = reordered_request(1, 64, 6);
  CHECK(reg.refusal(algo, one).empty());
}

TEST_CASE("ring_reordered allreduce declares the ring's closed form when p divides n",
          "[algorithms][allreduce][ring_reordered]") {
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(core::CollectiveKind::allreduce, "ring_reordered");
  const auto c = reg.cost(algo, reordered_request(5, 500, 2));
  REQUIRE(c.has_value());
  CHECK(c->alpha_terms == 8.0);
  CHECK(c->beta_bytes == 2.0 * 400);
  CHECK(c->gamma_bytes == 400.0);
  CHECK_FALSE(reg.cost(algo, reordered_request(5, 501, 2)).has_value());
}

TEST_CASE("ring_reordered order=renamed follows the placement node by node",
          "[algorithms][allreduce][ring_reordered]") {
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(core::CollectiveKind::allreduce, "ring_reordered");
  algorithms::Request req = testing::allreduce_request(12, 1200);
  req.params["order"] = 1;  // renamed
  req.params["stride"] = 6; // ignored: no refusal for a stride sharing a factor with p
  CHECK(reg.refusal(algo, req).empty());
  // Without a topology the order is the identity: the plain ring.
  const core::Schedule plain = ring_reordered(12, 1200, 1);
  const core::Schedule bare = reg.generate(algo, req);
  REQUIRE(bare.op_count() == plain.op_count());
  for (core::OpId id = 0; id < plain.op_count(); ++id) {
    CHECK(bare.op(id) == plain.op(id));
  }
  // On a cluster (block placement, 4 per node) each node's ranks are neighbours: the ring crosses
  // each of the 3 node boundaries once, and the schedule is still an allreduce.
  core::ClusterSpec c;
  c.devices_per_node = 4;
  const core::Topology t = topologies::build_cluster(c, core::EndpointSpec{}, 12);
  req.topology = &t;
  const core::Schedule renamed = reg.generate(algo, req);
  CHECK(core::check_semantics(renamed).summary() == "");
  const auto traffic = testing::traffic(renamed);
  std::uint32_t off_node = 0;
  for (core::Rank r = 0; r < 12; ++r) {
    off_node += t.node_of(traffic[r].send_peers.front()) != t.node_of(r) ? 1 : 0;
  }
  CHECK(off_node == 3);
}
