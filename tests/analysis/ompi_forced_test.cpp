// Open MPI 4.1's choice when a run forces coll/tuned's algorithm (OmpiCall::tuning): the forced id
// replaces the fixed rules only with coll_tuned_use_dynamic_rules on, goes through coll/base's
// own fall-backs as the fixed choice does, and carries the forced segment size and chain fanout
// (coll_tuned_decision_dynamic.c, coll_base_allreduce.c, coll_base_bcast.c, coll_base_topo.c).

#include "collsim/analysis/ompi_defaults.hpp"

#include <catch2/catch.hpp>

#include <cstdint>

using namespace collsim;
using core::CollectiveKind;

namespace {

stacks::OmpiTuning forcing(CollectiveKind c, int id, std::uint64_t segsize = 0,
                           std::uint32_t chain_fanout = 4, bool dynamic_rules = true) {
  stacks::OmpiTuning t;
  t.dynamic_rules = dynamic_rules;
  stacks::OmpiForced f;
  f.id = id;
  f.segsize = segsize;
  f.chain_fanout = chain_fanout;
  f.source = "coll_tuned_x_algorithm";
  t.forced[c] = f;
  return t;
}

analysis::LibraryChoice choose(CollectiveKind c, std::uint32_t p, std::uint64_t s,
                               const stacks::OmpiTuning& tuning) {
  static const auto registry = algorithms::make_default_registry();
  analysis::OmpiCall call{c, p, core::Bytes{s}};
  call.tuning = tuning;
  auto choice = analysis::ompi41_default(call, registry);
  REQUIRE(choice.has_value());
  return *choice;
}

} // namespace

TEST_CASE("a forced allreduce replaces the fixed rules", "[analysis][ompi]") {
  // Fixed rules at 16 ranks, 1 MiB: rabenseifner (6). Forced: each id as coll/base runs it.
  CHECK(choose(CollectiveKind::allreduce, 16, 1 << 20, {}).algorithm == "rabenseifner");
  const auto ring =
      choose(CollectiveKind::allreduce, 16, 1 << 20, forcing(CollectiveKind::allreduce, 4));
  CHECK(ring.algorithm == "ring");
  CHECK(ring.library_name == "ompi:4 ring");
  CHECK(ring.library == "Open MPI 4.1.x coll/tuned (forced algorithm)");
  CHECK(ring.reason == "forced by coll_tuned_x_algorithm with coll_tuned_use_dynamic_rules on");
  CHECK(choose(CollectiveKind::allreduce, 16, 1 << 20, forcing(CollectiveKind::allreduce, 1))
            .algorithm == "basic_linear");
  CHECK(choose(CollectiveKind::allreduce, 16, 1 << 20, forcing(CollectiveKind::allreduce, 3))
            .algorithm == "recursive_doubling");
  // The ring's own fall-back: count < p runs recursive doubling (8 floats on 16 ranks).
  const auto small =
      choose(CollectiveKind::allreduce, 16, 32, forcing(CollectiveKind::allreduce, 4));
  CHECK(small.algorithm == "recursive_doubling");
  CHECK(small.reason.find("ring with count 8 < p = 16 runs recursive_doubling") !=
        std::string::npos);
  // Without use_dynamic_rules Open MPI does not consult the algorithm: the fixed rules, and the
  // reason says so.
  const auto ignored = choose(CollectiveKind::allreduce, 16, 1 << 20,
                              forcing(CollectiveKind::allreduce, 4, 0, 4, false));
  CHECK(ignored.algorithm == "rabenseifner");
  CHECK(ignored.reason.find("coll_tuned_x_algorithm is set, but not coll_tuned_use_dynamic_rules: "
                            "Open MPI ignores it") != std::string::npos);
  // A rules file comes first in Open MPI; collsim does not read it and says so.
  stacks::OmpiTuning with_file = forcing(CollectiveKind::allreduce, 4);
  with_file.rules_file = "/opt/rules.conf";
  CHECK(choose(CollectiveKind::allreduce, 16, 1 << 20, with_file)
            .reason.find("; Open MPI consults the rules file /opt/rules.conf first, which collsim "
                         "does not read") != std::string::npos);
}

TEST_CASE("a forced segmented ring takes the forced segment size", "[analysis][ompi]") {
  // 1 MiB of floats (262144) on 8 ranks, segments of 16 KiB (4096 floats): 8 x 4096 <= 262144,
  // so the segmented ring runs with 16 KiB segments.
  const auto seg =
      choose(CollectiveKind::allreduce, 8, 1 << 20, forcing(CollectiveKind::allreduce, 5, 16384));
  CHECK(seg.algorithm == "segmented_ring");
  CHECK(seg.params.at("segment_size") == "16384");
  // A segment whose p copies exceed the vector: the plain ring (count < p x segcount).
  const auto plain = choose(CollectiveKind::allreduce, 8, 1 << 20,
                            forcing(CollectiveKind::allreduce, 5, 256 * 1024));
  CHECK(plain.algorithm == "ring");
  CHECK(plain.reason.find("segmented_ring with count 262144 < p x segcount = 8 x 65536 runs the "
                          "plain ring") != std::string::npos);
  // Segment size 0 (the forced default): the plain ring, as in fixed mode.
  CHECK(choose(CollectiveKind::allreduce, 8, 1 << 20, forcing(CollectiveKind::allreduce, 5))
            .algorithm == "ring");
  // Whole elements, the remainder rounded to the nearer (COLL_BASE_COMPUTED_SEGCOUNT): 16386 B of
  // floats is 4096 elements, 16387 B is 4097.
  CHECK(choose(CollectiveKind::allreduce, 8, 1 << 20, forcing(CollectiveKind::allreduce, 5, 16386))
            .params.at("segment_size") == "16384");
  CHECK(choose(CollectiveKind::allreduce, 8, 1 << 20, forcing(CollectiveKind::allreduce, 5, 16387))
            .params.at("segment_size") == "16388");
}

TEST_CASE("a forced chain takes the forced fanout and segments", "[analysis][ompi]") {
  // Forced bcast chain: the chain fanout (default 4, capped at 32) and the segment size.
  const auto chain =
      choose(CollectiveKind::bcast, 16, 1 << 20, forcing(CollectiveKind::bcast, 2, 65536));
  CHECK(chain.algorithm == "chain");
  CHECK(chain.params.at("chains") == "4");
  CHECK(chain.params.at("segment_size") == "65536");
  CHECK(choose(CollectiveKind::bcast, 16, 1 << 20, forcing(CollectiveKind::bcast, 2, 0, 100))
            .params.at("chains") == "32");
  // Fixed mode passes fanout 0: one chain, unsegmented (unchanged).
  const auto reduce_chain =
      choose(CollectiveKind::reduce, 16, 1 << 20, forcing(CollectiveKind::reduce, 2, 8192, 2));
  CHECK(reduce_chain.params.at("chains") == "2");
  CHECK(reduce_chain.params.at("segment_size") == "8192");
  // An algorithm collsim does not segment says so.
  const auto binomial =
      choose(CollectiveKind::bcast, 16, 1 << 20, forcing(CollectiveKind::bcast, 6, 65536));
  CHECK(binomial.algorithm == "binomial");
  CHECK(binomial.reason.find("collsim's binomial does not segment") != std::string::npos);
}

TEST_CASE("a forced nonoverlapping allreduce runs the forced reduce and bcast",
          "[analysis][ompi]") {
  stacks::OmpiTuning t = forcing(CollectiveKind::allreduce, 2);
  t.forced[CollectiveKind::reduce] = stacks::OmpiForced{4, 0, 4, 4, "r"}; // binary
  t.forced[CollectiveKind::bcast] = stacks::OmpiForced{3, 0, 4, 4, "b"};  // pipeline
  const auto both = choose(CollectiveKind::allreduce, 16, 1 << 20, t);
  CHECK(both.algorithm == "reduce_bcast");
  CHECK(both.params.at("reduce") == "binary");
  CHECK(both.params.at("bcast") == "pipeline");
  // Only the allreduce forced: its halves follow the fixed reduce and bcast rules.
  const auto fixed =
      choose(CollectiveKind::allreduce, 16, 1 << 20, forcing(CollectiveKind::allreduce, 2));
  CHECK(fixed.params.at("reduce") != "binary");
}
