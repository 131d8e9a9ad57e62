#include "simulation.hpp"

#include "platform.hpp"
#include "s4u_platform.hpp"
#include "simulation_state.hpp"
#include "wire_protocol.hpp"

#include "collsim/core/errors.hpp"
#include "collsim/core/verify.hpp"
#include "collsim/engines/simgrid.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fmt/format.h>
#include <map>
#include <simgrid/kernel/Timer.hpp>
#include <simgrid/s4u.hpp>
#include <string>
#include <vector>

namespace collsim::engines::detail {
namespace {

using namespace simgrid_state;

class Simulation {
public:
  Simulation(const core::Schedule& s, const core::Topology& t, const core::RunOptions& opt,
             const core::SimgridSpec& settings)
      : s_(s), opt_(opt),
        // NCCL's channels drive their links concurrently (core::Protocol::port_per_link): their
        // flows share the links by max-min, as the shared port does.
        serial_(settings.send_port != "shared" && !s.header().protocol.port_per_link),
        plan_(t, core::participant_devices(s, t, "simgrid"), s.participants()), ops_(s.op_count()),
        partner_(s.op_count(), core::kNoMatch), ranks_(s.participants()), lanes_(s),
        lane_(lanes_.count()), proto_(s.header().protocol, node_keys(s, t)),
        engine_latency_(proto_.sequential() && latency_as_given(settings)) {
    core::match_messages(s, [this](OpId send, OpId recv) { partner_[send] = recv; });
    if (proto_.protocol().fifo_slots > 0) {
      // NCCL's FIFO of NCCL_STEPS slots per connection, as on the loggp engine.
      credit_.assign(s.op_count(), core::kNoMatch);
      is_credit_.assign(s.op_count(), 0);
      core::fifo_credits(
          s, proto_.protocol().fifo_slots, [this](OpId send) { return partner_[send]; },
          [this](OpId send, OpId recv) {
            credit_[send] = recv;
            is_credit_[recv] = 1;
          });
    }
    for (std::size_t l = 0; l < lanes_.count(); ++l) {
      lane_[l].next = lanes_.begin(l);
    }
    if ((proto_.protocol().agents_copy && !s.header().agents.empty()) ||
        proto_.protocol().core_copy_bandwidth.bytes_per_second > 0.0) {
      copied_.assign(s.op_count(), kNotCopied);
    }
    for (Rank r = 0; r < s.participants(); ++r) {
      if (r < s.ranks()) {
        ranks_[r].endpoint = &t.endpoint(r);
      } else {
        ranks_[r].endpoint =
            &t.devices()[*t.find_device(s.header().agents[r - s.ranks()])].endpoint;
        ranks_[r].agent = true;
      }
    }
    // The routes of every pair that exchanges messages, then the platform.
    for (Rank r = 0; r < s.participants(); ++r) {
      for (OpId id = s.rank_begin(r); id < s.rank_end(r); ++id) {
        if (s.kind(id) == OpKind::send) {
          (void)plan_.route(r, s.peer(id));
        }
      }
    }
    build_platform();
    if (opt.messages || opt.link_loads) {
      wire_.assign(s.op_count(), {0.0, 0.0});
    }
  }

  core::RunResult run() {
    sg4::Activity::on_completion_cb([this](const sg4::Activity& a) { on_completion(a); });
    // Ranks start after the protocol's launch latency, agents at once. One timer starts every
    // rank, so that their first messages meet the receive ports in one batch (see drain).
    const bool launch = proto_.protocol().launch.value > kEpsilon && s_.ranks() > 0;
    if (launch) {
      start_exec(0, proto_.protocol().launch.value, Ev::launch, 0);
    }
    for (Rank r = launch ? s_.ranks() : 0; r < s_.participants(); ++r) {
      ranks_[r].started = true;
      enqueue(r);
    }
    drain();
    sg4::Engine::get_instance()->run();
    graveyard_.clear();
    return result();
  }

private:
  /// With a stream rate, where SimGrid takes latencies as given, the flows run without the
  /// routes' latency, which the engine adds when a flow ends (see stream_busy).
  void build_platform() { hosts_ = build_s4u_platform(plan_, !engine_latency_); }

  // --- activities ---------------------------------------------------------------------------
  std::uint32_t new_event(Ev kind, std::uint32_t subject) {
    std::uint32_t index = 0;
    if (!free_.empty()) {
      index = free_.back();
      free_.pop_back();
    } else {
      index = static_cast<std::uint32_t>(events_.size());
      events_.emplace_back();
    }
    events_[index].kind = kind;
    events_[index].subject = subject;
    return index;
  }
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
  void delay_until(Rank r, double time, OpId send) {
    const auto it = delay_at_.find(time);
    if (it != delay_at_.end()) {
      delay_groups_[it->second].sends.push_back(send);
      return;
    }
    std::uint32_t g = 0;
    if (!free_groups_.empty()) {
      g = free_groups_.back();
      free_groups_.pop_back();
    } else {
      g = static_cast<std::uint32_t>(delay_groups_.size());
      delay_groups_.emplace_back();
    }
    delay_groups_[g].time = time;
    delay_groups_[g].sends.push_back(send);
    delay_at_.emplace(time, g);
    start_exec(r, time - now(), Ev::send_delay, g);
  }

  /// The message is ready to leave the sender. With serial ports the receiver takes in one message
  /// at a time, in the order they reach it (loggp: data in = max(arrival, port free) + m G), so
  /// the flow starts no earlier than the receiver's port will be free; messages are ordered here,
  /// at the time each is ready, which is their arrival order when latencies are equal.
  void leave_port(OpId send) {
    const Rank from = s_.rank_of(send);
    const Rank to = s_.peer(send);
    RankState& rs = ranks_[to];
    if (serial_ && !rs.agent) {
      const PlanRoute& route = plan_.route(from, to);
      const double duration =
          static_cast<double>(proto_.wire_bytes(s_.length(send), from, to)) / route.bottleneck;
      const double begin = std::max(now(), rs.recv_free - route.latency);
      rs.recv_free = begin + route.latency + duration;
      if (begin - now() > kEpsilon) {
        start_exec(from, begin - now(), Ev::recv_wait, send);
        return;
      }
    }
    start_comm(send);
  }

  void start_comm(OpId send) {
    const Rank from = s_.rank_of(send);
    const Rank to = s_.peer(send);
    const std::uint32_t ev = new_event(Ev::comm, send);
    sg4::CommPtr c = sg4::Comm::sendto_init();
    c->set_source(hosts_[from]);
    c->set_destination(hosts_[to]);
    c->set_payload_size(proto_.wire_bytes(s_.length(send), from, to));
    c->set_data(tag(ev));
    events_[ev].activity = c;
    if (!wire_.empty()) {
      wire_[partner_[send]].first = now();
    }
    ++messages_;
    bytes_ += s_.length(send);
    c->start();
  }

  void on_completion(const sg4::Activity& a) {
    graveyard_.clear(); // activities of earlier callbacks: SimGrid is done with them
    const auto index =
        static_cast<std::uint32_t>(reinterpret_cast<std::uintptr_t>(a.get_data<void>()) - 1);
    if (index >= events_.size()) {
      return; // not ours
    }
    if (a.get_state() != sg4::Activity::State::FINISHED) {
      throw core::EngineError(
          fmt::format("simgrid: an activity ended in state {}", a.get_state_str()));
    }
    graveyard_.push_back(std::move(events_[index].activity));
    handle(index);
  }

  void handle(std::uint32_t index) {
    const Event ev = events_[index];
    free_.push_back(index);
    switch (ev.kind) {
    case Ev::launch:
      for (Rank r = 0; r < s_.ranks(); ++r) {
        ranks_[r].started = true;
        enqueue(r);
      }
      break;
    case Ev::send_delay: {
      DelayGroup& g = delay_groups_[ev.subject];
      delay_at_.erase(g.time);
      ready_.insert(ready_.end(), g.sends.begin(), g.sends.end());
      g.sends.clear();
      free_groups_.push_back(ev.subject);
      break;
    }
    case Ev::recv_wait: start_comm(ev.subject); break;
    case Ev::send_done:
      if (ops_[ev.subject].state != kDone) {
        complete(ev.subject, now());
      }
      break;
    case Ev::local: complete(ev.subject, now()); break;
    case Ev::comm: {
      const OpId send = ev.subject;
      const OpId recv = partner_[send];
      if (!wire_.empty()) {
        wire_[recv].second = now();
      }
      if (!serial_) {
        const double due = ops_[send].end; // the stream's thread block may still be on it
        if (due - now() > kEpsilon) {
          start_exec(s_.rank_of(send), due - now(), Ev::send_done, send);
        } else {
          complete(send, now());
        }
      } else if (ops_[send].state != kDone) {
        complete(send, ops_[send].end); // its injection ended before the data was in
      }
      double due = ops_[recv].data_due;
      if (engine_latency_) { // the flow ran without latency: its last byte is in a latency later
        const Rank from = s_.rank_of(send);
        const Rank to = s_.peer(send);
        const PlanRoute& route = plan_.route(from, to);
        due = std::max(due, now() + route.latency + proto_.extra_latency(route, from, to));
      }
      if (proto_.sequential()) {
        stream_done(send);
      }
      if (due - now() > kEpsilon) {
        start_exec(s_.peer(send), due - now(), Ev::arrive, recv);
      } else {
        arrive(recv);
      }
      break;
    }
    case Ev::arrive: arrive(ev.subject); break;
    case Ev::proxy: post_proxied(); break;
    case Ev::copied:
      copied_[ev.subject] = kCopyDone;
      enqueue(s_.rank_of(ev.subject));
      break;
    }
    drain();
  }

  /// The data of receive `recv` is in.
  void arrive(OpId recv) {
    ops_[recv].arrived = true;
    ops_[recv].end = now();
    if (ops_[recv].state == kIssued) {
      finish_receive(recv);
    }
  }

  // --- the program ----------------------------------------------------------------------------
  static double now() { return sg4::Engine::get_clock(); }

  void enqueue(Rank r) {
    if (!ranks_[r].queued && ranks_[r].started) {
      ranks_[r].queued = true;
      work_.push_back(r);
    }
  }

  /// Issues what the worklist's ranks can issue, then lets the messages that became ready meanwhile
  /// through their receivers' ports in arrival order, as loggp: by route latency, then receive id.
  void drain() {
    while (!work_.empty() || !ready_.empty()) {
      while (!work_.empty()) {
        const Rank r = work_.back();
        work_.pop_back();
        ranks_[r].queued = false;
        issue_rank(r);
      }
      std::vector<OpId> batch;
      batch.swap(ready_);
      std::sort(batch.begin(), batch.end(), [this](OpId a, OpId b) {
        const double la = plan_.route(s_.rank_of(a), s_.peer(a)).latency;
        const double lb = plan_.route(s_.rank_of(b), s_.peer(b)).latency;
        return la != lb ? la < lb : partner_[a] < partner_[b];
      });
      for (const OpId send : batch) {
        leave_port(send);
      }
    }
  }

  void complete(OpId id, double end) {
    OpState& st = ops_[id];
    st.state = kDone;
    st.end = end;
    const Rank r = s_.rank_of(id);
    ranks_[r].finish = std::max(ranks_[r].finish, end);
    enqueue(r);
    if (!is_credit_.empty() && is_credit_[id] != 0) {
      enqueue(s_.peer(id)); // a receive's peer is the sender waiting for this FIFO slot
    }
  }

  void issue_rank(Rank r) {
    const std::size_t first = lanes_.first_lane(r);
    const std::size_t last = lanes_.first_lane(r + 1);
    bool moved = true;
    while (moved) {
      moved = false;
      for (std::size_t l = first; l < last; ++l) {
        const std::size_t before = lane_[l].next;
        issue(l, r);
        moved = moved || lane_[l].next != before;
      }
    }
  }

  void issue(std::size_t l, Rank r) {
    LaneState& ls = lane_[l];
    const OpId base = s_.rank_begin(r);
    const std::size_t end = lanes_.end(l);
    while (ls.next < end) {
      const OpId id = lanes_.op_at(ls.next);
      for (std::uint32_t d : s_.deps(id)) {
        if (ops_[base + d].state != kDone && !send_done_by_now(base + d, r)) {
          ls.blocked_on = base + d;
          return;
        }
      }
      if (!credit_.empty() && credit_[id] != core::kNoMatch && ops_[credit_[id]].state != kDone) {
        // The receiver has not consumed the message `fifo_slots` earlier: no FIFO slot is free
        // (complete() wakes this rank when it has).
        ls.blocked_on = credit_[id];
        return;
      }
      if (!copied_.empty() && copied_[id] != kCopyDone && s_.kind(id) == OpKind::send) {
        // Its core copies it into shared memory first (Protocol::agents_copy,
        // core_copy_bandwidth): the lane waits.
        const double t = copy_first(r, s_.peer(id), s_.length(id));
        if (copied_[id] == kCopying || t > kEpsilon) {
          ls.blocked_on = id;
          if (copied_[id] == kNotCopied) {
            copied_[id] = kCopying;
            start_exec(r, t, Ev::copied, id);
          }
          return;
        }
      }
      ls.blocked_on = core::kNoMatch;
      ++ls.next;
      start_op(id, r);
    }
  }

  /// With serial ports a send completes at a time known when it starts (the end of its
  /// injection). It is marked done lazily, when an operation waiting for it looks: at once if that
  /// time has passed, else a timer wakes the rank then. Most sends (a ring's, whose buffers are
  /// reused a step later) thus need no event of their own.
  bool send_done_by_now(OpId dep, Rank r) {
    OpState& st = ops_[dep];
    if (!serial_ || st.state != kIssued || s_.kind(dep) != OpKind::send) {
      return false;
    }
    if (st.end - now() <= kEpsilon) {
      complete(dep, st.end);
      return true;
    }
    if (!st.timer) {
      st.timer = true;
      start_exec(r, st.end - now(), Ev::send_done, dep);
    }
    return false;
  }

  void start_op(OpId id, Rank r) {
    RankState& rs = ranks_[r];
    const core::EndpointParams& ep = *rs.endpoint;
    const double t = now();
    OpState& st = ops_[id];
    st.state = kIssued;
    st.start = t;
    const std::uint64_t m = s_.length(id);
    switch (s_.kind(id)) {
    case OpKind::send:
      if (stream_busy(id, r)) {
        return; // its thread block is still on the previous message: started when that ends
      }
      if (!rs.agent && proto_.proxy_time(r, s_.peer(id)) > 0.0) {
        hand_to_proxy(id, r);
      } else {
        post_send(id, r, t);
      }
      break;
    case OpKind::recv:
    case OpKind::recv_reduce:
      if (st.arrived) {
        finish_receive(id);
      }
      break;
    case OpKind::reduce: local(id, r, rate_time(m, reduce_rate(ep, r))); break;
    case OpKind::copy: local(id, r, rate_time(m, ep.copy_bandwidth)); break;
    case OpKind::calc: local(id, r, s_.calc_time(id).value); break;
    }
  }

  /// A message between nodes goes to the rank's network proxy, which posts what its channels hand
  /// it at one instant in the order they were posted (NCCL's proxy thread walks its list of active
  /// operations in order: src/proxy.cc, progressOps), not in the order SimGrid reports the events
  /// that made them ready: that order, of timers and flows ending at one date, depends on the
  /// history of its queues and made the proxy's waits vary from loop to loop without a period
  /// (docs/engines.md, "Steady state"). They are collected until just after the instant
  /// (kEpsilon, the engine's resolution) and posted in operation order, each ready at its issue.
  void hand_to_proxy(OpId id, Rank r) {
    proxy_pending_.push_back(id);
    if (!proxy_armed_) {
      proxy_armed_ = true;
      start_exec(r, kEpsilon, Ev::proxy, 0);
    }
  }

  void post_proxied() {
    proxy_armed_ = false;
    std::vector<OpId> batch;
    batch.swap(proxy_pending_);
    std::sort(batch.begin(), batch.end());
    for (const OpId id : batch) {
      post_send(id, s_.rank_of(id), ops_[id].start);
    }
  }

  /// Send `id` of rank r, issued at t: its CPU work, the proxy, the port, then its flow.
  void post_send(OpId id, Rank r, double t) {
    RankState& rs = ranks_[r];
    const core::EndpointParams& ep = *rs.endpoint;
    OpState& st = ops_[id];
    const std::uint64_t m = s_.length(id);
    {
      const Rank peer = s_.peer(id);
      const PlanRoute& route = plan_.route(r, peer);
      const double o = proto_.overhead(ep, r, peer);
      double start = t;
      // With a stream rate (the loggp engine's rules): each channel's thread block pays its own
      // o and moves one message after another, each for its payload at the stream rate; the
      // next message of the stream waits for that, other streams do not. The flow itself runs
      // at what the links give it: SimGrid 3.32 ignores a host-to-host comm's rate
      // (s4u_Comm.cpp: Comm::start() never hands rate_ to the kernel's CommImpl).
      double* stream_free = nullptr;
      if (!rs.agent && proto_.rated()) {
        if (rs.stream_free.empty()) {
          rs.stream_free.assign(core::Schedule::kMaxStreams, 0.0);
        }
        stream_free = &rs.stream_free[s_.stream(id)];
        start = std::max(start, *stream_free - o);
      }
      start = rs.take_proxy(start, rs.agent ? 0.0 : proto_.proxy_time(r, peer));
      const bool own_cpu = rs.agent || stream_free != nullptr;
      if (!own_cpu) {
        start = std::max(start, rs.cpu_free);
      }
      if (serial_ && !rs.agent) {
        start = std::max({start, rs.send_free, rs.inject_free - o});
      }
      const double inject = rs.agent ? start : start + o;
      if (!own_cpu) {
        rs.cpu_free = inject;
      }
      if (!rs.agent) {
        rs.send_free = start + ep.gap.value;
      }
      if (serial_ && !rs.agent) {
        rs.inject_free =
            inject + static_cast<double>(proto_.wire_bytes(m, r, peer)) / route.bottleneck;
      }
      st.start = start;
      st.end = 0.0;
      if (serial_) {
        // The send completes when its bytes would have left an idle port, as on loggp (its buffer
        // may be reused then), whenever the flow itself starts (see send_done_by_now).
        st.end = inject + static_cast<double>(proto_.wire_bytes(m, r, peer)) / route.bottleneck;
      }
      if (stream_free != nullptr) {
        // ... and not before its thread block has moved it (on_completion waits for that).
        *stream_free = inject + rate_time(m, proto_.protocol().stream_bandwidth);
        st.end = std::max(st.end, *stream_free);
        // Its receiver has the last byte no earlier than one route latency later (as on loggp,
        // whose arrival waits for the stream rate too).
        ops_[partner_[id]].data_due =
            *stream_free + route.latency + proto_.extra_latency(route, r, peer);
      }
      // Where the engine adds latencies, a message's comes after its flow (engine_latency_).
      double begin = inject + (engine_latency_ ? 0.0 : proto_.extra_latency(route, r, peer));
      // The rendezvous handshakes (core::rendezvous_handshakes): the request and the reply, each
      // a message's latency, before the data flow starts (as on the loggp engine).
      begin += 2.0 *
               static_cast<double>(
                   core::rendezvous_handshakes(proto_.protocol(), m, proto_.same_node(r, peer))) *
               (route.latency + proto_.extra_latency(route, r, peer));
      if (begin - now() > kEpsilon) {
        delay_until(r, begin, id);
      } else {
        ready_.push_back(id);
      }
    }
  }

  /// Whether send `id` of rank r waits for the flow of its channel's previous message (to the
  /// same peer without a rate: WireProtocol::lane), as on loggp (docs/engines.md).
  bool stream_busy(OpId id, Rank r) {
    return proto_.sequential() && !ranks_[r].agent &&
           !ranks_[r].take_lane(proto_.lane(s_.stream(id), s_.peer(id)), id);
  }
  /// The flow of `send` ended: its lane's next waiting message starts.
  void stream_done(OpId send) {
    const Rank r = s_.rank_of(send);
    const std::uint64_t lane = proto_.lane(s_.stream(send), s_.peer(send));
    if (!ranks_[r].agent) {
      if (const OpId next = ranks_[r].release_lane(lane); next != core::kNoMatch) {
        start_op(next, r);
      }
    }
  }

  /// How long participant a's core copies its message of m bytes to b before it leaves: a host
  /// agent's to another agent of its node at its endpoint's copy rate (Protocol::agents_copy), an
  /// MPI rank's to another rank of its node at one core's rate (Protocol::core_copy_bandwidth,
  /// its wire bytes) unless the readers copy (intra_node_overhead set); else 0 (as on loggp).
  [[nodiscard]] double copy_first(Rank a, Rank b, std::uint64_t m) const {
    const core::Protocol& p = proto_.protocol();
    if ((!p.agents_copy && p.core_copy_bandwidth.bytes_per_second <= 0.0) ||
        !proto_.same_node(a, b) || ranks_[a].agent != ranks_[b].agent) {
      return 0.0;
    }
    if (ranks_[a].agent) {
      return p.agents_copy ? rate_time(m, ranks_[a].endpoint->copy_bandwidth) : 0.0;
    }
    if (p.core_copy_bandwidth.bytes_per_second <= 0.0 || p.intra_node_overhead.value >= 0.0) {
      return 0.0;
    }
    return rate_time(proto_.wire_bytes(m, a, b), p.core_copy_bandwidth);
  }

  /// The rate of participant r's reductions: its endpoint's, no more than one core's for an MPI
  /// rank (Protocol::core_reduce_bandwidth), as on loggp.
  [[nodiscard]] core::Bandwidth reduce_rate(const core::EndpointParams& ep, Rank r) const {
    const double core = proto_.protocol().core_reduce_bandwidth.bytes_per_second;
    const double own = ep.reduce_bandwidth.bytes_per_second;
    if (core <= 0.0 || ranks_[r].agent) {
      return ep.reduce_bandwidth;
    }
    return core::Bandwidth{own > 0.0 ? std::min(own, core) : core};
  }

  /// A receive whose message is in and which has been issued: o, then the reduction if any.
  void finish_receive(OpId id) {
    const Rank r = s_.rank_of(id);
    const core::EndpointParams& ep = *ranks_[r].endpoint;
    double d = proto_.overhead(ep, r, s_.peer(id));
    if (s_.kind(id) == OpKind::recv_reduce) {
      d += rate_time(s_.length(id), reduce_rate(ep, r));
    }
    local(id, r, d);
  }

  void local(OpId id, Rank r, double seconds) {
    if (seconds > kEpsilon) {
      start_exec(r, seconds, Ev::local, id);
    } else {
      complete(id, now());
    }
  }

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

} // namespace

core::RunResult simulate(const core::Schedule& schedule, const core::Topology& topology,
                         const core::RunOptions& options, const core::SimgridSpec& settings) {
  precheck(schedule, topology);
  std::vector<std::string> args = {"collsim", "--log=root.thresh:error"};
  for (const std::string& c : simgrid_config(settings)) {
    args.push_back("--cfg=" + c);
  }
  std::vector<char*> argv;
  for (std::string& a : args) {
    argv.push_back(a.data());
  }
  int argc = static_cast<int>(argv.size());
  argv.push_back(nullptr);
  sg4::Engine engine(&argc, argv.data());
  Simulation sim(schedule, topology, options, settings);
  return sim.run();
}

} // namespace collsim::engines::detail
