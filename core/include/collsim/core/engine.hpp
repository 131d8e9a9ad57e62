#pragma once
// The engine interface (ARCHITECTURE.md, "Engine"): re-entrant, no shared mutable state, so sweeps
// can run engines in parallel.

#include "collsim/core/schedule.hpp"
#include "collsim/core/topology.hpp"
#include "collsim/core/units.hpp"

#include <cstdint>
#include <string_view>
#include <vector>

namespace collsim::core {

struct RunOptions {
  bool timeline = false; ///< record every operation's start and end
};

/// One operation's timing, recorded when RunOptions::timeline is set.
struct OpTiming {
  OpId op = 0;
  Seconds start;
  Seconds end;
  bool operator==(const OpTiming&) const = default;
};

struct RunResult {
  Seconds time;                     ///< completion of the last rank
  std::vector<Seconds> rank_finish; ///< completion of each rank's last operation
  std::uint64_t operations = 0;
  std::uint64_t messages = 0;
  std::uint64_t bytes_sent = 0;   ///< sum over all messages
  std::vector<OpTiming> timeline; ///< empty unless requested
};

class Engine {
public:
  Engine() = default;
  Engine(const Engine&) = default;
  Engine& operator=(const Engine&) = default;
  Engine(Engine&&) = default;
  Engine& operator=(Engine&&) = default;
  virtual ~Engine() = default;
  [[nodiscard]] virtual std::string_view name() const = 0;
  /// Times a schedule that passed validate() on a topology with at least schedule.ranks() ranks.
  [[nodiscard]] virtual RunResult run(const Schedule& schedule, const Topology& topology,
                                      const RunOptions& options) const = 0;
};

/// algbw = S / t in bytes per second (S in nccl-tests' convention, the schedule's header bytes).
Bandwidth algorithm_bandwidth(Bytes size, Seconds time);
/// busbw = algbw * nccl-tests' factor for the collective.
Bandwidth bus_bandwidth(CollectiveKind c, std::uint32_t ranks, Bytes size, Seconds time);

} // namespace collsim::core
