// Conformance over the whole registry (ARCHITECTURE.md, "Extending"): every registered algorithm,
// on many rank counts and sizes, either refuses with a reason (and generate() throws exactly that)
// or produces a schedule that passes validate() and check_semantics(). A new algorithm is covered
// without being named here.
//
// Every case runs twice: without a topology (every rank a node of its own) and on a cluster of 4
// ranks per node whose last node may be partial, with reducing node and network switches, so that
// hierarchical, NCCL and in-network generators are exercised on the layouts they read.

#include "algorithm_test_support.hpp"
#include "collsim/algorithms/registry.hpp"
#include "collsim/core/errors.hpp"
#include "collsim/core/verify.hpp"
#include "collsim/topologies/build.hpp"

#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <map>
#include <optional>

using namespace collsim;

namespace {

/// A cluster of 4 ranks per node (the last node partial when 4 does not divide p) whose node
/// switches (NVLink SHARP) and network switch (InfiniBand SHARP) reduce.
const core::Topology& cluster_for(std::uint32_t p) {
  static std::map<std::uint32_t, core::Topology> cache;
  auto it = cache.find(p);
  if (it == cache.end()) {
    core::ClusterSpec c;
    c.devices_per_node = 4;
    c.node_switch_reduces = true;
    c.network_switch_reduces = true;
    it = cache.emplace(p, topologies::build_cluster(c, core::EndpointSpec{}, p)).first;
  }
  return it->second;
}

std::vector<std::uint32_t> rank_counts() {
  std::vector<std::uint32_t> out;
  for (std::uint32_t p = 1; p <= 40; ++p) {
    out.push_back(p);
  }
  out.insert(out.end(), {64, 96, 100, 128});
  return out;
}

/// A request for `algo`'s collective; rooted collectives get a root other than 0 where there is
/// one, so root handling is exercised too.
algorithms::Request request_for(const algorithms::AlgorithmInfo& algo, std::uint32_t p,
                                std::uint64_t n, core::Rank root, bool on_cluster = false) {
  algorithms::Request req = testing::allreduce_request(p, n);
  req.collective = algo.collective;
  if (on_cluster) {
    req.topology = &cluster_for(p);
  }
  if (core::has_root(algo.collective)) {
    req.root = root;
  }
  return req;
}

algorithms::Request request_for(const algorithms::AlgorithmInfo& algo, std::uint32_t p,
                                std::uint64_t n) {
  return request_for(algo, p, n, p / 2);
}

/// The roots a rooted collective is checked with: 0, the middle and the last rank.
std::vector<core::Rank> roots_for(const algorithms::AlgorithmInfo& algo, std::uint32_t p) {
  if (!core::has_root(algo.collective)) {
    return {0};
  }
  std::vector<core::Rank> out{0};
  for (core::Rank r : {p / 2, p - 1}) {
    if (r != out.back() && r != 0) {
      out.push_back(r);
    }
  }
  return out;
}

/// Runs one (algorithm, ranks, bytes) case; returns "" or what went wrong.
std::string conformance_problem(const algorithms::Registry& reg,
                                const algorithms::AlgorithmInfo& algo, std::uint32_t p,
                                std::uint64_t n, core::Rank root, bool on_cluster) {
  algorithms::Request req = request_for(algo, p, n, root, on_cluster);
  const std::string why = reg.refusal(algo, req);
  if (!why.empty()) {
    try {
      (void)reg.generate(algo, request_for(algo, p, n, root, on_cluster));
    } catch (const core::UsageError& e) {
      const std::string expected = fmt::format("{}: {}", algo.name, why);
      return e.what() == expected
                 ? std::string{}
                 : fmt::format("refused with '{}' but generate() threw '{}'", expected, e.what());
    }
    return fmt::format("refused with '{}' but generate() did not throw", why);
  }
  const core::Schedule s = reg.generate(algo, request_for(algo, p, n, root, on_cluster));
  const core::VerifyReport report = core::check_semantics(s);
  if (!report.ok()) {
    return report.summary();
  }
  return {};
}

/// Checks every registered algorithm on `counts` ranks, roots 0, p/2 and p-1, the sizes below,
/// without a topology and on the 4-ranks-per-node cluster.
void check_registry(const std::vector<std::uint32_t>& counts,
                    std::optional<core::CollectiveKind> only = std::nullopt) {
  const algorithms::Registry reg = algorithms::make_default_registry();
  REQUIRE_FALSE(reg.list().empty());
  for (const algorithms::AlgorithmInfo* algo : reg.list()) {
    if (only && algo->collective != *only) {
      continue;
    }
    for (const std::uint32_t p : counts) {
      for (const core::Rank root : roots_for(*algo, p)) {
        // 0 bytes, 1 byte, fewer bytes than ranks (empty blocks), exactly one byte per rank, a
        // prime size whose blocks never divide evenly, and 1 MiB.
        for (const std::uint64_t n :
             {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{p} - 1, std::uint64_t{p},
              std::uint64_t{1000003}, std::uint64_t{1} << 20}) {
          for (const bool on_cluster : {false, true}) {
            const std::string problem = conformance_problem(reg, *algo, p, n, root, on_cluster);
            if (!problem.empty()) {
              FAIL_CHECK(fmt::format("{} {} on {} ranks{}, root {}, {} bytes:\n{}",
                                     core::to_string(algo->collective), algo->name, p,
                                     on_cluster ? " (cluster, 4 per node)" : "", root, n, problem));
            }
          }
        }
      }
    }
  }
}

} // namespace

TEST_CASE("every registered algorithm implements its collective on 1..40, 64, 96, 100 and 128 "
          "ranks with roots 0, p/2 and p-1",
          "[algorithms][conformance]") {
  check_registry(rank_counts());
}

// Hidden from the default run: one test per collective (Catch2 tag [heavy-<collective>]), each a
// CTest test under the label "heavy" (tests/algorithms/CMakeLists.txt), so that `ctest -L heavy
// -j2` spreads them over the cores. About 11 CPU-minutes in all (docs/benchmarks.md).
#define COLLSIM_HEAVY_CONFORMANCE(kind)                                                            \
  TEST_CASE("every registered " #kind " algorithm implements its collective on 1000 ranks",        \
            "[.][heavy][heavy-" #kind "][algorithms][conformance]") {                              \
    check_registry({1000}, core::CollectiveKind::kind);                                            \
  }
COLLSIM_HEAVY_CONFORMANCE(allreduce)
COLLSIM_HEAVY_CONFORMANCE(reduce)
COLLSIM_HEAVY_CONFORMANCE(bcast)
COLLSIM_HEAVY_CONFORMANCE(allgather)
COLLSIM_HEAVY_CONFORMANCE(reduce_scatter)
COLLSIM_HEAVY_CONFORMANCE(alltoall)
COLLSIM_HEAVY_CONFORMANCE(gather)
COLLSIM_HEAVY_CONFORMANCE(scatter)
COLLSIM_HEAVY_CONFORMANCE(barrier)
#undef COLLSIM_HEAVY_CONFORMANCE

TEST_CASE("no registered algorithm lets an operation overwrite bytes an unfinished one still uses",
          "[algorithms][conformance]") {
  // check_semantics executes one interleaving; this checks all of them, rank by rank, on sizes
  // where no block is empty (empty ranges cannot conflict).
  const algorithms::Registry reg = algorithms::make_default_registry();
  for (const algorithms::AlgorithmInfo* algo : reg.list()) {
    for (const std::uint32_t p : rank_counts()) {
      for (const std::uint64_t n : {std::uint64_t{1000003}, std::uint64_t{4} * p + 3}) {
        for (const bool on_cluster : {false, true}) {
          algorithms::Request req = request_for(*algo, p, n, p / 2, on_cluster);
          if (!reg.refusal(*algo, req).empty()) {
            continue;
          }
          const auto report = core::validate(reg.generate(*algo, req));
          const std::string race = report.ok() ? std::string{} : report.summary();
          if (!race.empty()) {
            FAIL_CHECK(fmt::format("{} {} on {} ranks{}, {} bytes: {}",
                                   core::to_string(algo->collective), algo->name, p,
                                   on_cluster ? " (cluster)" : "", n, race));
          }
        }
      }
    }
  }
}

TEST_CASE("the race check catches a reduction that overwrites data a send is still reading",
          "[algorithms][conformance]") {
  // The check above must be able to fail: this 2-rank exchange reduces into data without waiting
  // for the send that reads it.
  core::ScheduleHeader h;
  h.ranks = 2;
  h.bytes = core::Bytes{8};
  h.data_bytes = 8;
  h.tmp_bytes = 8;
  core::Schedule s(h);
  for (core::Rank r = 0; r < 2; ++r) {
    s.begin_rank(r);
    s.send(1 - r, {core::Buffer::data, 0, 8});
    const auto got = s.recv(1 - r, {core::Buffer::tmp, 0, 8});
    s.reduce({core::Buffer::tmp, 0, 8}, {core::Buffer::data, 0, 8}, {got});
  }
  s.finish();
  CHECK(core::validate(s).summary() ==
        "race: rank 0 l2 (reduce tmp[0..8) -> data[0..8)) may touch bytes that rank 0 l0 (send "
        "data[0..8) to 1) still uses; no dependency orders them");
}

TEST_CASE("every registered algorithm round-trips through the schedule text form on 5 ranks",
          "[algorithms][schedule]") {
  const algorithms::Registry reg = algorithms::make_default_registry();
  for (const algorithms::AlgorithmInfo* algo : reg.list()) {
    INFO(core::to_string(algo->collective) << " " << algo->name);
    // 1005 bytes: divisible by 5 (alltoall's blocks), uneven for everything else.
    algorithms::Request req = request_for(*algo, 5, 1005);
    if (!reg.refusal(*algo, req).empty()) {
      req = request_for(*algo, 4, 1024); // e.g. power-of-two-only algorithms
    }
    if (!reg.refusal(*algo, req).empty()) {
      req = request_for(*algo, 2, 1024); // two_proc variants
    }
    if (!reg.refusal(*algo, req).empty()) {
      req = request_for(*algo, 8, 1024, 0, true); // in-network: switches are agents
    }
    REQUIRE(reg.refusal(*algo, req).empty());
    const core::Schedule s = reg.generate(*algo, req);
    const std::string text = core::print_schedule(s);
    CHECK(core::parse_schedule(text) == s);
    CHECK(core::print_schedule(core::parse_schedule(text)) == text);
  }
}
