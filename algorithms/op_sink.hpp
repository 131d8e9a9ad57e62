#pragma once
// Internal: a destination for a generator's operations that either appends them to a schedule or
// only counts them. A generator written once against OpSink gives both its exact reservation
// (detail::OpCounts, for check() and Schedule::reserve) and the schedule, so the two cannot drift
// apart. Used by the block F generators (MPICH recexch, SMPI mesh, and friends).

#include "generator_support.hpp"

#include <span>

namespace collsim::algorithms::detail {

class OpSink {
public:
  /// Counts only.
  OpSink() = default;
  /// Appends to `s` (and counts).
  explicit OpSink(core::Schedule& s) : schedule_(&s) {}

  void begin_rank(core::Rank r) {
    if (schedule_ != nullptr) {
      schedule_->begin_rank(r);
    }
    next_ = 0;
  }
  /// Appends send/recv/recv_reduce; returns the operation's local index.
  std::uint32_t message(core::OpKind kind, core::Rank peer, core::Range target,
                        std::span<const std::uint32_t> deps = {}) {
    if (schedule_ != nullptr) {
      add_op(*schedule_, kind, peer, target, deps);
    }
    return counted(deps.size());
  }
  std::uint32_t send(core::Rank peer, core::Range from, std::span<const std::uint32_t> deps = {}) {
    return message(core::OpKind::send, peer, from, deps);
  }
  std::uint32_t recv(core::Rank peer, core::Range into, std::span<const std::uint32_t> deps = {}) {
    return message(core::OpKind::recv, peer, into, deps);
  }
  /// Appends a local copy `from` -> `into`.
  std::uint32_t copy(core::Range from, core::Range into, std::span<const std::uint32_t> deps = {}) {
    if (schedule_ != nullptr) {
      schedule_->add(core::OpKind::copy, 0, into, from, deps);
    }
    return counted(deps.size());
  }
  [[nodiscard]] const OpCounts& counts() const { return counts_; }

private:
  std::uint32_t counted(std::size_t ndeps) {
    ++counts_.ops;
    counts_.deps += ndeps;
    return next_++;
  }
  core::Schedule* schedule_ = nullptr;
  OpCounts counts_;
  std::uint32_t next_ = 0;
};

} // namespace collsim::algorithms::detail
