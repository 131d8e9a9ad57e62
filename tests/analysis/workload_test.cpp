// A workload's step (analysis/workload.hpp): the overlap arithmetic, and each group's
// communicator on a real preset.

#include "collsim/analysis/workload.hpp"
#include "collsim/io/scenario_loader.hpp"

#include <catch2/catch.hpp>

using namespace collsim;

namespace {

analysis::PhaseTiming phase(double total_s, double overlap) {
  analysis::PhaseTiming p;
  p.phase.overlap = overlap;
  p.total = core::Seconds{total_s};
  return p;
}

} // namespace

TEST_CASE("without overlap a step costs its compute plus every call", "[analysis][workload]") {
  const auto t = analysis::step_time({phase(0.010, 0.0), phase(0.005, 0.0)}, core::Seconds{0.1});
  CHECK(t.communication.value == Approx(0.015));
  CHECK(t.overlapped.value == 0.0);
  CHECK(t.exposed.value == Approx(0.015));
  CHECK(t.step.value == Approx(0.115));
}

TEST_CASE("with full overlap a step costs max(compute, communication)", "[analysis][workload]") {
  // Communication below the compute: all hidden.
  const auto hidden = analysis::step_time({phase(0.03, 1.0), phase(0.02, 1.0)}, core::Seconds{0.1});
  CHECK(hidden.step.value == Approx(0.1));
  CHECK(hidden.exposed.value == Approx(0.0).margin(1e-15));
  // Communication above the compute: the compute hides under it.
  const auto bound = analysis::step_time({phase(0.3, 1.0)}, core::Seconds{0.1});
  CHECK(bound.step.value == Approx(0.3));
  CHECK(bound.overlapped.value == Approx(0.1));
  // A share: 0.5 x 0.08 = 0.04 hides, 0.04 + 0.02 stays exposed.
  const auto part = analysis::step_time({phase(0.08, 0.5), phase(0.02, 0.0)}, core::Seconds{0.1});
  CHECK(part.step.value == Approx(0.16));
}

TEST_CASE("a phase's group places its communicator on the job's nodes", "[analysis][workload]") {
  const core::Scenario s = io::load_scenario("dgx-a100");
  const analysis::WorkloadJob job{4, 8};
  CHECK(analysis::communicator(s, job, core::WorkloadGroup::world).second == 32);
  const auto [node, n] = analysis::communicator(s, job, core::WorkloadGroup::node);
  CHECK(n == 8);
  CHECK(node.topology.system.placement.ranks_per_node == 8);
  const auto [across, a] = analysis::communicator(s, job, core::WorkloadGroup::across_nodes);
  CHECK(a == 4);
  CHECK(across.topology.system.placement.ranks_per_node == 1);
  // A uniform topology has no nodes: only world.
  const core::Scenario u = io::load_scenario("textbook");
  CHECK_THROWS_AS(analysis::communicator(u, {1, 16}, core::WorkloadGroup::node), core::UsageError);
  CHECK(analysis::communicator(u, {1, 16}, core::WorkloadGroup::world).second == 16);
}
