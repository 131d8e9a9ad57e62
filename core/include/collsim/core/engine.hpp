#pragma once
// The engine interface (ARCHITECTURE.md, "Engine"): re-entrant, no shared mutable state, so sweeps
// can run engines in parallel.

#include "collsim/core/errors.hpp"
#include "collsim/core/schedule.hpp"
#include "collsim/core/topology.hpp"
#include "collsim/core/units.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace collsim::core {

struct RunOptions {
  bool timeline = false; ///< record every operation's start and end
  bool messages = false; ///< record every message's time on the wire (RunResult::message_timeline)
  bool link_loads =
      false; ///< per-link bytes and busy time (RunResult::link_loads; implies messages)
};

/// One operation's timing, recorded when RunOptions::timeline is set.
struct OpTiming {
  OpId op = 0;
  Seconds start;
  Seconds end;
  bool operator==(const OpTiming&) const = default;
};

/// One message's time on the wire: from the first byte leaving the sender to the last byte reaching
/// the receiver. `send` is the sending operation.
struct MessageTiming {
  OpId send = 0;
  Seconds start;
  Seconds end;
  bool operator==(const MessageTiming&) const = default;
};

/// What one directed link carried during a run.
struct LinkLoad {
  LinkId link = 0;
  std::uint64_t bytes = 0;    ///< payload bytes of every message routed over the link
  std::uint64_t messages = 0; ///< messages routed over it
  /// Time during which at least one message crossing the link was on the wire (the union of
  /// their MessageTiming intervals).
  Seconds busy;
  bool operator==(const LinkLoad&) const = default;
};

struct RunResult {
  Seconds time;                     ///< completion of the last rank
  std::vector<Seconds> rank_finish; ///< completion of each rank's last operation
  std::uint64_t operations = 0;
  std::uint64_t messages = 0;
  std::uint64_t bytes_sent = 0;   ///< sum over all messages
  std::vector<OpTiming> timeline; ///< empty unless requested
  /// In order of the sending operation's id; empty unless RunOptions::messages or link_loads.
  std::vector<MessageTiming> message_timeline;
  /// Links that carried at least one message, by link id; empty unless RunOptions::link_loads (and
  /// always on a full mesh, whose links are implicit).
  std::vector<LinkLoad> link_loads;
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

/// Per-link loads from a run's message timeline: each message is charged to every link of its
/// route (Topology::route_between of the sender's and receiver's devices). Empty on a full mesh.
/// Agents (schedule.header().agents) are looked up by device name.
std::vector<LinkLoad> link_loads(const Schedule& schedule, const Topology& topology,
                                 const std::vector<MessageTiming>& messages);

/// The device of every participant of `schedule` on `topology`: ranks as mapped, then agents by
/// name. Empty on a full mesh. Throws EngineError (prefixed with `engine`) for an agent that is not
/// a reducing device of the topology, or agents on a full mesh.
std::vector<DeviceId> participant_devices(const Schedule& schedule, const Topology& topology,
                                          std::string_view engine);

/// What an engine reports when participant `r` of `schedule` never got past its operation `at`
/// (a global id): "<engine>: rank|agent R stalled at operation lN (the schedule deadlocks; run
/// `collsim verify`)", N the operation's index in the participant's program.
EngineError stalled_error(std::string_view engine, const Schedule& schedule, Rank r, OpId at);
/// What an engine reports when a receive was left without its message.
EngineError unmatched_receive_error(std::string_view engine);

/// "name-of-from -> name-of-to" for messages and tables.
std::string link_label(const Topology& topology, LinkId link);

/// algbw = S / t in bytes per second (S in nccl-tests' convention, the schedule's header bytes).
Bandwidth algorithm_bandwidth(Bytes size, Seconds time);
/// busbw = algbw * nccl-tests' factor for the collective.
Bandwidth bus_bandwidth(CollectiveKind c, std::uint32_t ranks, Bytes size, Seconds time);

} // namespace collsim::core
