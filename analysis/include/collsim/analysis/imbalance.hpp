#pragma once
// Irregular and imbalanced calls (issue 21): a v-collective's per-rank counts from a counts spec,
// the ranks' arrival times from a skew spec, and arrival skew applied to a schedule so that every
// engine sees it (docs/imbalance.md).

#include "collsim/core/imbalance.hpp"
#include "collsim/core/schedule.hpp"

#include <cstdint>
#include <vector>

namespace collsim::analysis {

/// The counts of `collective` over `ranks` ranks for a size of `bytes` (core::ScheduleHeader::
/// counts): `ranks` block sizes that add up to `bytes`, or for alltoall `ranks` rows of
/// sendcounts that each add up to `bytes` (cart and graph: `bytes` per neighbour message, so a
/// row adds up to `bytes` x the rank's out-degree; the schedule's size is core::counts_bytes).
/// Weights are turned into whole bytes by largest remainders, so every total is exact. Throws
/// UsageError naming the spec when it does not fit (a rank beyond the point's, a file with the
/// wrong number of weights, all weights 0).
std::vector<std::uint64_t> make_counts(const core::CountsSpec& spec,
                                       core::CollectiveKind collective, std::uint32_t ranks,
                                       std::uint64_t bytes);

/// When each of `ranks` ranks enters the call, in seconds after the first (the earliest is 0).
/// Throws UsageError naming the spec when it does not fit (a late rank beyond the point's, a file
/// with the wrong number of times).
std::vector<double> make_arrivals(const core::SkewSpec& spec, std::uint32_t ranks);

/// `schedule` with each rank entering at its arrival: a rank that arrives later than 0 first
/// computes (a calc of its arrival time, LogGOPSim's way of delaying a rank) and the first
/// operation of each of its issue streams waits for that. Agents and ranks that arrive at 0 are
/// unchanged; every engine then sees the skew. `arrivals` has one entry per rank.
core::Schedule apply_arrivals(const core::Schedule& schedule, const std::vector<double>& arrivals);

} // namespace collsim::analysis
