#pragma once
// The SimGrid engine's simulation (simulation.hpp's simulate): one class over SimGrid's activities
// and timers. Its event loop and the ranks' programs are in simulation.cpp, the sending side (a
// message's CPU work, the network proxy, the ports, the flows) in simulation_send.cpp.

#include "platform.hpp"
#include "s4u_platform.hpp"
#include "simulation_state.hpp"
#include "wire_protocol.hpp"

#include "collsim/core/engine.hpp"
#include "collsim/core/scenario.hpp"

#include <cstdint>
#include <map>
#include <simgrid/kernel/Timer.hpp>
#include <simgrid/s4u.hpp>
#include <utility>
#include <vector>

namespace collsim::engines::detail::simgrid_run {

using namespace simgrid_state;

class Simulation {
public:
  Simulation(const core::Schedule& s, const core::Topology& t, const core::RunOptions& opt,
             const core::SimgridSpec& settings);

  core::RunResult run();

private:
  /// With a stream rate, where SimGrid takes latencies as given, the flows run without the
  /// routes' latency, which the engine adds when a flow ends (see stream_busy).
  void build_platform() { hosts_ = build_s4u_platform(plan_, !engine_latency_); }

  // --- activities ---------------------------------------------------------------------------
  std::uint32_t new_event(Ev kind, std::uint32_t subject);
  static void* tag(std::uint32_t index) {
    return reinterpret_cast<void*>(static_cast<std::uintptr_t>(index) + 1); // NOLINT
  }

  /// Waits `seconds`, then handles event `kind` on `subject`: a kernel timer, not an execution on
  /// the rank's host (docs/engines.md, "The program": the same times, 2.6x faster at 8192
  /// participants). `r` is the rank the delay belongs to.
  void start_exec(Rank /*r*/, double seconds, Ev kind, std::uint32_t subject) {
    const std::uint32_t ev = new_event(kind, subject);
    simgrid::kernel::timer::Timer::set(now() + seconds, [this, ev] { handle(ev); });
  }

  /// Holds a send until `time`. Sends due at the same instant share one timer, so that they reach
  /// drain together and pass the receive ports in receive order, as on loggp.
  void delay_until(Rank r, double time, OpId send);

  /// The message is ready to leave the sender. With serial ports the receiver takes in one message
  /// at a time, in the order they reach it (loggp: data in = max(arrival, port free) + m G), so
  /// the flow starts no earlier than the receiver's port will be free; messages are ordered here,
  /// at the time each is ready, which is their arrival order when latencies are equal.
  void leave_port(OpId send);

  void start_comm(OpId send);

  void on_completion(const sg4::Activity& a);

  void handle(std::uint32_t index);

  /// The data of receive `recv` is in.
  void arrive(OpId recv);

  // --- the program ----------------------------------------------------------------------------
  static double now() { return sg4::Engine::get_clock(); }

  void enqueue(Rank r);

  /// Issues what the worklist's ranks can issue, then lets the messages that became ready meanwhile
  /// through their receivers' ports in arrival order, as loggp: by route latency, then receive id.
  void drain();

  void complete(OpId id, double end);

  void issue_rank(Rank r);

  void issue(std::size_t l, Rank r);

  /// With serial ports a send completes at a time known when it starts (the end of its
  /// injection). It is marked done lazily, when an operation waiting for it looks: at once if that
  /// time has passed, else a timer wakes the rank then. Most sends (a ring's, whose buffers are
  /// reused a step later) thus need no event of their own.
  bool send_done_by_now(OpId dep, Rank r);

  void start_op(OpId id, Rank r);

  /// A message between nodes goes to the rank's network proxy, which posts what its channels hand
  /// it at one instant in the order they were posted (NCCL's proxy thread walks its list of active
  /// operations in order: src/proxy.cc, progressOps), not in the order SimGrid reports the events
  /// that made them ready: that order, of timers and flows ending at one date, depends on the
  /// history of its queues and made the proxy's waits vary from loop to loop without a period
  /// (docs/engines.md, "Steady state"). They are collected until just after the instant
  /// (kEpsilon, the engine's resolution) and posted in operation order, each ready at its issue.
  void hand_to_proxy(OpId id, Rank r);

  void post_proxied();

  /// Send `id` of rank r, issued at t: its CPU work, the proxy, the port, then its flow.
  void post_send(OpId id, Rank r, double t);

  /// Whether send `id` of rank r waits for the flow of its channel's previous message (to the
  /// same peer without a rate: WireProtocol::lane), as on loggp (docs/engines.md).
  bool stream_busy(OpId id, Rank r) {
    return proto_.sequential() && !ranks_[r].agent &&
           !ranks_[r].take_lane(proto_.lane(s_.stream(id), s_.peer(id)), id);
  }
  /// The flow of `send` ended: its lane's next waiting message starts.
  void stream_done(OpId send);

  /// How long participant a's core copies its message of m bytes to b before it leaves
  /// (core::sender_copy).
  [[nodiscard]] double copy_first(Rank a, Rank b, std::uint64_t m) const;

  /// The rate of participant r's reductions (core::reduce_rate, as on loggp).
  [[nodiscard]] core::Bandwidth reduce_rate(const core::EndpointParams& ep, Rank r) const {
    return core::reduce_rate(proto_.protocol(), ep.reduce_bandwidth, ranks_[r].agent);
  }

  /// A receive whose message is in and which has been issued: o, then the reduction if any.
  void finish_receive(OpId id);

  void local(OpId id, Rank r, double seconds);

  core::RunResult result() {
    check_finished(s_, lanes_, lane_, ops_);
    return collect_result(s_, opt_, ranks_, ops_, partner_, wire_, messages_, bytes_);
  }

  const core::Schedule& s_;
  const core::RunOptions& opt_;
  bool serial_ = true;
  Plan plan_;
  std::vector<sg4::Host*> hosts_;
  std::vector<OpState> ops_;
  std::vector<OpId> partner_;
  std::vector<OpId> credit_;            // per send with fifo_slots: the receive it waits for
  std::vector<std::uint8_t> is_credit_; // per receive: some send waits for it
  std::vector<RankState> ranks_;
  // Per send, where host agents copy their messages (Protocol::agents_copy); empty otherwise.
  static constexpr std::uint8_t kNotCopied = 0;
  static constexpr std::uint8_t kCopying = 1;
  static constexpr std::uint8_t kCopyDone = 2;
  std::vector<std::uint8_t> copied_;
  core::Lanes lanes_;
  std::vector<LaneState> lane_;
  std::vector<Event> events_;
  std::vector<std::uint32_t> free_;
  std::vector<sg4::ActivityPtr> graveyard_;
  std::vector<Rank> work_;
  std::vector<OpId> ready_;         // sends ready to leave their rank, waiting for drain
  std::vector<OpId> proxy_pending_; // sends handed to their proxies at this instant
  bool proxy_armed_ = false;        // a timer posts them just after it
  std::vector<DelayGroup> delay_groups_;
  std::vector<std::uint32_t> free_groups_;
  std::map<double, std::uint32_t> delay_at_; // pending groups by due time
  std::vector<std::pair<double, double>> wire_;
  std::uint64_t messages_ = 0;
  std::uint64_t bytes_ = 0;
  WireProtocol proto_;
  /// Flows run without their routes' latency, added when a flow ends (stream_busy).
  bool engine_latency_ = false;
};

} // namespace collsim::engines::detail::simgrid_run
