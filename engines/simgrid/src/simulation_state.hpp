#pragma once
// The simgrid engine's per-event, per-operation, per-lane and per-rank state and its constants
// (simulation.cpp runs the simulation). Internal to the engine.

#include "collsim/core/engine.hpp"
#include "collsim/core/schedule.hpp"
#include "collsim/core/topology.hpp"
#include "collsim/core/verify.hpp"

#include <algorithm>
#include <cstdint>
#include <simgrid/s4u.hpp>
#include <utility>
#include <vector>

namespace collsim::engines::detail::simgrid_state {

namespace sg4 = simgrid::s4u;
using core::OpId;
using core::OpKind;
using core::Rank;

/// Host speed and cores. The engine runs no executions (its delays, reductions and CPU overheads
/// included, are kernel timers: simulation.cpp's start_exec), but a SimGrid host needs both; as
/// many cores as a host may have activities, so that nothing would share a core if one ran.
constexpr double kSpeed = 1e9;
constexpr int kCores = 1 << 16;
/// The most participants a run takes. Memory no longer limits it (the zone stores only the routes
/// used: s4u_platform.cpp); time does: SimGrid 3.32 keeps every host-to-host comm in one list that
/// each completion searches (sendto_init detaches the comm onto maestro's activities_, and
/// CommImpl::finish removes it by value), so a run costs messages x comms in flight, about
/// participants^2 log participants for recursive doubling: 16384 participants take 2 minutes
/// here (docs/benchmarks.md), 65536 would take most of an hour or more.
constexpr std::uint32_t kMaxParticipants = 16384;
/// SimGrid's platform per participant, for the memory meter (simulation.hpp's memory_estimate):
/// the child of recursive doubling at 16384 participants allocated about 100 MB beyond what it
/// inherits, about 5 KB per participant after its state per operation (docs/benchmarks.md).
constexpr std::uint64_t kPlatformBytesPerParticipant = 6144;
/// Delays shorter than this start the next activity at once (below SimGrid's timing precision).
constexpr double kEpsilon = 1e-12;

enum class Ev : std::uint8_t {
  comm,
  send_delay,
  recv_wait,
  send_done,
  local,
  launch,
  arrive,
  proxy,
  copied
};

struct Event {
  sg4::ActivityPtr activity;
  std::uint32_t subject = 0; // the operation (comm, recv_wait, send_done, local, copied), the group
                             // (send_delay) or nothing (launch)
  Ev kind = Ev::comm;
};

enum : std::uint8_t { kPending = 0, kIssued = 1, kDone = 2 };

struct OpState {
  double start = 0.0; // issue time (a receive's) or the send's start of CPU work
  double end = 0.0;   // completion; for a receive whose message arrived: the data's arrival
  std::uint8_t state = kPending;
  bool arrived = false; // receives: the matching message is in
  bool timer = false;   // sends: a timer will mark it done (send_done_by_now)
  /// Receives of a rate-bound channel's message: the data is not all in before the sender's
  /// thread block has produced it at the stream rate and its last byte has crossed the route.
  double data_due = 0.0;
};

/// Sends held until one instant (Simulation::delay_until).
struct DelayGroup {
  double time = 0.0;
  std::vector<OpId> sends;
};

struct LaneState {
  std::size_t next = 0;
  OpId blocked_on = core::kNoMatch;
};

struct RankState {
  const core::EndpointParams* endpoint = nullptr;
  bool agent = false;
  bool started = false; // after the protocol's launch latency
  bool queued = false;  // in the worklist
  double cpu_free = 0.0;
  double send_free = 0.0;
  double inject_free = 0.0;
  double recv_free = 0.0;  // serial port: when the receive port will have taken in what is coming
  double proxy_free = 0.0; // Protocol::proxy_overhead: when the network proxy is free again
  /// Per issue stream, with a stream rate (Protocol::stream_bandwidth): when the stream's thread
  /// block will have moved its last message's payload.
  std::vector<double> stream_free;
  double finish = 0.0;

  /// A message between nodes is posted by the rank's network proxy, one after another
  /// (Protocol::proxy_overhead, as on loggp): when it can start, ready at `ready`, holding the
  /// proxy for `cost` (0: not through the proxy).
  double take_proxy(double ready, double cost) {
    if (cost <= 0.0) {
      return ready;
    }
    const double at = std::max(ready, proxy_free);
    proxy_free = at + cost;
    return at;
  }

  /// A channel's thread block starts its next message once the flow of its previous one has left
  /// the sender (NCCL's LL and LL128 stores and Simple's copies are the SMs' own, and a
  /// back-pressured link stalls them), as on loggp. `lane`: the stream, or for a channel without
  /// a rate the stream and the peer (WireProtocol::lane). Takes the lane for send `id` if no
  /// flow of it is in progress (true), else queues the send behind it (false).
  bool take_lane(std::uint64_t lane, OpId id) {
    if (std::find(lanes_busy.begin(), lanes_busy.end(), lane) != lanes_busy.end()) {
      lanes_waiting.emplace_back(lane, id);
      return false;
    }
    lanes_busy.push_back(lane);
    return true;
  }
  /// The flow in progress on `lane` has ended: its next queued send (to start, taking the lane
  /// again), or kNoMatch.
  OpId release_lane(std::uint64_t lane) {
    lanes_busy.erase(std::find(lanes_busy.begin(), lanes_busy.end(), lane));
    const auto next = std::find_if(lanes_waiting.begin(), lanes_waiting.end(),
                                   [lane](const auto& w) { return w.first == lane; });
    if (next == lanes_waiting.end()) {
      return core::kNoMatch;
    }
    const OpId id = next->second;
    lanes_waiting.erase(next);
    return id;
  }

  std::vector<std::uint64_t> lanes_busy;                     // lanes with a flow in progress
  std::vector<std::pair<std::uint64_t, OpId>> lanes_waiting; // (lane, send), in issue order
};

using core::rate_time;

/// Throws EngineError if a lane stalled or a receive never completed (the schedule deadlocks).
void check_finished(const core::Schedule& s, const core::Lanes& lanes,
                    const std::vector<LaneState>& lane, const std::vector<OpState>& ops);

/// The run's result from the final state: each rank's finish, the counts, and where asked, every
/// operation's times and every message's (`wire`, by receive: when its flow started and ended).
core::RunResult collect_result(const core::Schedule& s, const core::RunOptions& options,
                               const std::vector<RankState>& ranks, const std::vector<OpState>& ops,
                               const std::vector<OpId>& partner,
                               const std::vector<std::pair<double, double>>& wire,
                               std::uint64_t messages, std::uint64_t bytes);

} // namespace collsim::engines::detail::simgrid_state
