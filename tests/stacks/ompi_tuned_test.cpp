// Open MPI 4.1 coll/tuned's forced algorithms as a run sets them (stacks/ompi_tuned.hpp): the
// values Open MPI's mca_base_var accepts, forcing only with coll_tuned_use_dynamic_rules on, and
// one error at the value's place for what Open MPI would refuse.

#include "collsim/stacks/mpi_env.hpp"
#include "collsim/stacks/ompi_tuned.hpp"

#include <catch2/catch.hpp>
#include <string>

using namespace collsim;
using core::CollectiveKind;

namespace {

core::MpiSpec spec_of(std::map<std::string, std::string> env) {
  core::MpiSpec s;
  s.env = std::move(env);
  int line = 1;
  for (const auto& [name, value] : s.env) {
    s.env_pos[name] = core::SourcePos{"s.yaml", static_cast<std::uint32_t>(++line), 5};
  }
  return s;
}

} // namespace

TEST_CASE("coll/tuned's algorithm lists are 4.1's", "[stacks][ompi]") {
  CHECK(stacks::ompi41_algorithms(CollectiveKind::allreduce).size() == 6);
  CHECK(stacks::ompi41_algorithms(CollectiveKind::bcast).size() == 9);
  CHECK(stacks::ompi41_algorithms(CollectiveKind::reduce).size() == 7);
  CHECK(stacks::ompi41_algorithms(CollectiveKind::allreduce)[4].name == "segmented_ring");
  CHECK(stacks::ompi_mca_collective(CollectiveKind::reduce_scatter) == "reduce_scatter");
}

TEST_CASE("a forced algorithm applies only with coll_tuned_use_dynamic_rules on",
          "[stacks][ompi]") {
  const core::MpiSpec off = spec_of({{"OMPI_MCA_coll_tuned_allreduce_algorithm", "4"}});
  const stacks::OmpiTuning t = stacks::read_ompi_tuning(&off);
  CHECK_FALSE(t.dynamic_rules);
  CHECK(t.forced.at(CollectiveKind::allreduce).id == 4);
  CHECK(t.forced_for(CollectiveKind::allreduce) == nullptr);

  const core::MpiSpec on = spec_of({{"OMPI_MCA_coll_tuned_use_dynamic_rules", "1"},
                                    {"OMPI_MCA_coll_tuned_allreduce_algorithm", "4"}});
  const stacks::OmpiTuning u = stacks::read_ompi_tuning(&on);
  REQUIRE(u.forced_for(CollectiveKind::allreduce) != nullptr);
  CHECK(u.forced_for(CollectiveKind::allreduce)->id == 4);
  CHECK(u.forced_for(CollectiveKind::allreduce)->source ==
        "coll_tuned_allreduce_algorithm 4 (s.yaml:2:5)");
  CHECK(u.forced_for(CollectiveKind::bcast) == nullptr);
  // The forced parameters' defaults (coll_tuned_component.c: fanouts 4, segment size 0).
  CHECK(u.forced_for(CollectiveKind::allreduce)->segsize == 0);
  CHECK(u.forced_for(CollectiveKind::allreduce)->chain_fanout == 4);
  // 0 and "ignore" leave the fixed rules in place.
  const core::MpiSpec ignore = spec_of({{"OMPI_MCA_coll_tuned_use_dynamic_rules", "true"},
                                        {"OMPI_MCA_coll_tuned_allreduce_algorithm", "Ignore"}});
  CHECK(stacks::read_ompi_tuning(&ignore).forced_for(CollectiveKind::allreduce) == nullptr);
}

TEST_CASE("MCA values read as Open MPI reads them", "[stacks][ompi]") {
  // Booleans: an integer or Open MPI's words; enums: the id (strtol base 0) or the name, any
  // case; integers: strtoull base 0 with a k, m or g suffix.
  for (const char* yes : {"1", "7", "true", "t", "yes", "y", "enabled"}) {
    const core::MpiSpec s = spec_of({{"OMPI_MCA_coll_tuned_use_dynamic_rules", yes}});
    CHECK(stacks::read_ompi_tuning(&s).dynamic_rules);
  }
  for (const char* no : {"0", "false", "f", "no", "n", "disabled"}) {
    const core::MpiSpec s = spec_of({{"OMPI_MCA_coll_tuned_use_dynamic_rules", no}});
    CHECK_FALSE(stacks::read_ompi_tuning(&s).dynamic_rules);
  }
  const core::MpiSpec s = spec_of({{"OMPI_MCA_coll_tuned_bcast_algorithm", "SPLIT_BINARY_TREE"},
                                   {"OMPI_MCA_coll_tuned_bcast_algorithm_segmentsize", "64k"},
                                   {"OMPI_MCA_coll_tuned_bcast_algorithm_chain_fanout", "0x8"},
                                   {"OMPI_MCA_coll_tuned_reduce_algorithm", "0x2"},
                                   {"OMPI_MCA_coll_tuned_reduce_algorithm_segmentsize", "1m"}});
  const stacks::OmpiTuning t = stacks::read_ompi_tuning(&s);
  CHECK(t.forced.at(CollectiveKind::bcast).id == 4);
  CHECK(t.forced.at(CollectiveKind::bcast).segsize == 65536);
  CHECK(t.forced.at(CollectiveKind::bcast).chain_fanout == 8);
  CHECK(t.forced.at(CollectiveKind::reduce).id == 2);
  CHECK(t.forced.at(CollectiveKind::reduce).segsize == 1048576);
}

TEST_CASE("a value Open MPI would refuse is one error at its place", "[stacks][ompi]") {
  const auto error = [](const char* name, const char* value) {
    const core::MpiSpec s = spec_of({{name, value}});
    try {
      (void)stacks::read_ompi_tuning(&s);
    } catch (const core::Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(error("OMPI_MCA_coll_tuned_allreduce_algorithm", "7") ==
        "s.yaml:2:5: error: mpi.env.OMPI_MCA_coll_tuned_allreduce_algorithm: Open MPI 4.1's "
        "coll/tuned has no allreduce algorithm '7' (its ids: 0 ignore, 1 basic_linear, 2 "
        "nonoverlapping, 3 recursive_doubling, 4 ring, 5 segmented_ring, 6 rabenseifner)");
  CHECK(error("OMPI_MCA_coll_tuned_bcast_algorithm", "tree") ==
        "s.yaml:2:5: error: mpi.env.OMPI_MCA_coll_tuned_bcast_algorithm: Open MPI 4.1's "
        "coll/tuned has no bcast algorithm 'tree' (its ids: 0 ignore, 1 basic_linear, 2 chain, 3 "
        "pipeline, 4 split_binary_tree, 5 binary_tree, 6 binomial, 7 knomial, 8 "
        "scatter_allgather, 9 scatter_allgather_ring)");
  CHECK(error("OMPI_MCA_coll_tuned_use_dynamic_rules", "on") ==
        "s.yaml:2:5: error: mpi.env.OMPI_MCA_coll_tuned_use_dynamic_rules: expected a boolean (1, "
        "0, true, false, yes, no, enabled or disabled), got 'on'");
  CHECK(error("OMPI_MCA_coll_tuned_allreduce_algorithm_segmentsize", "64 KiB") ==
        "s.yaml:2:5: error: mpi.env.OMPI_MCA_coll_tuned_allreduce_algorithm_segmentsize: expected "
        "a whole number, optionally with k, m or g (powers of 1024, as Open MPI reads MCA "
        "integers), got '64 KiB'");
  CHECK(error("OMPI_MCA_coll_tuned_allreduce_algorithm_segmentsize", "-4") ==
        "s.yaml:2:5: error: mpi.env.OMPI_MCA_coll_tuned_allreduce_algorithm_segmentsize: expected "
        "a whole number, optionally with k, m or g (powers of 1024, as Open MPI reads MCA "
        "integers), got '-4'");
  CHECK(error("OMPI_MCA_coll_tuned_reduce_algorithm_chain_fanout", "5000") ==
        "s.yaml:2:5: error: mpi.env.OMPI_MCA_coll_tuned_reduce_algorithm_chain_fanout: expected a "
        "fanout of at most 1024, got '5000'");
}

TEST_CASE("mpi.env lists coll/tuned's variables as read and the others as ignored",
          "[stacks][ompi]") {
  CHECK(stacks::is_ompi_tuning_variable("OMPI_MCA_coll_tuned_use_dynamic_rules"));
  CHECK(stacks::is_ompi_tuning_variable("OMPI_MCA_coll_tuned_reduce_scatter_algorithm"));
  CHECK(stacks::is_ompi_tuning_variable("OMPI_MCA_coll_tuned_alltoall_algorithm_segmentsize"));
  CHECK_FALSE(stacks::is_ompi_tuning_variable("OMPI_MCA_coll_tuned_barrier_algorithm_segmentsize"));
  CHECK_FALSE(stacks::is_ompi_tuning_variable("OMPI_MCA_coll_tuned_allgatherv_algorithm"));
  CHECK(stacks::is_ompi_tuning_variable("OMPI_MCA_coll_tuned_dynamic_rules_filename"));
  const core::MpiSpec s = spec_of({{"OMPI_MCA_coll_tuned_use_dynamic_rules", "1"},
                                   {"OMPI_MCA_coll_tuned_allgatherv_algorithm", "2"},
                                   {"OMPI_MCA_coll_tuned_allreduce_algorithm", "ring"}});
  CHECK(stacks::ignored_mpi_env(s) ==
        std::vector<std::string>{"OMPI_MCA_coll_tuned_allgatherv_algorithm"});
  CHECK(stacks::parse_mpi_env(&s).tuning.forced_for(CollectiveKind::allreduce)->id == 4);
}
