// The library's choice for a v-collective (issue 21): Open MPI 4.1's alltoallv, allgatherv and
// MPI_Reduce_scatter rules and coll/basic's gatherv/scatterv (ids read from v4.1.6
// coll_tuned_decision_fixed.c), MPICH's scattered alltoallv, NCCL's p2p and the v-collectives it
// has not. Every choice must take counts.

#include "collsim/analysis/auto_choice.hpp"
#include "collsim/analysis/ompi_defaults.hpp"
#include "collsim/io/scenario_loader.hpp"
#include "collsim/topologies/build.hpp"

#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

using namespace collsim;
using core::CollectiveKind;

namespace {

const algorithms::Registry& registry() {
  static const auto r = algorithms::make_default_registry();
  return r;
}

analysis::LibraryChoice choose_v(CollectiveKind c, std::uint32_t p, std::uint64_t total) {
  analysis::OmpiCall call;
  call.collective = c;
  call.ranks = p;
  call.bytes = core::Bytes{total};
  call.varying = true;
  const auto choice = analysis::ompi41_default(call, registry());
  REQUIRE(choice);
  // The choice runs the v-variant.
  CHECK(registry().find(c, choice->algorithm).counts);
  return *choice;
}

} // namespace

TEST_CASE("Open MPI 4.1 decides alltoallv on the communicator size alone",
          "[analysis][ompi][counts]") {
  // p < 4 -> 2, < 64 -> 1, < 128 -> 2, < 256 -> 1, < 1024 -> 2, else 1.
  const std::vector<std::pair<std::uint32_t, std::string>> expected{
      {2, "pairwise"},   {3, "pairwise"},    {4, "linear"},   {63, "linear"},
      {64, "pairwise"},  {127, "pairwise"},  {128, "linear"}, {255, "linear"},
      {256, "pairwise"}, {1023, "pairwise"}, {1024, "linear"}};
  for (const auto& [p, name] : expected) {
    CAPTURE(p);
    for (const std::uint64_t bytes : {std::uint64_t{0}, std::uint64_t{1} << 30}) {
      const auto c = choose_v(CollectiveKind::alltoall, p, bytes);
      CHECK(c.algorithm == name);
    }
  }
  const auto c = choose_v(CollectiveKind::alltoall, 64, 1000);
  CHECK(c.library_name == "ompi:2 pairwise");
  CHECK(c.reason == "alltoallv rules: p < 128 -> 2");
  // A size that is no multiple of p is fine for counts (the uniform alltoall has none).
  CHECK(choose_v(CollectiveKind::alltoall, 3, 1000).algorithm == "pairwise");
}

TEST_CASE("Open MPI 4.1 decides allgatherv on the average block, with its own ids",
          "[analysis][ompi][counts]") {
  // p == 2: m < 2 KiB -> 3 ring, < 4 KiB -> 5 two_proc, < 8 KiB -> 3, else 5.
  CHECK(choose_v(CollectiveKind::allgather, 2, 2 * 2047).algorithm == "ring");
  CHECK(choose_v(CollectiveKind::allgather, 2, 2 * 2048).algorithm == "two_proc");
  CHECK(choose_v(CollectiveKind::allgather, 2, 2 * 8192).algorithm == "two_proc");
  // p < 8: m < 256 -> 1 default (gatherv + bcast), < 4 KiB -> 4 neighbor (odd p: the ring).
  const auto small = choose_v(CollectiveKind::allgather, 6, 6 * 255);
  CHECK(small.algorithm == "linear");
  CHECK(small.library_name == "ompi:1 default");
  CHECK(choose_v(CollectiveKind::allgather, 6, 6 * 256).algorithm == "neighbor_exchange");
  const auto odd = choose_v(CollectiveKind::allgather, 5, 5 * 256);
  CHECK(odd.algorithm == "ring");
  CHECK(odd.library_name == "ompi:4 neighbor");
  CHECK(odd.reason.find("neighbor exchange on odd p = 5 runs the ring") != std::string::npos);
  // p < 32: m < 128 -> 1, < 256 KiB -> 2 bruck (radix 2), else 3 ring.
  const auto bruck = choose_v(CollectiveKind::allgather, 24, 24 * 128);
  CHECK(bruck.algorithm == "bruck");
  CHECK(bruck.params.at("radix") == "2");
  CHECK(bruck.reason == "allgatherv rules: p < 32: 128 B <= m < 256 KiB -> 2 (m = total / p = "
                        "128 B)");
  CHECK(choose_v(CollectiveKind::allgather, 24, 24 * 262144).algorithm == "ring");
  // p >= 1024: m < 4 KiB -> 2, else 4 neighbor.
  CHECK(choose_v(CollectiveKind::allgather, 2048, 2048ULL * 4096).algorithm == "neighbor_exchange");
}

TEST_CASE("MPI_Reduce_scatter takes the reduce_scatter table, gatherv and scatterv coll/basic's "
          "linear, one rank coll/self",
          "[analysis][ompi][counts]") {
  // p < 64: m < 64 -> 1 non-overlapping, < 2 KiB -> 2, < 512 KiB -> 4 butterfly, else 3 ring.
  CHECK(choose_v(CollectiveKind::reduce_scatter, 48, 63).algorithm == "non_overlapping");
  CHECK(choose_v(CollectiveKind::reduce_scatter, 48, 64).algorithm == "recursive_halving");
  CHECK(choose_v(CollectiveKind::reduce_scatter, 48, 2048).algorithm == "butterfly");
  CHECK(choose_v(CollectiveKind::reduce_scatter, 48, 512 * 1024).algorithm == "ring");
  for (const auto c : {CollectiveKind::gather, CollectiveKind::scatter}) {
    const auto choice = choose_v(c, 100, 1 << 20);
    CHECK(choice.algorithm == "linear");
    CHECK(choice.library == "Open MPI 4.1.x coll/basic");
  }
  for (const auto c : {CollectiveKind::alltoall, CollectiveKind::allgather,
                       CollectiveKind::reduce_scatter, CollectiveKind::gather}) {
    CHECK(choose_v(c, 1, 100).library_name != "");
  }
}

TEST_CASE("auto for a v-collective: MPICH's scattered alltoallv, NCCL's p2p, and what NCCL has "
          "not",
          "[analysis][auto][counts]") {
  const auto mpich = analysis::mpich4_default(CollectiveKind::alltoall, true);
  REQUIRE(mpich);
  CHECK(mpich->algorithm == "scattered");
  CHECK_FALSE(analysis::mpich4_default(CollectiveKind::allgather, true));
  CHECK_FALSE(analysis::mpich4_default(CollectiveKind::allreduce, true));

  const core::Scenario gpus = io::load_scenario("dgx-h100");
  const core::Topology topo = topologies::build(gpus.topology, 8);
  const auto p2p = analysis::auto_choice(gpus, topo, CollectiveKind::alltoall, 8,
                                         core::Bytes{1 << 20}, registry(), nullptr, 4, true);
  REQUIRE(p2p);
  CHECK(p2p->algorithm == "nccl_p2p");
  std::string why;
  CHECK_FALSE(analysis::auto_choice(gpus, topo, CollectiveKind::allgather, 8, core::Bytes{1 << 20},
                                    registry(), &why, 4, true));
  CHECK(why == "NCCL has no allgatherv (its allgather takes one count for every rank)");
  // The uniform allgather is NCCL's as before.
  CHECK(analysis::auto_choice(gpus, topo, CollectiveKind::allgather, 8, core::Bytes{1 << 20},
                              registry()));
}
