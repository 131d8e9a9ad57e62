#pragma once
// Structural validation and symbolic semantic checking of schedules (algorithms.md section 5.2).
//
// validate():        ranges inside buffers, peers in range, dependencies point to earlier
// operations
//                    (operations issue in program order, so a later one can never be waited for),
//                    every send matched by one receive of the same length (FIFO per ordered pair),
//                    and an untimed execution that finishes (no deadlock).
// check_semantics(): executes the schedule symbolically. Each byte holds which ranks' contributions
//                    it carries (a pair of 64-bit random-weight fingerprints and a count, so a
//                    missing or duplicated contribution is caught except with probability ~2^-64)
//                    and which element of the origin buffer it is; then the collective's
//                    postcondition is checked.

#include "collsim/core/schedule.hpp"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace collsim::core {

/// The problems found (empty when the schedule passed). At most `kMaxProblems` are listed.
struct VerifyReport {
  static constexpr std::size_t kMaxProblems = 10;
  std::vector<std::string> problems;
  std::size_t total_problems = 0;
  [[nodiscard]] bool ok() const { return problems.empty(); }
  void add(std::string problem);
  /// All problems, one per line (with a count of those not listed).
  [[nodiscard]] std::string summary() const;
};

/// For every send, the global id of the matching receive, and for every receive its send;
/// kNoMatch for local operations and for unmatched ones.
inline constexpr OpId kNoMatch = 0xffffffffu;
struct Matching {
  BigVector<OpId> partner;
  std::size_t unmatched = 0;
};
/// Matches sends and receives first-in first-out per ordered pair of ranks in O(ops log peers).
/// Problems (unmatched operations, length mismatches, bad peers) are added to `report` if given.
Matching match_messages(const Schedule& s, VerifyReport* report = nullptr);
/// The same matching, streamed: sink(send, recv) for every matched pair, in send order. Returns the
/// number of unmatched operations. (Engines store partners in their own per-operation state.)
std::size_t match_messages(const Schedule& s, const std::function<void(OpId, OpId)>& sink,
                           VerifyReport* report = nullptr);

/// Flow control (Protocol::fifo_slots): for every send that must wait for a FIFO slot,
/// credit(send, recv), where recv is the receive of the send `slots` earlier on the same
/// connection (sender, receiver, the sender's stream), in program order; the send may start only
/// once that receive has completed. partner(send) gives a send's matched receive. Both engines
/// use it, so that they bound a connection alike.
void fifo_credits(const Schedule& s, std::uint32_t slots, const std::function<OpId(OpId)>& partner,
                  const std::function<void(OpId, OpId)>& credit);

VerifyReport validate(const Schedule& s);
/// Runs validate() first; semantic checks run only on a structurally valid schedule.
VerifyReport check_semantics(const Schedule& s, std::uint64_t seed = 0x5eed5eedULL);

/// What check_semantics looks at besides the collective's postcondition.
struct SemanticsOptions {
  std::uint64_t seed = 0x5eed5eedULL;
  /// Report every send, copy or reduction that reads bytes nothing has written yet (an imported
  /// MSCCL algorithm that sends a scratch chunk before any step wrote it). Off by default: a
  /// built-in generator may move undefined bytes that no result depends on.
  bool undefined_reads = false;
  /// Check the postcondition (off for what has none: MSCCL's `custom` collectives).
  bool postcondition = true;
};
VerifyReport check_semantics(const Schedule& s, const SemanticsOptions& options);
/// Throws ScheduleError with the report's summary if either check fails.
void require_correct(const Schedule& s);

} // namespace collsim::core
