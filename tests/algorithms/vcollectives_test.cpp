// The v-collectives (issue 21): every algorithm that takes per-rank counts implements
// allgatherv, gatherv, scatterv, MPI_Reduce_scatter or alltoallv on 1..40, 64, 100 and 128
// ranks, with seeded random counts (zeros among them), every count zero but one rank's, and all
// counts zero; without a topology and on a cluster of 4 ranks per node. And the imbalance-aware
// algorithms stay correct whatever the arrival order.

#include "algorithm_test_support.hpp"
#include "collsim/algorithms/registry.hpp"
#include "collsim/core/layout.hpp"
#include "collsim/core/verify.hpp"
#include "collsim/topologies/build.hpp"

#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <map>
#include <random>

using namespace collsim;

namespace {

const core::Topology& cluster_for(std::uint32_t p) {
  static std::map<std::uint32_t, core::Topology> cache;
  auto it = cache.find(p);
  if (it == cache.end()) {
    core::ClusterSpec c;
    c.devices_per_node = 4;
    it = cache.emplace(p, topologies::build_cluster(c, core::EndpointSpec{}, p)).first;
  }
  return it->second;
}

std::vector<std::uint32_t> rank_counts() {
  std::vector<std::uint32_t> out;
  for (std::uint32_t p = 1; p <= 40; ++p) {
    out.push_back(p);
  }
  out.insert(out.end(), {64, 100, 128});
  return out;
}

/// The counts sets of one rank count: "random" (seeded by p, about a fifth zero), "one:R" (only
/// rank R's block, or for alltoallv only what everyone sends to R), "zero".
std::vector<std::pair<std::string, std::vector<std::uint64_t>>> counts_sets(core::CollectiveKind c,
                                                                            std::uint32_t p) {
  const std::uint64_t size = core::counts_size(c, p);
  const bool alltoall = c == core::CollectiveKind::alltoall;
  std::mt19937_64 gen(0x5eed + p);
  std::vector<std::uint64_t> random(size);
  for (auto& x : random) {
    x = gen() % 5 == 0 ? 0 : gen() % 97;
  }
  std::vector<std::pair<std::string, std::vector<std::uint64_t>>> out{{"random", random}};
  for (const core::Rank r : {core::Rank{0}, p - 1}) {
    std::vector<std::uint64_t> one(size, 0);
    if (alltoall) {
      for (std::uint64_t i = 0; i < p; ++i) {
        one[i * p + r] = 1000;
      }
    } else {
      one[r] = 1000;
    }
    out.emplace_back(fmt::format("one:{}", r), one);
  }
  out.emplace_back("zero", std::vector<std::uint64_t>(size, 0));
  return out;
}

} // namespace

TEST_CASE("every algorithm that takes counts implements its v-collective on 1..40, 64, 100 and "
          "128 ranks with random, single non-zero and zero counts",
          "[algorithms][conformance][counts]") {
  const algorithms::Registry reg = algorithms::make_default_registry();
  std::size_t algorithms_with_counts = 0;
  for (const algorithms::AlgorithmInfo* algo : reg.list()) {
    if (!algo->counts) {
      continue;
    }
    ++algorithms_with_counts;
    for (const std::uint32_t p : rank_counts()) {
      for (const auto& [label, counts] : counts_sets(algo->collective, p)) {
        for (const bool on_cluster : {false, true}) {
          algorithms::Request req = testing::allreduce_request(p, 0);
          req.collective = algo->collective;
          req.counts = counts;
          req.bytes = core::Bytes{core::counts_bytes(algo->collective, p, counts)};
          req.root = core::has_root(algo->collective) ? p / 2 : 0;
          if (on_cluster) {
            req.topology = &cluster_for(p);
          }
          algorithms::Request probe = req;
          const std::string why = reg.refusal(*algo, probe);
          if (!why.empty()) {
            // A constraint of the algorithm itself (a power of two, an even rank count) refuses
            // the uniform request too; only a refusal because of the counts is a failure.
            algorithms::Request uniform = req;
            uniform.counts.clear();
            if (reg.refusal(*algo, uniform).empty()) {
              FAIL_CHECK(fmt::format("{} {} refuses counts {} on {} ranks: {}",
                                     core::to_string(algo->collective), algo->name, label, p, why));
            }
            continue;
          }
          const core::Schedule s = reg.generate(*algo, req);
          CHECK(s.header().counts == counts);
          const core::VerifyReport report = core::check_semantics(s);
          if (!report.ok()) {
            FAIL_CHECK(fmt::format("{}v {} on {} ranks{}, counts {}:\n{}",
                                   core::to_string(algo->collective), algo->name, p,
                                   on_cluster ? " (cluster)" : "", label, report.summary()));
          }
        }
      }
    }
  }
  // allgatherv: linear, ring, recursive_doubling, neighbor_exchange, bruck, two_proc; gatherv,
  // scatterv: linear, nccl_p2p; reduce_scatterv: non_overlapping, ring, recursive_halving,
  // butterfly, pairwise; alltoallv: pairwise, linear, scattered, nccl_p2p, node_aware.
  CHECK(algorithms_with_counts == 20);
}

TEST_CASE("an algorithm without a v-variant refuses counts with one reason",
          "[algorithms][counts]") {
  const algorithms::Registry reg = algorithms::make_default_registry();
  algorithms::Request req = testing::allreduce_request(4, 10);
  req.collective = core::CollectiveKind::alltoall;
  req.counts = std::vector<std::uint64_t>(16, 1);
  req.bytes = core::Bytes{4};
  algorithms::Request bruck = req;
  CHECK(reg.refusal(reg.find(req.collective, "bruck"), bruck) ==
        "bruck takes no per-rank counts (it has no alltoallv variant)");
  req.bytes = core::Bytes{5};
  CHECK(reg.refusal(reg.find(req.collective, "pairwise"), req) ==
        "the counts add up to 4 bytes in the largest row but the size is 5 bytes");
}

TEST_CASE("the imbalance-aware reduce and allreduce are correct for any arrival order",
          "[algorithms][conformance][skew]") {
  const algorithms::Registry reg = algorithms::make_default_registry();
  for (const auto kind : {core::CollectiveKind::reduce, core::CollectiveKind::allreduce}) {
    const algorithms::AlgorithmInfo& algo = reg.find(kind, "arrival_tree");
    for (const std::uint32_t p : rank_counts()) {
      std::mt19937_64 gen(p);
      const std::vector<std::vector<double>> arrivals{
          {},                          // all at once
          std::vector<double>(p, 0.0), // all at once, given
          [&] {                        // random
            std::vector<double> a(p);
            for (auto& x : a) {
              x = static_cast<double>(gen() % 1000) * 1e-6;
            }
            return a;
          }(),
          [&] { // the last rank late
            std::vector<double> a(p, 0.0);
            a.back() = 1e-3;
            return a;
          }(),
      };
      for (std::size_t k = 0; k < arrivals.size(); ++k) {
        algorithms::Request req = testing::allreduce_request(p, 1000003);
        req.collective = kind;
        req.root = kind == core::CollectiveKind::reduce ? p / 2 : 0;
        req.arrivals = arrivals[k];
        const core::VerifyReport report = core::check_semantics(reg.generate(algo, req));
        if (!report.ok()) {
          FAIL_CHECK(fmt::format("{} arrival_tree on {} ranks, arrivals {}:\n{}",
                                 core::to_string(kind), p, k, report.summary()));
        }
      }
    }
  }
}

TEST_CASE("arrival_tree reduce: a late rank sends straight to the root, last",
          "[algorithms][skew]") {
  const algorithms::Registry reg = algorithms::make_default_registry();
  algorithms::Request req = testing::allreduce_request(64, 4096);
  req.collective = core::CollectiveKind::reduce;
  req.arrivals = std::vector<double>(64, 0.0);
  req.arrivals[63] = 1e-3;
  const auto t = testing::traffic(reg.generate(reg.find(req.collective, "arrival_tree"), req));
  REQUIRE(t[63].send_peers.size() == 1);
  CHECK(t[63].send_peers[0] == 0);
  CHECK(t[0].sends == 0);
  // Without arrivals the tree is binomial-like: depth 6 and the root takes 6 children.
  req.arrivals.clear();
  const auto b = testing::traffic(reg.generate(reg.find(req.collective, "arrival_tree"), req));
  CHECK(b[0].recvs == 6);
}
