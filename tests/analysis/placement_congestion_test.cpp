// The congestion objective of `collsim place` (issue 20; analysis/placement.hpp): link loads,
// the hottest links, link classes, routes composed through the NICs, and the NUMA study's target
// (a 3D halo on one nscc-aspire2a node: the placement found beats by-core placement).

#include "collsim/analysis/placement.hpp"
#include "collsim/core/errors.hpp"
#include "collsim/io/scenario_loader.hpp"

#include <catch2/catch.hpp>

#include <numeric>

using namespace collsim;

namespace {

analysis::Mapping identity(std::uint32_t n) {
  analysis::Mapping m(n);
  std::iota(m.begin(), m.end(), 0U);
  return m;
}

} // namespace

TEST_CASE("placement: routes composed through the NICs are the topology's own routes",
          "[analysis][placement]") {
  // 2 x 128 cores of nscc-aspire2a: every slot pair, within and between nodes.
  const analysis::PlacementProblem p = analysis::make_placement_problem(
      io::load_scenario("nscc-aspire2a"), analysis::parse_pattern("halo3d:8x8x4:1KiB"));
  REQUIRE(p.slots.size() == 256);
  for (std::uint32_t a = 0; a < 256; a += 7) {
    for (std::uint32_t b = 0; b < 256; b += 5) {
      const auto route = p.route(a, b);
      const std::vector<core::LinkId> expected =
          a == b ? std::vector<core::LinkId>{} : p.topology.route_between(p.slots[a], p.slots[b]);
      CAPTURE(a, b);
      CHECK(std::vector<core::LinkId>(route.begin(), route.end()) == expected);
    }
  }
}

TEST_CASE("placement: link classes and the hottest links of a 3D halo on one EPYC node",
          "[analysis][placement]") {
  // 64 ranks on one nscc-aspire2a node: by-core placement fills NUMA domains 0-3 of socket 0,
  // one z-plane of the 4 x 4 x 4 grid each.
  const analysis::PlacementProblem p = analysis::make_placement_problem(
      io::load_scenario("nscc-aspire2a"), analysis::parse_pattern("halo3d:4x4x4:64KiB"));
  const analysis::Mapping block = identity(64);
  const auto classes = analysis::bytes_by_link_class(p, block);
  // Faces: 3 x 4 x 4 x 3 = 144 neighbour pairs, both directions, 64 KiB each. The 3 plane
  // boundaries (16 pairs each) cross NUMA domains; the rest stay in one.
  CHECK(classes.at("inter-numa") == 3 * 16 * 2 * 65536ULL);
  CHECK(classes.at("numa") == (144 - 48) * 2 * 65536ULL);
  CHECK(classes.size() == 2);
  CHECK(analysis::link_class(p, 0, 1) == "numa");
  CHECK(analysis::link_class(p, 0, 16) == "inter-numa");
  CHECK(analysis::link_class(p, 3, 3) == "local");
  const analysis::PlacementProblem both = analysis::make_placement_problem(
      io::load_scenario("nscc-aspire2a"), analysis::parse_pattern("halo3d:8x4x4:64KiB"));
  CHECK(analysis::link_class(both, 0, 64) == "inter-socket");
  // The busiest links are those of an inner plane's NUMA domain to the socket: 32 faces of
  // 64 KiB (16 to each neighbouring plane) at the domain's share of the socket's memory
  // bandwidth (171.5 GB/s / 4).
  const auto hot = analysis::hottest_links(p, block, 4);
  REQUIRE(hot.size() == 4);
  CHECK(hot[0].bytes == 32 * 65536ULL);
  CHECK(hot[0].kind == "memory");
  CHECK(hot[0].busy.value == Approx(32 * 65536.0 / (171.5e9 / 4)));
  CHECK(hot[3].busy.value <= hot[0].busy.value);
  // congestion = sum of squared busy times; it falls when a plane is split into columns.
  CHECK(analysis::congestion_seconds2(p, block) > 0.0);
}

TEST_CASE("placement: on one nscc-aspire2a node the congestion search beats by-core placement",
          "[analysis][placement]") {
  // Issue 20's target: 64 ranks of a 3D halo on one node; the placement found is faster than
  // Open MPI's by-core placement in the simulated exchange (flow-level: links shared).
  const analysis::PlacementProblem p = analysis::make_placement_problem(
      io::load_scenario("nscc-aspire2a"), analysis::parse_pattern("halo3d:4x4x4:64KiB"));
  const analysis::Mapping block = identity(64);
  const analysis::Mapping found = analysis::place_anneal(p, analysis::place_greedy(p), 1, 128000);
  // (The sum includes every core's own link, the same under any mapping.)
  CHECK(analysis::congestion_seconds2(p, found) < 0.7 * analysis::congestion_seconds2(p, block));
  // The busiest link halves: no NUMA domain exchanges more than 16 faces with the others.
  CHECK(analysis::hottest_links(p, found, 1)[0].bytes <= 16 * 65536ULL);
  const analysis::EngineChoice simgrid("simgrid");
  const double before = analysis::simulate_exchange(p, block, simgrid).value;
  const double after = analysis::simulate_exchange(p, found, simgrid).value;
  CHECK(after < 0.75 * before);
  // The hop-bytes objective sees little to gain on one node (every route has the same narrowest
  // link): it cannot tell the plane layout from the column layout.
  const analysis::Mapping hop =
      analysis::place_anneal(p, block, 1, 128000, analysis::Objective::hop_bytes);
  CHECK(analysis::surrogate_seconds(p, hop) > 0.99 * analysis::surrogate_seconds(p, block));
}

TEST_CASE("placement: objectives by name and the rank limit", "[analysis][placement]") {
  CHECK(analysis::parse_objective("time") == analysis::Objective::time);
  CHECK(analysis::parse_objective("hop-bytes") == analysis::Objective::hop_bytes);
  CHECK_THROWS_WITH(analysis::parse_objective("hops"),
                    Catch::Matchers::Contains("hop-bytes") && Catch::Matchers::Contains("time"));
  CHECK_THROWS_WITH(analysis::make_placement_problem(io::load_scenario("nscc-aspire2a"),
                                                     analysis::parse_pattern("halo2d:128x64:1B")),
                    Catch::Matchers::Contains("8192 ranks") &&
                        Catch::Matchers::Contains("at most 4096"));
}
