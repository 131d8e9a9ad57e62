#pragma once
// Keeps the points a process runs at once within a memory
// budget (docs/distributed.md, "Memory").
//
// Sweeps run their biggest points first (longest-first scheduling), so with two or more threads
// the two biggest points of a sweep start together. Each point reports what its schedule and its
// engine hold as they grow (core/memory_meter.hpp); the gate admits a new point only while the
// points running hold less than the budget, and a point whose growth would take them past it
// while others run gives its memory back (MemoryRetry unwinds it) and runs again once it fits,
// or alone. A point that runs alone is never stopped: it may take more than the budget, as it
// would in a sweep on one thread.

#include "collsim/core/memory_meter.hpp"

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>

namespace collsim::analysis {

/// The points running in one process and the memory they hold (the executors' worker threads
/// share one per sweep).
class MemoryGate {
public:
  /// `budget` bytes for all the points running at once (0: no limit).
  explicit MemoryGate(std::uint64_t budget) : budget_(budget) {}
  MemoryGate(const MemoryGate&) = delete;
  MemoryGate& operator=(const MemoryGate&) = delete;

  /// Runs body(i, meter) once it may start, again after every MemoryRetry; rethrows anything
  /// else body throws. Thread-safe.
  void run(std::size_t i, const std::function<void(std::size_t, core::MeterRef)>& body);

  /// For tests and reports: the most bytes the running points held at once, and how many times a
  /// point gave its memory back to run again.
  [[nodiscard]] std::uint64_t peak() const;
  [[nodiscard]] std::size_t retries() const;

private:
  class Point final : public core::MemoryMeter {
  public:
    explicit Point(MemoryGate& gate) : gate_(gate) {}
    void charge(std::uint64_t bytes) override { gate_.charge(*this, bytes); }
    void credit(std::uint64_t bytes) noexcept override { gate_.credit(*this, bytes); }
    std::uint64_t held = 0; ///< bytes charged and not yet credited
    std::uint64_t need = 0; ///< the most it was known to need when it last gave way
    unsigned retries = 0;
    bool alone = false; ///< runs with no other point beside it (after two retries)

  private:
    MemoryGate& gate_;
  };

  void enter();
  void again(Point& p);
  void leave(Point& p) noexcept;
  void charge(Point& p, std::uint64_t bytes);
  void credit(Point& p, std::uint64_t bytes) noexcept;

  const std::uint64_t budget_;
  mutable std::mutex lock_;
  std::condition_variable changed_;
  std::uint64_t held_ = 0;  // bytes the running points hold
  std::uint64_t peak_ = 0;  // the most held_ was
  unsigned running_ = 0;    // points admitted and not finished
  unsigned waiting_ = 0;    // points that gave way and wait to run again: no new point starts
  bool alone_ = false;      // a point runs alone: no other point starts
  std::size_t retries_ = 0; // times a point gave way
};

} // namespace collsim::analysis
