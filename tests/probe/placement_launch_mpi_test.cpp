// Real launchers run the files `collsim place` writes (issue 20, "Real launchers";
// docs/placement.md, "Launcher files"): Open MPI's mpirun with the rankfile and MPICH's
// mpiexec.hydra with the machinefile, launched by the exact command in each file's header, start
// processes that print their rank and the CPUs the kernel lets them run on
// (/proc/self/status, Cpus_allowed_list); each rank must be on the core the mapping gives it.
// The mappings swap ranks against the launchers' defaults (rank 0 on core 1), so a file that is
// read but not applied fails. Slurm is not installed here: its header's per-rank binding command
// (taskset from the #by-rank lines) runs with SLURM_PROCID set by hand instead of srun.
//
// The machine needs two CPUs 0 and 1 that are different cores (CI has 2); the tests skip with a
// message otherwise, or when a launcher is missing. Every run is under `timeout 60`.

#include "collsim/analysis/placement.hpp"
#include "collsim/io/scenario_loader.hpp"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sched.h>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

namespace {

namespace fs = std::filesystem;
using namespace collsim;

struct Run {
  int code = -1;
  std::string out;
  std::string err;
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

/// A scratch directory for this process, removed at exit.
const fs::path& work_dir() {
  struct Dir {
    fs::path path;
    Dir() : path(fs::temp_directory_path() / ("collsim_place_mpi_" + std::to_string(getpid()))) {
      fs::create_directories(path);
    }
    ~Dir() {
      std::error_code ec;
      fs::remove_all(path, ec);
    }
  };
  static const Dir dir;
  return dir.path;
}

Run sh(const std::string& command) {
  const fs::path out = work_dir() / "out";
  const fs::path err = work_dir() / "err";
  const int status = std::system(
      ("timeout 60 " + command + " >" + out.string() + " 2>" + err.string() + " </dev/null")
          .c_str());
  Run r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

std::string write(const std::string& name, const std::string& text) {
  const fs::path p = work_dir() / name;
  std::ofstream(p, std::ios::binary) << text;
  return p.string();
}

std::string host_name() {
  char buf[256] = {};
  gethostname(buf, sizeof(buf) - 1);
  return buf;
}

/// CPUs 0 and 1 are both allowed to this process and are different cores (not two hardware
/// threads of one core), so binding to either is visible.
bool two_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0 || !CPU_ISSET(0, &set) || !CPU_ISSET(1, &set)) {
    WARN("CPUs 0 and 1 are not both available here: the launchers' binding is not checked");
    return false;
  }
  for (const char* cpu : {"0", "1"}) {
    const std::string siblings =
        slurp(fs::path("/sys/devices/system/cpu/cpu") / cpu / "topology/thread_siblings_list");
    if (!siblings.empty() && siblings.substr(0, siblings.find('\n')) != cpu) {
      WARN("CPU " << cpu << " shares its core (" << siblings
                  << "): the launchers' binding is not checked");
      return false;
    }
  }
  return true;
}

/// One node of `nodes` CPU nodes of one socket of 2 cores, and a pattern over all their cores.
analysis::PlacementProblem problem(std::uint32_t nodes) {
  const std::string path =
      write("scenario.yaml",
            "name: two_cores\ntopology:\n  kind: system\n  nodes: " + std::to_string(nodes) +
                "\n  node:\n    cpu: {sockets: 1, cores_per_socket: 2}\nstudies:\n  - name: s\n"
                "    collective: allreduce\n    algorithms: [ring]\n    ranks: [2]\n"
                "    sizes: [1KiB]\n");
  return analysis::make_placement_problem(
      io::load_scenario(path),
      analysis::parse_pattern("halo2d:" + std::to_string(2 * nodes) + "x1:1KiB"));
}

/// The command of the header's "# Launch: " line, without the remark after three blanks, with
/// `launcher` for its first word and `program` for ./app.
std::string launch_command(const std::string& text, const std::string& launcher,
                           const std::string& program) {
  const auto at = text.find("# Launch: ");
  REQUIRE(at != std::string::npos);
  std::string line = text.substr(at + 10, text.find('\n', at) - at - 10);
  line = line.substr(0, line.find("   ("));
  const auto app = line.find("./app");
  REQUIRE(app != std::string::npos);
  line.replace(app, 5, program);
  return launcher + line.substr(line.find(' '));
}

/// What each rank printed: "RANK Cpus_allowed_list:\tCPUS" lines -> rank -> CPUS.
std::map<int, std::string> cpus_by_rank(const std::string& out) {
  std::map<int, std::string> by_rank;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line);
    int rank = -1;
    std::string key;
    std::string cpus;
    if (words >> rank >> key >> cpus && key == "Cpus_allowed_list:") {
      by_rank[rank] = cpus;
    }
  }
  return by_rank;
}

/// A program that prints the rank in `$rank_var` and its allowed CPUs.
std::string report(const std::string& rank_var) {
  return "sh -c 'echo $" + rank_var + " $(grep Cpus_allowed_list /proc/self/status)'";
}

bool open_mpi() {
  const std::string mpirun = COLLSIM_OMPI_MPIRUN;
  const Run version = mpirun.empty() ? Run{} : sh(mpirun + " --version");
  const bool found = version.out.find("Open MPI") != std::string::npos ||
                     version.out.find("OpenRTE") != std::string::npos; // 4.1: "mpirun (OpenRTE)"
  if (!found) {
    WARN("Open MPI's mpirun is not installed (Debian: openmpi-bin; then re-run cmake): the "
         "rankfile is not run");
  }
  return found;
}

} // namespace

TEST_CASE("mpirun runs every rank on the core of collsim's Open MPI rankfile",
          "[probe][mpi][placement][launchers]") {
  if (!two_cores() || !open_mpi()) {
    return;
  }
  setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 0);
  setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 0);
  const analysis::PlacementProblem p = problem(1);
  const analysis::Mapping swapped{1, 0}; // rank 0 on core 1, rank 1 on core 0
  const std::map<int, std::string> want{{0, "1"}, {1, "0"}};

  SECTION("with the host named (--hosts), outside a batch allocation") {
    const std::string file = work_dir() / "rankfile_named";
    const std::string text = analysis::ompi_rankfile(p, swapped, {{host_name()}, file});
    write("rankfile_named", text);
    const std::string cmd =
        launch_command(text, std::string(COLLSIM_OMPI_MPIRUN) + " --report-bindings",
                       report("OMPI_COMM_WORLD_RANK"));
    const Run r = sh(cmd);
    INFO(cmd << "\n" << text << r.out << r.err);
    REQUIRE(r.code == 0);
    CHECK(cpus_by_rank(r.out) == want);
    CHECK(r.err.find("MCW rank 0 bound to socket 0[core 1") != std::string::npos);
    CHECK(r.err.find("MCW rank 1 bound to socket 0[core 0") != std::string::npos);
  }
  SECTION("with relative +n0, inside an allocation") {
    // +nK needs a resource manager's allocation. Open MPI's Slurm allocation reader takes it from
    // the environment; the isolated launcher starts the ranks here without srun.
    const std::string file = work_dir() / "rankfile_relative";
    const std::string text = analysis::ompi_rankfile(p, swapped, {{}, file});
    write("rankfile_relative", text);
    REQUIRE(text.find("=+n0 slot=0:1") != std::string::npos);
    const std::string h = host_name();
    const std::string env = "env SLURM_JOBID=1 SLURM_JOB_ID=1 SLURM_NODELIST=" + h +
                            " SLURM_JOB_NODELIST=" + h +
                            " SLURM_TASKS_PER_NODE=2 OMPI_MCA_ras=slurm OMPI_MCA_plm=isolated ";
    const std::string cmd =
        launch_command(text, env + COLLSIM_OMPI_MPIRUN, report("OMPI_COMM_WORLD_RANK"));
    const Run r = sh(cmd);
    INFO(cmd << "\n" << text << r.out << r.err);
    REQUIRE(r.code == 0);
    CHECK(cpus_by_rank(r.out) == want);
  }
}

TEST_CASE("mpiexec.hydra runs every rank on the host and core of collsim's MPICH machinefile",
          "[probe][mpi][placement][launchers][mpich]") {
  if (!two_cores()) {
    return;
  }
  if (std::string(COLLSIM_MPICH_EXEC).empty()) {
    WARN("MPICH's mpiexec is not installed (Debian: mpich, beside Open MPI; then re-run cmake): "
         "the machinefile is not run");
    return;
  }
  // Two "nodes" that are both this machine under two names, so the file has three lines, a host
  // coming back, and a different binding list on each line.
  const analysis::PlacementProblem p = problem(2);
  const analysis::Mapping m{3, 0, 1, 2}; // ranks 0..3 on (node, core) (1,1) (0,0) (0,1) (1,0)
  const std::string file = work_dir() / "machinefile";
  const std::string h = host_name();
  const std::string text = analysis::mpich_hostfile(p, m, {{h, "localhost"}, file});
  write("machinefile", text);
  REQUIRE(text.find("\n" + h + ":2 binding=user:0,1\n") != std::string::npos);
  const std::string cmd = launch_command(
      text, COLLSIM_MPICH_EXEC,
      "sh -c 'echo $PMI_RANK $(grep Cpus_allowed_list /proc/self/status) $(hostname)'");
  const Run r = sh(cmd);
  INFO(cmd << "\n" << text << r.out << r.err);
  REQUIRE(r.code == 0);
  CHECK(cpus_by_rank(r.out) == std::map<int, std::string>{{0, "1"}, {1, "0"}, {2, "1"}, {3, "0"}});
}

TEST_CASE("the Slurm hostfile's per-rank binding command puts every rank on its core",
          "[probe][mpi][placement][launchers][slurm]") {
  if (!two_cores()) {
    return;
  }
  if (sh("taskset -V").code != 0) {
    WARN("taskset (util-linux) is missing: the Slurm file's binding command is not run");
    return;
  }
  const analysis::PlacementProblem p = problem(2);
  const analysis::Mapping m{3, 0, 1, 2}; // node 0's cores in rank order 0,1; node 1's 1,0
  const std::string file = work_dir() / "slurm_hosts";
  const std::string text = analysis::slurm_hostfile(p, m, {{}, file});
  write("slurm_hosts", text);
  REQUIRE(text.find("--cpu-bind=map_cpu:") == std::string::npos);
  // The command srun would start for each rank: sh -c '...' with SLURM_PROCID set.
  const auto from = text.find("sh -c '");
  REQUIRE(from != std::string::npos);
  std::string script = text.substr(from, text.find("'\n", from) + 1 - from);
  script.replace(script.find("./app"), 5, "grep Cpus_allowed_list /proc/self/status");
  std::map<int, std::string> got;
  for (int rank = 0; rank < 4; ++rank) {
    const Run r = sh("env SLURM_PROCID=" + std::to_string(rank) + " " + script);
    INFO(script << "\n" << r.out << r.err);
    REQUIRE(r.code == 0);
    got.merge(cpus_by_rank(std::to_string(rank) + " " + r.out));
  }
  CHECK(got == std::map<int, std::string>{{0, "1"}, {1, "0"}, {2, "1"}, {3, "0"}});
}
