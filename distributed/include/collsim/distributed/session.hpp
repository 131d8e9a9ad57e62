#pragma once
// collsim inside an MPI job (docs/distributed.md): `mpirun -np N collsim run|sim|tune|validate ...`
// or `srun collsim ...` spreads a sweep's points over the job's processes. MPI is the whole
// distributed engine: rank 0 hands out points one at a time as processes ask for work, gathers the
// results and sends every process all of them, so that each goes on as a single process would and
// rank 0 prints exactly what a one-process run prints. Without a launcher (or in a build without
// MPI) collsim is a single process and nothing here does anything.

#include "collsim/analysis/executor.hpp"

#include <cstdint>
#include <memory>
#include <optional>

namespace collsim::distributed {

/// This process's place in the job. Construct it first thing in main and let it end the job.
class Session {
public:
  /// Joins the MPI job when an MPI launcher started this process (Open MPI's mpirun, MPICH's
  /// mpiexec, Slurm's srun: the variables they set), else stays a single process. In a job,
  /// every rank but 0 sends its standard output and error to /dev/null: rank 0 speaks for all.
  Session(int& argc, char**& argv);
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
  ~Session();

  [[nodiscard]] int rank() const { return rank_; }
  [[nodiscard]] int size() const { return size_; }

  /// Ends this process's part of the job and returns the job's exit code: the largest of the
  /// ranks' `code`s, so that every rank exits alike. The ranks wait up to a minute for each other
  /// (they finish together: same command, same input, sweep failures shared); a rank whose
  /// partners do not come (they wait for it in a sweep) aborts the job instead of hanging it.
  int finish(int code);

private:
  int rank_ = 0;
  int size_ = 1;
  bool joined_ = false;
  bool finished_ = false;
};

/// True in a single process and on rank 0 of a job: the process that prints and writes files.
/// Asks MPI itself (initialised, and this rank), so commands need no session object.
[[nodiscard]] bool primary();

/// How many processes run the job (1 outside one).
[[nodiscard]] int processes();

/// The executor of the job's sweeps: MPI's dynamic distribution over the job's processes with
/// `threads` worker threads in each (0: one per process, as `mpirun` places one per core), or
/// outside a job of several processes this process's threads (0: all cores). The points a
/// process runs at once hold at most `max_memory` bytes (analysis::MemoryGate); by default the
/// memory available when the sweep starts (analysis::available_memory), shared equally by the
/// job's processes on the node.
[[nodiscard]] std::unique_ptr<analysis::Executor>
executor(unsigned threads, std::optional<std::uint64_t> max_memory = std::nullopt);

} // namespace collsim::distributed
