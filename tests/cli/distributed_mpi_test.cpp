// `mpirun -np N collsim ...` (docs/distributed.md), for real under the MPI library CMake found
// (Debian's Open MPI in CI, oversubscribed on this machine's cores): the output of run, sim, tune
// and validate is byte for byte a single process's at 1, 2 and 4 processes; a point that fails on
// some rank ends the job with one error line that names the point; bad input read by every rank
// gives one error line and exit 2; only rank 0 writes -o files.

#include "cli_test_support.hpp"

#include "../mpi_test_environment.hpp"

#include <catch2/catch.hpp>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

using collsim::testing::Output;
using collsim::testing::run_collsim;
using collsim::testing::slurp;

namespace {

/// `mpirun -np N collsim ARGS` from the source directory.
Output mpi_collsim(int processes, const std::string& args) {
  collsim::testing::prepare_open_mpi_environment();
  const std::string base =
      std::string(COLLSIM_SOURCE_DIR) + "/build/distributed_test_" + std::to_string(getpid());
  const std::string cmd = std::string("cd '") + COLLSIM_SOURCE_DIR + "' && '" + COLLSIM_MPIEXEC +
                          "' " + COLLSIM_MPIEXEC_NUMPROC_FLAG + " " + std::to_string(processes) +
                          " '" + COLLSIM_BINARY + "' " + args + " >'" + base + ".out' 2>'" + base +
                          ".err'";
  const int status = std::system(cmd.c_str());
  Output o;
  o.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  o.out = slurp(base + ".out");
  o.err = slurp(base + ".err");
  std::filesystem::remove(base + ".out");
  std::filesystem::remove(base + ".err");
  return o;
}

/// Lines of `text` that collsim printed (its own, not mpirun's notices).
int collsim_lines(const std::string& text) {
  int n = 0;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    n += line.rfind("collsim:", 0) == 0 || line.find(": error: ") != std::string::npos ? 1 : 0;
  }
  return n;
}

/// `args` single-process with one thread, then under 1, 2 and 4 processes: the same bytes.
void check_identical(const std::string& args) {
  const Output one = run_collsim(args + " --threads 1");
  INFO(args << "\n" << one.err);
  REQUIRE(one.code == 0);
  REQUIRE(one.out.size() > 200);
  for (const int np : {1, 2, 4}) {
    const Output many = mpi_collsim(np, args);
    INFO(np << " processes\n" << many.err);
    CHECK(many.code == 0);
    CHECK(many.out == one.out);
  }
}

} // namespace

TEST_CASE("mpirun collsim sim prints what one process prints (loggp table, simgrid JSON with "
          "link loads)",
          "[cli][mpi]") {
  check_identical("sim --scenario dgx-h100 --algorithm ring,rabenseifner,nccl_ring,auto "
                  "--ranks 8,16 --sizes 8B:64MiB:x8");
  check_identical("sim --scenario dgx-h100 --algorithm ring,nccl_ring --ranks 8,16 "
                  "--sizes 1KiB:4MiB:x16 --engine simgrid --links 3 --format json");
}

TEST_CASE("mpirun collsim sim under a memory budget prints what one process prints", "[cli][mpi]") {
  // A budget of one byte per process: every point runs alone in its process, after giving way.
  check_identical("sim --scenario dgx-h100 --algorithm ring,nccl_ring --ranks 8,16 "
                  "--sizes 8B:64MiB:x64 --max-memory 1B");
}

TEST_CASE("mpirun collsim run prints every study as one process does", "[cli][mpi]") {
  check_identical("run scenarios/textbook.yaml --format csv");
}

TEST_CASE("mpirun collsim tune writes the tuning file one process writes", "[cli][mpi]") {
  check_identical("tune --scenario dgx-a100 --ranks 8,16 --sizes 8B:16MiB:x4");
  check_identical("tune --scenario dgx-a100 --ranks 8 --sizes 1KiB:1MiB:x8 --format ompi-rules");
}

TEST_CASE("mpirun collsim validate reports the rows one process reports", "[cli][mpi]") {
  check_identical("validate --scenario dgx-a100 --log "
                  "tests/data/logs/a100sxm4_80gb_1x8_allreduce_128M_nccl-tests-2.19.4.txt "
                  "--format json");
}

TEST_CASE("a sweep point that fails on some rank ends the job with one line naming the point",
          "[cli][mpi]") {
  // SimGrid's engine takes at most 16384 participants: the 20000-rank points fail when they run.
  const std::string args = "sim --scenario textbook --algorithm recursive_doubling "
                           "--ranks 8,16,20000,32 --sizes 8B,1KiB --engine simgrid";
  const Output one = run_collsim(args + " --threads 1");
  REQUIRE(one.code == 1);
  for (const int np : {2, 4}) {
    const Output many = mpi_collsim(np, args);
    INFO(many.err);
    CHECK(many.code == 1);
    CHECK(many.out.empty());
    CHECK(collsim_lines(many.err) == 1);
    CHECK(many.err.find("collsim: error: recursive_doubling at 20000 ranks, ") !=
          std::string::npos);
    CHECK(many.err.find("(MPI rank ") != std::string::npos);
    CHECK(many.err.find("20000 participants is more than the SimGrid engine takes") !=
          std::string::npos);
  }
}

TEST_CASE("bad input that every rank reads gives one error line and exit 2", "[cli][mpi]") {
  const collsim::testing::TempScenario bad("distributed_bad", "topology: {kind: uniform}\n");
  const Output many = mpi_collsim(2, "sim --scenario " + bad.path + " --algorithm ring");
  INFO(many.err);
  CHECK(many.code == 2);
  CHECK(many.out.empty());
  CHECK(collsim_lines(many.err) == 1);
  CHECK(many.err.find("distributed_bad.yaml:") != std::string::npos);
  const Output typo = mpi_collsim(2, "sim --scenario textbook --algorithm rign --ranks 8");
  CHECK(typo.code == 2);
  CHECK(collsim_lines(typo.err) == 1);
  CHECK(typo.err.find("unknown allreduce algorithm 'rign'") != std::string::npos);
}

TEST_CASE("in a job only rank 0 writes the -o file, with one process's bytes", "[cli][mpi]") {
  const std::string file = std::string(COLLSIM_SOURCE_DIR) + "/build/distributed_test_" +
                           std::to_string(getpid()) + ".json";
  const std::string args = "sim --scenario textbook --algorithm ring,recursive_doubling "
                           "--ranks 4,8 --sizes 1KiB:1MiB:x4 --format json";
  const Output one = run_collsim(args);
  REQUIRE(one.code == 0);
  const Output many = mpi_collsim(4, args + " -o " + file);
  CHECK(many.code == 0);
  CHECK(many.out.empty());
  CHECK(slurp(file) == one.out);
  std::filesystem::remove(file);
  // A rank 0 that cannot write fails alone; the others, done, agree on its exit code.
  const Output unwritable = mpi_collsim(2, args + " -o /nonexistent-dir/x.json");
  CHECK(unwritable.code == 2);
  CHECK(collsim_lines(unwritable.err) == 1);
  CHECK(unwritable.err.find("cannot write '/nonexistent-dir/x.json'") != std::string::npos);
}
