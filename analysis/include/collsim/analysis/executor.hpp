#pragma once
// Where the independent points of a sweep run: threads of this process (the default), or the
// processes of an MPI job (collsim::distributed, under mpirun or srun). A sweep hands its points
// over as SweepItems; the executor runs each point once somewhere and, where a point ran in
// another process, gives its result back in bytes, so that every process ends with every result
// and goes on exactly as a single process would.

#include "collsim/core/memory_meter.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace collsim::analysis {

/// One sweep's points, numbered 0 .. count-1, and what an executor does with them.
struct SweepItems {
  std::size_t count = 0;
  /// Computes point i into the caller's storage (from any thread; points are independent), its
  /// schedule and engine reporting their memory to `meter` (algorithms::Request::meter). Called
  /// again for the same point if it throws core::MemoryRetry (its memory did not fit beside the
  /// points running: memory_gate.hpp); it must then leave nothing behind.
  std::function<void(std::size_t, core::MeterRef meter)> run;
  /// Point i's result, after run(i), as bytes (only for executors that move results between
  /// processes).
  std::function<std::string(std::size_t)> save;
  /// Stores point i's result, computed elsewhere, from the bytes save(i) gave there.
  std::function<void(std::size_t, std::string_view)> load;
  /// The point for people, for an error raised while computing it ("ring at 8 ranks, 1048576
  /// bytes").
  std::function<std::string(std::size_t)> describe;
  /// Called after each point finished with how many have finished so far (progress; may be
  /// empty; thread-safe callers only).
  std::function<void(std::size_t)> done;
};

/// Runs a sweep's points.
class Executor {
public:
  Executor() = default;
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;
  virtual ~Executor() = default;
  /// Runs every item; returns once this process holds every result (run here or loaded). The
  /// first failure stops points from starting and is thrown once the running ones have finished,
  /// in every process of the job.
  virtual void run(const SweepItems& items) const = 0;
};

/// Threads of this process: `threads` workers (0: all cores), the calling thread one of them,
/// running at once only points whose schedules and engine state fit in `memory_budget` bytes
/// together (0: no limit; a point alone always runs).
class ThreadExecutor final : public Executor {
public:
  explicit ThreadExecutor(unsigned threads = 0, std::uint64_t memory_budget = 0)
      : threads_(threads), memory_budget_(memory_budget) {}
  void run(const SweepItems& items) const override;

private:
  unsigned threads_;
  std::uint64_t memory_budget_;
};

/// The memory this process can use now: the kernel's MemAvailable, within what the cgroup's limit
/// (cgroup v2 memory.max, as Slurm and containers set it) leaves; 0 where neither can be read.
/// Sweeps run without an executor keep their points within it.
std::uint64_t available_memory();

/// Runs `items` on `executor`, or on `threads` threads of this process when it is null (what
/// every sweep of collsim::analysis does with its `threads` and `executor` options).
void run_items(const Executor* executor, unsigned threads, const SweepItems& items);

} // namespace collsim::analysis
