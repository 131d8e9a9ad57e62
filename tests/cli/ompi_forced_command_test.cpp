// Open MPI's forced coll/tuned algorithms from the command line (docs/library-defaults.md,
// "Forced algorithms"): a log's launch command (`--mca`, `-x OMPI_MCA_...`) and a scenario's
// `mpi.env` steer `auto` as Open MPI's dynamic decision does, and a value Open MPI would refuse
// is one error at its place, exit 2.

#include "cli_test_support.hpp"

#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

namespace {

using collsim::testing::run_collsim;
using collsim::testing::run_json;
using collsim::testing::TempScenario;
using nlohmann::json;

const std::string kLog = "tests/data/cli/ompi_forced_allreduce_osu.txt";

} // namespace

TEST_CASE("validate runs the allreduce algorithm a log's launch command forces",
          "[cli][validate][ompi]") {
  const json j = run_json("validate --scenario cpu-hdr100-epyc --log " + kLog +
                          " --nodes 16 --stack openmpi-4.1 --format json");
  const json& rows = j.at("rows");
  REQUIRE(rows.size() == 6);
  // Run 1: --mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_allreduce_algorithm 4.
  for (const int i : {0, 1}) {
    CHECK(rows.at(i).at("algorithm") == "ring");
    CHECK(rows.at(i)
              .at("chosen_by")
              .get<std::string>()
              .find("Open MPI 4.1.x coll/tuned (forced algorithm): forced by "
                    "coll_tuned_allreduce_algorithm 4 (" +
                    kLog + ":5:80) with coll_tuned_use_dynamic_rules on") == 0);
  }
  // Run 2: the same through the environment, the algorithm by name.
  CHECK(rows.at(2).at("algorithm") == "recursive_doubling");
  CHECK(rows.at(3).at("algorithm") == "recursive_doubling");
  // Run 3: an algorithm without use_dynamic_rules: the fixed rules (recursive doubling at 1 KiB,
  // Rabenseifner at 1 MiB on 16 ranks), and the reason says why the setting did nothing.
  CHECK(rows.at(5).at("algorithm") == "rabenseifner");
  CHECK(rows.at(5)
            .at("chosen_by")
            .get<std::string>()
            .find("coll_tuned_allreduce_algorithm 6 (" + kLog +
                  ":17:43) is set, but not coll_tuned_use_dynamic_rules: Open MPI ignores it") !=
        std::string::npos);
  // The forced ring is slower than the fixed rules' recursive doubling at 1 KiB on 16 ranks.
  CHECK(rows.at(0).at("predicted_us").get<double>() > rows.at(4).at("predicted_us").get<double>());
  // ingest shows what the launch commands set.
  const auto ingest = run_collsim("ingest " + kLog);
  CHECK(ingest.code == 0);
  CHECK(ingest.out.find("#   Open MPI MCA parameters: coll_tuned_use_dynamic_rules=1 (line 5) "
                        "coll_tuned_allreduce_algorithm=4 (line 5)") != std::string::npos);
}

TEST_CASE("a forced algorithm Open MPI would refuse is one error at its place in the log",
          "[cli][validate][ompi]") {
  const std::string path = std::string(COLLSIM_SOURCE_DIR) + "/build/ompi_forced_bad.txt";
  {
    std::ofstream out(path);
    out << "$ mpirun -np 16 --mca coll_tuned_use_dynamic_rules 1 --mca "
           "coll_tuned_allreduce_algorithm 9 ./osu_allreduce\n"
           "# OSU MPI Allreduce Latency Test v7.4\n"
           "# Size       Avg Latency(us)\n"
           "1024                   30.00\n";
  }
  const auto r = run_collsim("validate --scenario cpu-hdr100-epyc --log " + path + " --nodes 16");
  std::remove(path.c_str());
  CHECK(r.code == 2);
  CHECK(r.err == path + ":1:60: error: coll_tuned_allreduce_algorithm (set by the log's run): Open "
                        "MPI 4.1's coll/tuned has no allreduce algorithm '9' (its ids: 0 ignore, 1 "
                        "basic_linear, 2 nonoverlapping, 3 recursive_doubling, 4 ring, 5 "
                        "segmented_ring, 6 rabenseifner)\n");
}

TEST_CASE("a scenario's mpi.env forces coll/tuned's algorithm for sim and explain",
          "[cli][stacks][ompi]") {
  const TempScenario forced("ompi_forced_segmented",
                            "base: cpu-hdr100-epyc\nstack: openmpi-4.1\nmpi:\n  env:\n"
                            "    OMPI_MCA_coll_tuned_use_dynamic_rules: 1\n"
                            "    OMPI_MCA_coll_tuned_allreduce_algorithm: segmented_ring\n"
                            "    OMPI_MCA_coll_tuned_allreduce_algorithm_segmentsize: 64k\n");
  const json j = run_json("sim --scenario " + forced.path +
                          " --algorithm auto --ranks 16 --sizes 16MiB --format json");
  CHECK(j.at("results").at(0).at("params") == "algorithm=segmented_ring,segment_size=65536");
  const auto e = run_collsim("explain --scenario " + forced.path +
                             " --collective allreduce --ranks 16 --bytes 16777216");
  CHECK(e.code == 0);
  CHECK(e.out.find("# default: Open MPI 4.1.x coll/tuned (forced algorithm)\n"
                   "#   picks ompi:5 segmented_ring: forced by coll_tuned_allreduce_algorithm "
                   "segmented_ring (" +
                   forced.path + ":7:46) with coll_tuned_use_dynamic_rules on\n") !=
        std::string::npos);
  // A named nonoverlapping allreduce calls the communicator's reduce and bcast: the forced ones.
  const TempScenario halves("ompi_forced_halves",
                            "base: cpu-hdr100-epyc\nstack: openmpi-4.1\nmpi:\n  env:\n"
                            "    OMPI_MCA_coll_tuned_use_dynamic_rules: 1\n"
                            "    OMPI_MCA_coll_tuned_reduce_algorithm: binary\n"
                            "    OMPI_MCA_coll_tuned_bcast_algorithm: 3\n");
  const json h = run_json("sim --scenario " + halves.path +
                          " --algorithm reduce_bcast --ranks 16 --sizes 1MiB --format json");
  CHECK(h.at("results").at(0).at("params") == "bcast=pipeline,reduce=binary");
  const TempScenario bad("ompi_forced_bad_value",
                         "base: cpu-hdr100-epyc\nstack: openmpi-4.1\nmpi:\n  env:\n"
                         "    OMPI_MCA_coll_tuned_use_dynamic_rules: on\n");
  const auto b =
      run_collsim("sim --scenario " + bad.path + " --algorithm auto --ranks 16 --sizes 1KiB");
  CHECK(b.code == 2);
  CHECK(b.err == bad.path +
                     ":6:44: error: mpi.env.OMPI_MCA_coll_tuned_use_dynamic_rules: expected a "
                     "boolean (1, 0, true, false, yes, no, enabled or disabled), got 'on'\n");
}
