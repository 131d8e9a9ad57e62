#pragma once
// Helpers shared by the algorithm tests: requests, per-rank traffic, and a race check.

#include "collsim/algorithms/registry.hpp"
#include "collsim/core/schedule.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace collsim::testing {

/// An allreduce request of `bytes` bytes over `ranks` ranks.
algorithms::Request allreduce_request(std::uint32_t ranks, std::uint64_t bytes);

/// Algorithm parameters by name, as a test writes them.
using Params = std::map<std::string, std::int64_t>;
/// The default registry's allreduce algorithm `name` for p ranks and n bytes: its schedule, and its
/// declared closed form.
core::Schedule allreduce_schedule(const std::string& name, std::uint32_t p, std::uint64_t n,
                                  const Params& params = {});
std::optional<algorithms::CostTerms> allreduce_cost(const std::string& name, std::uint32_t p,
                                                    std::uint64_t n, const Params& params = {});
/// check_semantics (which runs validate() and its race check first) of allreduce `name` on 1..20
/// ranks and 0, 1, p+3, 1000 and 4099 bytes, for each parameter variant (Catch2 CHECKs).
void check_allreduce_variants(const std::string& name, const std::vector<Params>& variants);

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
