// The openmpi-5.0 stack and coll/han's `han` allreduce: semantics on nodes of equal size, the
// refusal on uneven nodes, the segment pipeline, and Open MPI 5.0's choice under `auto`.

#include "collsim/stacks/stack.hpp"

#include "collsim/algorithms/registry.hpp"
#include "collsim/analysis/auto_choice.hpp"
#include "collsim/core/verify.hpp"
#include "collsim/engines/loggp.hpp"
#include "collsim/topologies/build.hpp"

#include "stack_test_support.hpp"

#include <catch2/catch.hpp>

using namespace collsim;
using collsim::testing::cpu_nodes;
using core::CollectiveKind;

namespace {

algorithms::Request request(const core::Topology& topo, std::uint32_t p, std::uint64_t n) {
  algorithms::Request req;
  req.collective = CollectiveKind::allreduce;
  req.ranks = p;
  req.bytes = core::Bytes{n};
  req.topology = &topo;
  return req;
}

} // namespace

TEST_CASE("han allreduces every segment correctly on nodes of equal size and refuses uneven ones",
          "[stacks][ompi5][algorithms]") {
  const auto registry = algorithms::make_default_registry();
  const auto& han = registry.find(CollectiveKind::allreduce, "han");
  for (const auto& [nodes, cores] : {std::pair{2U, 3U}, std::pair{3U, 4U}, std::pair{5U, 2U}}) {
    const auto spec = cpu_nodes(nodes, cores);
    const std::uint32_t p = nodes * cores;
    const auto topo = topologies::build(spec, p);
    for (const std::uint64_t n : {std::uint64_t{4}, std::uint64_t{65536}, std::uint64_t{200000}}) {
      CAPTURE(nodes, cores, n);
      auto req = request(topo, p, n);
      req.params = algorithms::resolve_params(han, {});
      REQUIRE(registry.refusal(han, req).empty());
      CHECK(core::check_semantics(registry.generate(han, req)).ok());
    }
  }
  // 7 ranks on nodes of 4: the second node holds 3.
  const auto topo = topologies::build(cpu_nodes(2, 4), 7);
  auto req = request(topo, 7, 1024);
  req.params = algorithms::resolve_params(han, {});
  CHECK_THAT(registry.refusal(han, req), Catch::Contains("same number of ranks on every node"));
}

TEST_CASE("han's segments overlap: four in flight beat one after another", "[stacks][ompi5]") {
  const auto registry = algorithms::make_default_registry();
  const auto& han = registry.find(CollectiveKind::allreduce, "han");
  const auto topo = topologies::build(cpu_nodes(4, 8), 32);
  const auto time = [&](std::int64_t depth) {
    auto req = request(topo, 32, 1 << 20); // 16 segments of 64 KiB
    req.params = algorithms::resolve_params(han, {{"depth", std::to_string(depth)}});
    return engines::LogGPEngine{}.run(registry.generate(han, req), topo, {}).time.value;
  };
  CHECK(time(4) < 0.8 * time(1));
}

TEST_CASE("openmpi-5.0's auto: coll/han across nodes of equal size, coll/tuned otherwise",
          "[stacks][ompi5]") {
  const auto registry = algorithms::make_default_registry();
  const auto stacks = stacks::default_stacks();
  CHECK(stacks.find("openmpi-5.0").info().chooser == stacks::Chooser::ompi50);
  const auto two = topologies::build(cpu_nodes(2, 4), 8);
  const auto c =
      analysis::han_default(two, CollectiveKind::allreduce, 8, core::Bytes{1 << 20}, registry);
  REQUIRE(c);
  CHECK(c->algorithm == "han");
  CHECK(c->params.count("low_reduce") == 1);
  CHECK(c->params.count("low_bcast") == 1);
  // One node, uneven nodes and other collectives: coll/tuned's rules.
  const auto one = topologies::build(cpu_nodes(1, 8), 8);
  CHECK_FALSE(analysis::han_default(one, CollectiveKind::allreduce, 8, core::Bytes{64}, registry));
  const auto uneven = topologies::build(cpu_nodes(2, 4), 7);
  CHECK_FALSE(
      analysis::han_default(uneven, CollectiveKind::allreduce, 7, core::Bytes{64}, registry));
  CHECK_FALSE(analysis::han_default(two, CollectiveKind::bcast, 8, core::Bytes{64}, registry));
}
