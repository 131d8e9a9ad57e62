#pragma once
// Internal to distributed: a sweep over the processes of an MPI job (docs/distributed.md).

#include "collsim/analysis/executor.hpp"
#include "collsim/core/errors.hpp"

#include <cstdint>
#include <string>

namespace collsim::distributed::detail {

/// A sweep point that failed in some process of the job: every process throws it, with the point
/// and the rank that ran it, and exits as the original error would (exit 2 for bad input, else 1).
class PointFailed : public core::Error {
public:
  PointFailed(const std::string& message, bool input_error)
      : core::Error(message), input_error_(input_error) {}
  [[nodiscard]] bool is_input_error() const override { return input_error_; }

private:
  bool input_error_;
};

/// Rank 0 leads: its main thread hands out points (the next unstarted one to whichever worker
/// thread asks) and gathers results while its own worker threads compute; every other rank's
/// main thread asks for points for its worker threads and sends their results back. At the end
/// rank 0 broadcasts every result (or the first failure) so that all ranks hold the same state.
/// Only main threads call MPI (MPI_THREAD_FUNNELED).
class MpiExecutor final : public analysis::Executor {
public:
  /// `memory_budget`: bytes the points running at once in this process may hold (MemoryGate;
  /// 0: no limit).
  MpiExecutor(int rank, int size, unsigned threads, std::uint64_t memory_budget)
      : rank_(rank), size_(size), threads_(threads), memory_budget_(memory_budget) {}
  void run(const analysis::SweepItems& items) const override;

private:
  void lead(const analysis::SweepItems& items) const;
  void follow(const analysis::SweepItems& items) const;
  int rank_;
  int size_;
  unsigned threads_;
  std::uint64_t memory_budget_;
};

} // namespace collsim::distributed::detail
