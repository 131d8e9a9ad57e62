#pragma once
// Memory accounting for sweeps that run several points at once (analysis/memory_gate.hpp).
//
// A point's memory is its schedule's arrays and its engine's state per operation: a ring
// allreduce holds 4p^2 operations, so one point at 8192 ranks takes gigabytes and two such points
// side by side may take more than the machine has. The arrays report what they hold to the
// point's meter as they grow, before they allocate; a meter that cannot fit a point next to the
// others running throws MemoryRetry, the point unwinds (giving its memory back) and its executor
// runs it again once memory is free.

#include <cstdint>
#include <utility>

namespace collsim::core {

/// Where one sweep point's large arrays report their bytes.
class MemoryMeter {
public:
  MemoryMeter() = default;
  MemoryMeter(const MemoryMeter&) = delete;
  MemoryMeter& operator=(const MemoryMeter&) = delete;
  virtual ~MemoryMeter() = default;
  /// The point is about to hold `bytes` more. Throws MemoryRetry (holding nothing more) when the
  /// point should give its memory back and run later.
  virtual void charge(std::uint64_t bytes) = 0;
  /// The point gave back `bytes` it was charged.
  virtual void credit(std::uint64_t bytes) noexcept = 0;
};

/// Thrown by MemoryMeter::charge. Deliberately not a std::exception: it is control flow between
/// a point and its executor, and no handler of errors may take it for one.
struct MemoryRetry {};

/// A non-owning reference to a point's meter, carried in a ScheduleHeader and a RunOptions: not
/// part of any value (it compares equal to every other), so a schedule built under a meter is the
/// same schedule as one built without.
class MeterRef {
public:
  MeterRef() = default;
  explicit MeterRef(MemoryMeter* meter) : meter_(meter) {}
  [[nodiscard]] MemoryMeter* get() const { return meter_; }
  bool operator==(const MeterRef& /*other*/) const { return true; }

private:
  MemoryMeter* meter_ = nullptr;
};

/// What one object holds on a meter, given back when it is destroyed. A copy holds nothing until
/// it reports its own size; a move takes the bytes along.
class MeterLease {
public:
  MeterLease() = default;
  explicit MeterLease(MeterRef meter) : meter_(meter.get()) {}
  MeterLease(const MeterLease& other) : meter_(other.meter_) {}
  MeterLease(MeterLease&& other) noexcept
      : meter_(other.meter_), bytes_(std::exchange(other.bytes_, 0)) {}
  MeterLease& operator=(const MeterLease& other) {
    if (this != &other) {
      release();
      meter_ = other.meter_;
    }
    return *this;
  }
  MeterLease& operator=(MeterLease&& other) noexcept {
    if (this != &other) {
      release();
      meter_ = other.meter_;
      bytes_ = std::exchange(other.bytes_, 0);
    }
    return *this;
  }
  ~MeterLease() { release(); }
  /// Holds `bytes` from now on: charges the growth (which may throw MemoryRetry, leaving the
  /// lease as it was) or credits the shrinkage.
  void hold(std::uint64_t bytes) {
    if (meter_ == nullptr || bytes == bytes_) {
      return;
    }
    if (bytes > bytes_) {
      meter_->charge(bytes - bytes_);
    } else {
      meter_->credit(bytes_ - bytes);
    }
    bytes_ = bytes;
  }
  [[nodiscard]] bool metered() const { return meter_ != nullptr; }
  [[nodiscard]] std::uint64_t bytes() const { return bytes_; }

private:
  void release() noexcept {
    if (meter_ != nullptr && bytes_ != 0) {
      meter_->credit(bytes_);
    }
    bytes_ = 0;
  }
  MemoryMeter* meter_ = nullptr;
  std::uint64_t bytes_ = 0;
};

} // namespace collsim::core
