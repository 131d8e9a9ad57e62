// The memory gate of sweeps (memory_gate.hpp), and the memory a sweep may use by default.

#include "collsim/analysis/memory_gate.hpp"

#include "collsim/analysis/executor.hpp"
#include "collsim/core/errors.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <limits>
#include <string>

namespace collsim::analysis {

void MemoryGate::run(std::size_t i, const std::function<void(std::size_t, core::MeterRef)>& body) {
  Point point(*this);
  enter();
  while (true) {
    try {
      body(i, budget_ != 0 ? core::MeterRef(&point) : core::MeterRef());
      break;
    } catch (const core::MemoryRetry&) {
      again(point); // the point's arrays are gone: unwinding destroyed their leases
    } catch (...) {
      leave(point);
      throw;
    }
  }
  const std::uint64_t left = point.held;
  leave(point);
  if (left != 0) {
    // Something the point built outlived it and still holds bytes on its meter.
    throw core::InternalError(
        fmt::format("memory gate: a sweep point ended holding {} bytes", left));
  }
}

void MemoryGate::enter() {
  std::unique_lock lock(lock_);
  // A point that gave way goes first; else a new one starts while there is room.
  changed_.wait(lock, [&] {
    return waiting_ == 0 && !alone_ && (budget_ == 0 || running_ == 0 || held_ < budget_);
  });
  ++running_;
}

void MemoryGate::again(Point& p) {
  std::unique_lock lock(lock_);
  --running_;
  ++waiting_;
  ++retries_;
  ++p.retries;
  changed_.notify_all();
  // Once it fits beside the running points; after giving way twice, only alone (the others it
  // met grew too), so that every point runs in the end.
  changed_.wait(lock, [&] {
    return !alone_ && (running_ == 0 || (p.retries < 2 && held_ + p.need <= budget_));
  });
  --waiting_;
  ++running_;
  p.alone = p.retries >= 2;
  alone_ = p.alone;
}

void MemoryGate::leave(Point& p) noexcept {
  const std::lock_guard lock(lock_);
  --running_;
  if (p.alone) {
    alone_ = false;
  }
  changed_.notify_all();
}

void MemoryGate::charge(Point& p, std::uint64_t bytes) {
  const std::lock_guard lock(lock_);
  if (running_ > 1 && held_ + bytes > budget_) {
    p.need = std::max(p.need, p.held + bytes);
    throw core::MemoryRetry{};
  }
  held_ += bytes;
  p.held += bytes;
  peak_ = std::max(peak_, held_);
}

void MemoryGate::credit(Point& p, std::uint64_t bytes) noexcept {
  const std::lock_guard lock(lock_);
  held_ -= std::min(held_, bytes);
  p.held -= std::min(p.held, bytes);
  changed_.notify_all();
}

std::uint64_t MemoryGate::peak() const {
  const std::lock_guard lock(lock_);
  return peak_;
}

std::size_t MemoryGate::retries() const {
  const std::lock_guard lock(lock_);
  return retries_;
}

namespace {

/// The value of `key` (in kB) in /proc/meminfo, or nullopt.
std::uint64_t meminfo_bytes(const std::string& key) {
  std::ifstream in("/proc/meminfo");
  std::string name;
  std::uint64_t kb = 0;
  std::string unit;
  while (in >> name >> kb) {
    std::getline(in, unit);
    if (name == key + ":") {
      return kb * 1024;
    }
  }
  return 0;
}

/// One number from a cgroup file ("max" or unreadable: none).
std::uint64_t cgroup_value(const char* path) {
  std::ifstream in(path);
  std::string text;
  if (!(in >> text) || text == "max") {
    return std::numeric_limits<std::uint64_t>::max();
  }
  try {
    return std::stoull(text);
  } catch (const std::exception&) {
    return std::numeric_limits<std::uint64_t>::max();
  }
}

} // namespace

std::uint64_t available_memory() {
  // The kernel's estimate of what can be allocated without swapping, and within the process's
  // cgroup (v2: Slurm's and containers' memory limit) what its limit leaves.
  std::uint64_t bytes = meminfo_bytes("MemAvailable");
  const std::uint64_t limit = cgroup_value("/sys/fs/cgroup/memory.max");
  if (limit != std::numeric_limits<std::uint64_t>::max()) {
    const std::uint64_t used = cgroup_value("/sys/fs/cgroup/memory.current");
    const std::uint64_t left =
        used == std::numeric_limits<std::uint64_t>::max() || used > limit ? 0 : limit - used;
    bytes = bytes == 0 ? left : std::min(bytes, left);
  }
  return bytes;
}

} // namespace collsim::analysis
