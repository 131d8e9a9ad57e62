#pragma once
// Helpers shared by the algorithm tests: requests, per-rank traffic, and a race check.

#include "collsim/algorithms/registry.hpp"
#include "collsim/core/schedule.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace collsim::testing {

/// An allreduce request of `bytes` bytes over `ranks` ranks.
algorithms::Request allreduce_request(std::uint32_t ranks, std::uint64_t bytes);

/// What one rank sends and receives.
struct RankTraffic {
  std::uint64_t sends = 0;
  std::uint64_t send_bytes = 0;
  std::uint64_t recvs = 0; ///< recv and recv_reduce
  std::uint64_t recv_bytes = 0;
  std::uint64_t reduced_bytes = 0;    ///< bytes combined by recv_reduce and reduce
  std::vector<core::Rank> send_peers; ///< in program order
  std::vector<std::uint64_t> send_lengths;
};
std::vector<RankTraffic> traffic(const core::Schedule& s);

/// MPI's buffer rule, checked within each rank: when two operations touch overlapping bytes of the
/// same buffer and either writes them, the later one (in program order) must depend, directly or
/// through other dependencies, on the earlier one; otherwise a timed run could let them overlap.
/// Returns a description of the first violation, or "" when there is none. O(ops^2) per rank.
} // namespace collsim::testing
