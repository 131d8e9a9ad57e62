// UCC 1.1's choice under the openmpi-4.1+ucc stack (docs/stacks.md, docs/library-defaults.md):
// tl/ucp's default selection strings and k-nomial radices (UCC v1.1.0
// src/components/tl/ucp/{allreduce,bcast,alltoall,reduce_scatter}/*.h, tl_ucp.c, allgather.c),
// tl/cuda's single-node team taking allgather, alltoall and reduce_scatter of GPU buffers
// (tl_cuda.h score 40 over tl/ucp's 10), and Open MPI's rules where collsim does not model what UCC
// runs (tl/cuda) or UCC has no such collective (scatter), with the reason saying why.

#include "collsim/analysis/auto_choice.hpp"
#include "collsim/io/scenario_loader.hpp"
#include "collsim/topologies/build.hpp"

#include <catch2/catch.hpp>

#include <cstdint>
#include <string>

using namespace collsim;
using core::CollectiveKind;

namespace {

const algorithms::Registry& registry() {
  static const auto r = algorithms::make_default_registry();
  return r;
}

/// The choice auto makes under openmpi-4.1+ucc on `ranks` JUWELS Booster GPUs (4 per node).
analysis::LibraryChoice under_ucc(CollectiveKind c, std::uint32_t ranks, std::uint64_t bytes,
                                  const std::string& buffers = "") {
  core::Scenario s = io::load_scenario("juwels-booster");
  s.stack = "openmpi-4.1+ucc";
  s.buffers = buffers;
  const core::Topology topo = topologies::build(s.topology, ranks);
  const auto choice = analysis::auto_choice(s, topo, c, ranks, core::Bytes{bytes}, registry());
  REQUIRE(choice);
  // Whatever the library, the choice is an algorithm collsim can generate.
  CHECK_NOTHROW(registry().find(c, choice->algorithm));
  return *choice;
}

bool stands_in(const analysis::LibraryChoice& c) {
  return c.library.find("Open MPI") != std::string::npos;
}

} // namespace

TEST_CASE("UCC 1.1's tl/ucp selection for each collective it has", "[analysis][ucc]") {
  // allreduce: "allreduce:0-4k:@0#allreduce:4k-inf:@1", radix 4 (unchanged).
  CHECK(under_ucc(CollectiveKind::allreduce, 8, 4095).algorithm == "recursive_knomial");
  CHECK(under_ucc(CollectiveKind::allreduce, 8, 4096).algorithm == "sra_knomial");
  // bcast: "bcast:0-32k:@0#bcast:32k-inf:@1"; knomial at radix 4, lowered to the team size.
  const auto bcast = under_ucc(CollectiveKind::bcast, 8, 32767);
  CHECK(bcast.algorithm == "knomial");
  CHECK(bcast.params.at("radix") == "4");
  CHECK(under_ucc(CollectiveKind::bcast, 3, 1024).params.at("radix") == "3");
  CHECK(under_ucc(CollectiveKind::bcast, 2, 1024).params.at("radix") == "2");
  // ... and from 32 KiB the scatter-allgather k-nomial at radix 4 (it lowers its own radix).
  const auto big_bcast = under_ucc(CollectiveKind::bcast, 8, 32768);
  CHECK(big_bcast.algorithm == "sag_knomial");
  CHECK(big_bcast.params.at("radix") == "4");
  // reduce and barrier: k-nomial at radix 4.
  const auto reduce = under_ucc(CollectiveKind::reduce, 8, 1 << 20);
  CHECK(reduce.algorithm == "knomial");
  CHECK(reduce.params.at("radix") == "4");
  const auto gather = under_ucc(CollectiveKind::gather, 8, 1 << 20);
  CHECK(gather.algorithm == "knomial");
  CHECK(gather.params.at("radix") == "4");
  const auto barrier = under_ucc(CollectiveKind::barrier, 16, 0);
  CHECK(barrier.algorithm == "recexch");
  CHECK(barrier.params.at("radix") == "4");
  // Across nodes tl/cuda makes no team: tl/ucp's ring allgather, pairwise alltoall and
  // bidirectional reduce_scatter ring.
  CHECK(under_ucc(CollectiveKind::allgather, 8, 1 << 20).algorithm == "ring");
  CHECK(under_ucc(CollectiveKind::alltoall, 8, 1 << 20).algorithm == "pairwise");
  CHECK(under_ucc(CollectiveKind::reduce_scatter, 8, 1 << 20).algorithm == "ring_bidirectional");
  for (const auto c : {CollectiveKind::allreduce, CollectiveKind::bcast, CollectiveKind::reduce,
                       CollectiveKind::barrier, CollectiveKind::allgather, CollectiveKind::alltoall,
                       CollectiveKind::reduce_scatter, CollectiveKind::gather}) {
    CHECK(under_ucc(c, 8, 1024).library == "UCC 1.1 tl/ucp (default selection)");
  }
}

TEST_CASE("UCC 1.1: tl/cuda on one node's GPUs (not modelled) and scatter (not UCC's) leave "
          "Open MPI's rules, with the reason",
          "[analysis][ucc]") {
  // One node of 4 GPUs with device buffers: tl/cuda's allgather, not modelled.
  const auto one_node = under_ucc(CollectiveKind::allgather, 4, 1 << 20);
  CHECK(stands_in(one_node));
  CHECK(one_node.reason.find("tl/cuda") != std::string::npos);
  CHECK(stands_in(under_ucc(CollectiveKind::alltoall, 4, 1 << 20)));
  // The same node with host buffers: tl/cuda takes no host memory; tl/ucp's ring.
  CHECK(under_ucc(CollectiveKind::allgather, 4, 1 << 20, "host").algorithm == "ring");
  CHECK(stands_in(under_ucc(CollectiveKind::reduce_scatter, 4, 1 << 20)));
  // UCC 1.1 has no scatter: coll/ucc passes it on to coll/tuned.
  const auto scatter = under_ucc(CollectiveKind::scatter, 8, 1 << 20);
  CHECK(stands_in(scatter));
  CHECK(scatter.reason.find("UCC 1.1 has no scatter") != std::string::npos);
}

TEST_CASE("ucc: aliases name what UCC 1.1's TUNE can select, UCC's own choices among them",
          "[analysis][ucc]") {
  // ucc_tl_ucp_alg_id_to_init (tl_ucp_coll.c) selects for allreduce, bcast, alltoall and
  // reduce_scatter only: a `ucc-tune` file (written under the ucc: aliases) names no other.
  std::size_t aliased = 0;
  for (const algorithms::AlgorithmInfo* a : registry().list()) {
    for (const std::string& alias : a->aliases) {
      if (alias.rfind("ucc:", 0) == 0) {
        INFO(alias << " on " << core::to_string(a->collective));
        CHECK((a->collective == CollectiveKind::allreduce ||
               a->collective == CollectiveKind::bcast ||
               a->collective == CollectiveKind::alltoall ||
               a->collective == CollectiveKind::reduce_scatter));
        ++aliased;
      }
    }
  }
  CHECK(aliased == 7);
  CHECK(registry().find(CollectiveKind::bcast, "ucc:knomial").name == "knomial");
  CHECK(registry().find(CollectiveKind::bcast, "ucc:sag_knomial").name == "sag_knomial");
  CHECK(registry().find(CollectiveKind::alltoall, "ucc:pairwise").name == "pairwise");
  CHECK(registry().find(CollectiveKind::reduce_scatter, "ucc:ring").name == "ring_bidirectional");
}
