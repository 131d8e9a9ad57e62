// Joining and leaving the MPI job (docs/distributed.md).

#include "collsim/distributed/session.hpp"

#include "collsim/core/errors.hpp"
#include "mpi_executor.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <mpi.h>
#include <thread>
#include <unistd.h>

namespace collsim::distributed {
namespace {

/// Whether a launcher started this process as a rank of a job: Open MPI's mpirun sets
/// OMPI_COMM_WORLD_SIZE, MPICH's Hydra PMI_SIZE, a PMIx launcher (Open MPI 5's prterun, srun
/// --mpi=pmix) PMIX_RANK, Slurm's srun with PMI-2 PMI_RANK. Without one collsim does not call
/// MPI_Init, so a plain `collsim ...` starts as fast as a build without MPI.
bool launched_by_mpi() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "PMI_RANK"}) {
    if (std::getenv(name) != nullptr) {
      return true;
    }
  }
  return false;
}

bool mpi_running() {
  int initialized = 0;
  int finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  return initialized != 0 && finalized == 0;
}

void silence(int fd) {
  const int null = ::open("/dev/null", O_WRONLY);
  if (null >= 0) {
    ::dup2(null, fd);
    ::close(null);
  }
}

} // namespace

Session::Session(int& argc, char**& argv) {
  if (!launched_by_mpi()) {
    return;
  }
  // FUNNELED: only the main thread calls MPI; the sweep's worker threads compute (mpi_executor).
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  joined_ = true;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  if (provided < MPI_THREAD_FUNNELED && size_ > 1) {
    if (rank_ == 0) {
      std::fputs("collsim: error: the MPI library gives no thread support "
                 "(MPI_THREAD_FUNNELED), which a distributed sweep needs\n",
                 stderr);
    }
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  if (rank_ != 0) {
    std::fflush(stdout);
    std::fflush(stderr);
    silence(STDOUT_FILENO);
    silence(STDERR_FILENO);
  }
}

Session::~Session() {
  if (joined_ && !finished_ && mpi_running()) {
    MPI_Finalize();
  }
}

int Session::finish(int code) {
  finished_ = true;
  if (!joined_ || !mpi_running()) {
    return code;
  }
  std::fflush(stdout);
  std::fflush(stderr);
  if (size_ > 1) {
    // The ranks agree on the job's exit code. They arrive together: every rank runs the same
    // command on the same input, so they fail together on bad input, and a failed sweep point is
    // every rank's error (the executor makes it so). A rank that fails alone (rank 0 could not
    // write its output file) finds the others here too; if they do not come within a minute they
    // are waiting for it in a sweep, and the job is aborted rather than left hanging.
    int job_code = 0;
    MPI_Request agree = MPI_REQUEST_NULL;
    MPI_Iallreduce(&code, &job_code, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &agree);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    int done = 0;
    while (done == 0 && std::chrono::steady_clock::now() < deadline) {
      MPI_Test(&agree, &done, MPI_STATUS_IGNORE);
      if (done == 0) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    }
    if (done == 0) {
      MPI_Abort(MPI_COMM_WORLD, code != 0 ? code : 1);
    }
    code = job_code;
  }
  MPI_Finalize();
  return code;
}

bool primary() {
  if (!mpi_running()) {
    return true;
  }
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank == 0;
}

int processes() {
  if (!mpi_running()) {
    return 1;
  }
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

std::unique_ptr<analysis::Executor> executor(unsigned threads,
                                             std::optional<std::uint64_t> max_memory) {
  if (processes() < 2) {
    return std::make_unique<analysis::ThreadExecutor>(
        threads, max_memory.value_or(analysis::available_memory()));
  }
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::uint64_t budget = 0;
  if (max_memory) {
    budget = *max_memory;
  } else {
    // The processes of one node share its memory (MPI-3's shared-memory split: the node).
    MPI_Comm node = MPI_COMM_NULL;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
    int local = 1;
    MPI_Comm_size(node, &local);
    MPI_Comm_free(&node);
    budget = analysis::available_memory() / static_cast<std::uint64_t>(std::max(local, 1));
  }
  return std::make_unique<detail::MpiExecutor>(rank, processes(), threads == 0 ? 1U : threads,
                                               budget);
}

} // namespace collsim::distributed
