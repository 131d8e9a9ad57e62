#include "collsim/engines/loggp.hpp"
#include "loggp_state.hpp"
#include "middle_links.hpp"

#include "collsim/core/errors.hpp"
#include "collsim/core/verify.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <utility>

namespace collsim::engines {
namespace {

using namespace loggp_detail;

class Simulation {
public:
  Simulation(const core::Schedule& s, const core::Topology& t, const core::RunOptions& opt)
      : lease_(charge(s, opt)), s_(s), t_(t), opt_(opt), routes_(t, devices(s, t)),
        ops_(s.op_count()), ranks_(s.participants()), lanes_(s), lane_(lanes_.count()),
        protocol_(s.header().protocol), plain_(s.header().protocol == core::Protocol{}),
        per_link_(s.header().protocol.port_per_link),
        capped_(s.header().protocol.stream_bandwidth.bytes_per_second > 0.0) {
    static_assert(core::Schedule::kMaxOps - 1 <= OpState::kPartnerMask);
    const std::size_t unmatched =
        core::match_messages(s, [this](OpId send, OpId recv) { ops_[send].link = recv; });
    if (unmatched != 0) {
      throw core::EngineError("loggp: the schedule has unmatched messages (run `collsim verify`)");
    }
    if (t.rank_count() < full_ranks()) {
      throw core::EngineError(
          fmt::format("loggp: the schedule has {} ranks but the topology only {}", full_ranks(),
                      t.rank_count()));
    }
    if (s.header().collapse.active() &&
        (opt.timeline || opt.messages || opt.link_loads || !s.header().agents.empty())) {
      throw core::InternalError("loggp: a collapsed schedule has no per-rank timeline");
    }
    for (std::size_t l = 0; l < lanes_.count(); ++l) {
      lane_[l].next = lanes_.begin(l);
      // Ranks start after a kernel launch (the protocol's base latency); agents at once.
      lane_[l].last_issue = lanes_.rank(l) < s.ranks() ? protocol_.launch.value : 0.0;
    }
    for (Rank r = 0; r < s.ranks(); ++r) {
      ranks_[r].endpoint = &t.endpoint(r);
    }
    for (Rank r = s.ranks(); r < s.participants(); ++r) {
      ranks_[r].endpoint = &t.devices()[*t.find_device(s.header().agents[r - s.ranks()])].endpoint;
      ranks_[r].agent = true;
    }
    if (protocol_.fifo_slots > 0) {
      set_credits(protocol_.fifo_slots);
    }
    if (per_link_) {
      middle_ = MiddleLinks(s, t, routes_.devices());
    }
    if (opt.timeline) {
      start_.assign(s.op_count(), 0.0);
    }
    if (opt.messages || opt.link_loads) {
      wire_.assign(s.op_count(), {0.0, 0.0});
    }
  }

  core::RunResult run() {
    for (Rank r = 0; r < s_.participants(); ++r) {
      issue_rank(r);
    }
    wake_senders();
    while (!queue_.empty()) {
      const Arrival a = queue_.pop();
      now_ = a.time();
      if ((a.rank & kSendEvent) != 0) {
        const Rank r = a.rank & ~kSendEvent;
        if (const double at = stream_start(a.recv, r, a.time()); at > a.time()) {
          queue_.push(Arrival{at, a.recv, a.rank}); // its stream is still moving the previous one
          continue;
        }
        send(a.recv, r, a.time());
        issue_rank(r); // what waited for the send
      } else {
        arrive(a);
      }
      wake_senders();
    }
    core::RunResult res;
    res.rank_finish.resize(full_ranks());
    double end = 0.0;
    for (std::size_t l = 0; l < lanes_.count(); ++l) {
      if (lane_[l].next != lanes_.end(l) || lane_[l].blocked_on != core::kNoMatch) {
        throw core::stalled_error("loggp", s_, lanes_.rank(l), lanes_.op_at(lane_[l].next));
      }
    }
    for (Rank r = 0; r < s_.participants(); ++r) {
      end = std::max(end, ranks_[r].finish);
    }
    // A collapsed schedule's rank x finishes when its representative x mod k does (collapse.hpp).
    for (Rank x = 0; x < full_ranks(); ++x) {
      res.rank_finish[x] = core::Seconds{ranks_[x % s_.ranks()].finish};
    }
    for (const OpState& st : ops_) {
      if (st.state() != kDone) {
        throw core::unmatched_receive_error("loggp");
      }
    }
    res.time = core::Seconds{end};
    const std::uint64_t classes = full_ranks() / s_.ranks(); // 1 unless collapsed
    res.operations = s_.op_count() * classes;
    res.messages = messages_ * classes;
    res.bytes_sent = bytes_ * classes;
    if (opt_.timeline) {
      res.timeline.reserve(s_.op_count());
      for (OpId id = 0; id < s_.op_count(); ++id) {
        res.timeline.push_back({id, core::Seconds{start_[id]}, core::Seconds{ops_[id].time}});
      }
    }
    if (!wire_.empty()) {
      res.message_timeline.reserve(messages_);
      for (OpId id = 0; id < s_.op_count(); ++id) {
        if (s_.kind(id) == OpKind::send) {
          const auto& w = wire_[ops_[id].partner()];
          res.message_timeline.push_back({id, core::Seconds{w.first}, core::Seconds{w.second}});
        }
      }
      if (opt_.link_loads) {
        res.link_loads = core::link_loads(s_, t_, res.message_timeline);
      }
    }
    return res;
  }

private:
  /// Flow control (core::Protocol::fifo_slots): each send's credit, the receive of the send
  /// `slots` earlier on its connection (sender, receiver, the sender's stream), in program order.
  void set_credits(std::uint32_t slots) {
    credit_.assign(s_.op_count(), core::kNoMatch);
    is_credit_.assign(s_.op_count(), 0);
    core::fifo_credits(
        s_, slots, [this](OpId send) { return ops_[send].partner(); },
        [this](OpId send, OpId recv) {
          credit_[send] = recv;
          is_credit_[recv] = 1;
        });
  }

  /// Lets the senders whose credit a receive just returned issue again.
  void wake_senders() {
    while (!wake_.empty()) {
      const Rank r = wake_.back();
      wake_.pop_back();
      issue_rank(r);
    }
  }

  void done(OpId id, Rank r, double start, double end) {
    if (!is_credit_.empty() && is_credit_[id] != 0) {
      wake_.push_back(s_.peer(id)); // a receive's peer is the sender
    }
    ops_[id].set_state(kDone);
    ops_[id].time = end;
    if (opt_.timeline) {
      start_[id] = start;
    }
    RankState& rs = ranks_[r];
    rs.finish = std::max(rs.finish, end);
  }

  /// Issues what every lane of participant r can issue; a lane's progress may unblock another
  /// lane of the rank (a dependency across streams), so repeat until none moves.
  void issue_rank(Rank r) {
    const std::size_t first = lanes_.first_lane(r);
    const std::size_t last = lanes_.first_lane(r + 1);
    if (last - first == 1) {
      issue(first); // one stream: the common case
      return;
    }
    bool moved = true;
    while (moved) {
      moved = false;
      for (std::size_t l = first; l < last; ++l) {
        const std::size_t before = lane_[l].next;
        const OpId waited = lane_[l].blocked_on;
        if (waited != core::kNoMatch && ops_[waited].state() != kDone) {
          continue;
        }
        issue(l);
        moved = moved || lane_[l].next != before;
      }
    }
  }

  /// Issues lane l's operations in order until one waits for a dependency.
  void issue(std::size_t l) {
    LaneState& ls = lane_[l];
    const Rank r = lanes_.rank(l);
    RankState& rs = ranks_[r];
    const OpId base = s_.rank_begin(r);
    const std::size_t end = lanes_.end(l);
    const core::EndpointParams& ep = *rs.endpoint;
    while (ls.next < end) {
      const OpId id = lanes_.op_at(ls.next);
      double ready = ls.last_issue;
      for (std::uint32_t d : s_.deps(id)) {
        const OpId dep = base + d;
        if (ops_[dep].state() != kDone) {
          ls.blocked_on = dep;
          return;
        }
        const double dep_end = ops_[dep].time; // a copy: the packed field may be misaligned
        ready = std::max(ready, dep_end);
      }
      if (!credit_.empty() && credit_[id] != core::kNoMatch) {
        // The receiver has not consumed the message `fifo_slots` earlier: no FIFO slot is free.
        const OpId credit = credit_[id];
        if (ops_[credit].state() != kDone) {
          ls.blocked_on = credit;
          return;
        }
        ready = std::max(ready, static_cast<double>(ops_[credit].time));
      }
      ls.blocked_on = core::kNoMatch;
      ++ls.next;
      const OpKind k = s_.kind(id);
      const std::uint64_t m = s_.length(id);
      if (k == OpKind::send) {
        ready += copy_first(r, s_.peer(id), m); // its core copies it into shared memory first
      }
      ls.last_issue = ready;
      switch (k) {
      case OpKind::send:
        if (multi_lane(r)) {
          // A port takes the messages of a rank's streams in the order they become ready (see
          // kSendEvent), not in the order this loop reaches them.
          queue_.push(Arrival{ready, id, r | kSendEvent});
        } else {
          send(id, r, ready);
        }
        break;
      case OpKind::recv:
      case OpKind::recv_reduce:
        if (ops_[id].state() == kArrived) {
          complete_receive(id, r, ready, ops_[id].time);
        } else {
          ops_[id].set_state(kWaiting);
          ops_[id].time = ready;
        }
        break;
      case OpKind::reduce: done(id, r, ready, ready + rate_time(m, reduce_rate(ep, r))); break;
      case OpKind::copy: done(id, r, ready, ready + rate_time(m, ep.copy_bandwidth)); break;
      case OpKind::calc: done(id, r, ready, ready + s_.calc_time(id).value); break;
      }
    }
  }

  /// Sends `id` of participant r, ready at `ready`: LogGP's o, g and G on its port, then the
  /// arrival at the receiver.
  void send(OpId id, Rank r, double ready) {
    RankState& rs = ranks_[r];
    const core::EndpointParams& ep = *rs.endpoint;
    const std::uint64_t m = s_.length(id);
    const Rank peer = s_.route_peer(id); // whose route it takes (collapse.hpp)
    const core::RouteCost& rc = routes_.get(r, peer);
    PortState& ps = per_link_ ? rs.port_for(routes_.end_links(r, peer).first) : rs.port;
    double* stream_free = nullptr;
    if (capped_ && !rs.agent) {
      if (rs.stream_free.empty()) {
        rs.stream_free.assign(core::Schedule::kMaxStreams, 0.0);
      }
      stream_free = &rs.stream_free[s_.stream(id)];
    }
    const double o = overhead(ep, r, peer);
    if (protocol_.proxy_overhead.value > 0.0 && !rs.agent && !routes_.same_node(r, peer)) {
      // The rank's network proxy posts its messages between nodes one after another
      // (Protocol::proxy_overhead), each when its channel's block starts it.
      if (stream_free != nullptr) {
        ready = std::max(ready, *stream_free - o);
      }
      ready = std::max(ready, rs.proxy_free);
      rs.proxy_free = ready + protocol_.proxy_overhead.value;
    }
    // Over a shared-memory flag protocol (intra_node_overhead set) the reader copies: the
    // sender publishes its buffer and raises a flag, the receiver's port moves the data
    // (arrive()), so a rank read by many peers is not serialised by their copies.
    const double duration =
        reader_copies(r, peer) ? 0.0 : rate_time(wire_bytes(m, r, peer), rc.bottleneck);
    double start = 0.0;
    double finish = 0.0;
    double stream_end = 0.0; // rate-bound: when its block has moved the payload
    if (stream_free == nullptr) {
      start = rs.agent ? ready : std::max({ready, ps.cpu_free, ps.send_free, ps.inject_free - o});
      ps.inject_free = start + o + duration;
      ps.cpu_free = start + o;
      ps.send_free = start + ep.gap.value;
      finish = start + o + duration;
    } else {
      // A channel's thread block moves its payload at most at the stream rate, one message
      // after another, paying its own o (each channel's block issues its own messages). The
      // link carries the messages of all channels: each takes its wire time somewhere on the
      // link while its block moves it, at the first free stretch from its start (PortCalendar),
      // so a rate-bound channel leaves room for the others as the link does.
      start = std::max(ready, *stream_free - o);
      const double on_link = ps.calendar.reserve(start + o, duration, ready);
      stream_end = start + o + rate_time(m, protocol_.stream_bandwidth);
      finish = std::max(stream_end, on_link);
      *stream_free = finish;
    }
    double inject = start + o;
    if (!middle_.empty() && duration > 0.0) {
      // A link in the middle of the route that other ports send over (middle_links.hpp): the
      // data flows once it has its stretch there, and the send ends no earlier than that.
      const double through = middle_.book(r, peer, wire_bytes(m, r, peer), inject, now_);
      finish = std::max(finish, through);
      if (stream_free == nullptr) {
        inject = std::max(inject, through - duration);
      } else {
        // A rate-bound channel's block moves the payload from its start at the stream rate
        // whatever the link carries besides; the stretch bounds only when the last byte is
        // through (`through_`, as for the sender's own link above). Moving the start to the
        // stretch would charge the stream time after the link's wait as well, where the link
        // shares its rate among the channels that cross it (two 12 GB/s channels on a
        // 31.5 GB/s PCIe uplink are not delayed; simgrid shares it so).
        *stream_free = finish;
      }
    }
    done(id, r, start, finish);
    const OpId recv = ops_[id].partner();
    if (!wire_.empty()) {
      wire_[recv].first = inject;
    }
    const double route_latency =
        latency(rc, r, peer) *
        static_cast<double>(
            1 + 2 * core::rendezvous_handshakes(protocol_, m, routes_.same_node(r, peer)));
    if (stream_free != nullptr && finish > stream_end) {
      // Its last byte has left once its stretches of the links have passed, after its block
      // moved it: the receiver has it no earlier (as simgrid's flow ends).
      through_.insert_or_assign(recv, finish + route_latency);
    }
    const Rank receiver = s_.peer(id); // the program that receives it
    queue_.push(Arrival{inject + route_latency, recv, receiver});
    // The arrival is handled after the other ranks' events of this wave: load what it will
    // touch now, so those loads overlap instead of each stalling on memory.
    __builtin_prefetch(ops_.data() + recv);
    __builtin_prefetch(&ranks_[receiver]);
    s_.prefetch(recv);
    ++messages_;
    bytes_ += m;
  }

  /// When send `id` of participant r, ready at `ready`, can start: with a stream rate, not before
  /// its stream has moved the previous message (less its o, which overlaps). A send waits in the
  /// event queue until then, so that the links are booked in the order the messages start: a
  /// stream with its FIFO slots' worth ready at once would otherwise book the link for all of
  /// them, far ahead, before another stream's first message, ready as early, took its turn, and
  /// that stream then found no room (24 LL128 channels took longer than 18 on one NVLink).
  [[nodiscard]] double stream_start(OpId id, Rank r, double ready) const {
    const RankState& rs = ranks_[r];
    if (!capped_ || rs.agent || rs.stream_free.empty()) {
      return ready;
    }
    const double o = overhead(*rs.endpoint, r, s_.route_peer(id));
    return std::max(ready, rs.stream_free[s_.stream(id)] - o);
  }

  /// Whether participant r issues on several streams (NCCL's channels). Its sends then go through
  /// the event queue at their ready time: a lane that runs ahead would otherwise reserve its port
  /// far into the future, and another stream's message, ready earlier, would queue behind that
  /// whole backlog where the link serves it first (SimGrid's max-min sharing does; so does the
  /// hardware: a link carries what is there).
  [[nodiscard]] bool multi_lane(Rank r) const {
    return !ranks_[r].agent && lanes_.first_lane(r + 1) - lanes_.first_lane(r) > 1;
  }

  /// How long participant a's core copies its message of m bytes to b before it leaves
  /// (core::sender_copy).
  [[nodiscard]] double copy_first(Rank a, Rank b, std::uint64_t m) const {
    if (!core::copies_before_send(protocol_)) {
      return 0.0;
    }
    const core::SenderCopy c =
        core::sender_copy(protocol_, routes_.same_node(a, b), ranks_[a].agent, ranks_[b].agent,
                          ranks_[a].endpoint->copy_bandwidth);
    return rate_time(c.wire_bytes ? wire_bytes(m, a, b) : m, c.rate);
  }

  /// The rate of participant r's reductions (core::reduce_rate).
  [[nodiscard]] core::Bandwidth reduce_rate(const core::EndpointParams& ep, Rank r) const {
    return core::reduce_rate(protocol_, ep.reduce_bandwidth, ranks_[r].agent);
  }

  /// Whether the receiver, not the sender, moves the data of a message from a to b: inside a node
  /// over a shared-memory protocol whose peers read each other's cells (core::Protocol::
  /// intra_node_overhead set: HCOLL's basesmuma, MPICH's release_gather).
  [[nodiscard]] bool reader_copies(Rank a, Rank b) const {
    return protocol_.intra_node_overhead.value >= 0 && routes_.same_node(a, b);
  }

  /// o of a message between ranks a and b: the protocol's intra-node overhead where it sets one
  /// (a shared-memory transport without MPI's matching), else the endpoint's.
  [[nodiscard]] double overhead(const core::EndpointParams& ep, Rank a, Rank b) const {
    const double intra = protocol_.intra_node_overhead.value;
    return intra >= 0 && routes_.same_node(a, b) ? intra : ep.overhead.value;
  }

  void complete_receive(OpId id, Rank r, double issued, double data_in) {
    const core::EndpointParams& ep = *ranks_[r].endpoint;
    double end = std::max(issued, data_in) + overhead(ep, r, s_.route_peer(id));
    if (s_.kind(id) == OpKind::recv_reduce) {
      end += rate_time(s_.length(id), reduce_rate(ep, r));
    }
    done(id, r, issued, end);
  }

  void arrive(const Arrival& a) {
    RankState& rs = ranks_[a.rank];
    const Rank sender = s_.route_peer(a.recv);
    // m * G on the sender's route (the receive's peer is the sender).
    const std::uint64_t m = s_.length(a.recv);
    const double duration =
        rate_time(wire_bytes(m, sender, a.rank), routes_.get(sender, a.rank).bottleneck);
    PortState& ps = per_link_ ? rs.port_for(routes_.end_links(sender, a.rank).second) : rs.port;
    double data_in = (rs.agent ? a.time() : std::max(a.time(), ps.recv_free)) + duration;
    ps.recv_free = data_in;
    if (capped_ && !ranks_[s_.peer(a.recv)].agent) {
      // The sender's thread block produced the payload no faster than the stream rate.
      data_in = std::max(data_in, a.time() + rate_time(m, protocol_.stream_bandwidth));
    }
    if (!through_.empty()) {
      if (const auto it = through_.find(a.recv); it != through_.end()) {
        data_in = std::max(data_in, it->second); // its last byte, behind other messages
        through_.erase(it);
      }
    }
    if (!wire_.empty()) {
      wire_[a.recv].second = data_in;
    }
    OpState& st = ops_[a.recv];
    if (st.state() == kWaiting) {
      complete_receive(a.recv, a.rank, st.time, data_in);
      const std::size_t first = lanes_.first_lane(a.rank);
      const std::size_t last = lanes_.first_lane(a.rank + 1);
      if (last - first == 1) {
        if (lane_[first].blocked_on == a.recv) {
          issue(first);
        }
      } else {
        issue_rank(a.rank);
      }
    } else {
      st.set_state(kArrived);
      st.time = data_in;
    }
  }

  /// Bytes on the wire for m payload bytes from `from` to `to` (LL carries 8 payload bytes per
  /// 16, LL128 120 per 128; a network transport's headers on messages between nodes).
  [[nodiscard]] std::uint64_t wire_bytes(std::uint64_t m, Rank from, Rank to) const {
    if (plain_) {
      return m;
    }
    const double eff =
        protocol_.efficiency * (routes_.same_node(from, to) ? protocol_.intra_node_efficiency
                                                            : protocol_.inter_node_efficiency);
    if (eff >= 1.0) {
      return m;
    }
    return static_cast<std::uint64_t>(std::ceil(static_cast<double>(m) / eff));
  }
  /// A message's latency: the route's, or with a protocol, the protocol's per-message latency
  /// where that is larger. NCCL's hwLatencies are whole per-step latencies measured over a link
  /// class (algorithms.md 3.1), so they replace the route's latency rather than add to it; the
  /// route still bounds it from below (a slower fabric than NCCL's tables assume).
  [[nodiscard]] double latency(const core::RouteCost& rc, Rank from, Rank to) const {
    if (plain_) {
      return rc.latency.value;
    }
    const double proto = routes_.same_node(from, to) ? protocol_.message_latency.value
                                                     : protocol_.inter_node_latency.value;
    return std::max(rc.latency.value, proto);
  }

  /// Reports the engine's state to the point's memory meter before it is allocated: per
  /// operation its OpState (12 B) and the matching's receive index (4 B), the timeline and the
  /// message log on top. (Measured peak resident memory of a 4096-rank ring, 67 M operations:
  /// 38 B per operation, the schedule's 24 included.)
  static core::MeterLease charge(const core::Schedule& s, const core::RunOptions& opt) {
    core::MeterLease lease(s.header().meter);
    if (lease.metered()) {
      const std::uint64_t per_op = kStateBytes + (opt.timeline ? sizeof(double) : 0) +
                                   (opt.messages || opt.link_loads ? 2 * sizeof(double) : 0);
      lease.hold(per_op * s.op_count());
    }
    return lease;
  }
  static constexpr std::uint64_t kStateBytes = sizeof(OpState) + sizeof(OpId);

  /// The ranks the schedule stands for: its own, or a collapsed schedule's full count.
  [[nodiscard]] std::uint32_t full_ranks() const { return s_.header().full_ranks(); }
  /// The device of every participant, and of a collapsed schedule every rank its messages' route
  /// peers name (graph topologies; none on a full mesh).
  static std::vector<core::DeviceId> devices(const core::Schedule& s, const core::Topology& t) {
    std::vector<core::DeviceId> out = core::participant_devices(s, t, "loggp");
    if (s.header().collapse.active() && !t.is_full_mesh()) {
      const std::uint32_t p = std::min(s.header().collapse.ranks, t.rank_count());
      for (Rank x = s.ranks(); x < p; ++x) {
        out.push_back(t.device_of(x));
      }
    }
    return out;
  }

  core::MeterLease lease_; // first: charged before any array below is allocated
  const core::Schedule& s_;
  const core::Topology& t_;
  const core::RunOptions& opt_;
  Routes routes_;
  core::BigVector<OpState> ops_;
  core::BigVector<double> start_;
  core::BigVector<std::pair<double, double>> wire_; // per receive: the message's time on the wire
  std::vector<RankState> ranks_;
  core::Lanes lanes_;
  std::vector<LaneState> lane_;
  ArrivalQueue queue_;
  std::uint64_t messages_ = 0;
  std::uint64_t bytes_ = 0;
  core::BigVector<OpId> credit_;            // per send with fifo_slots: the receive it waits for
  core::BigVector<std::uint8_t> is_credit_; // per receive: some send waits for it
  std::vector<Rank> wake_;                  // senders to issue again after a credit returned
  core::Protocol protocol_;
  MiddleLinks middle_;
  /// Rate-bound messages whose last byte left after their block moved them (their stretch of a
  /// link ended later): when it reaches the receiver (receive -> time), while in flight.
  std::unordered_map<OpId, double> through_;
  double now_ = 0.0; // the time of the event being handled: no later send starts before it
  bool plain_ = true;
  bool per_link_ = false;
  bool capped_ = false;
};

} // namespace

core::RunResult LogGPEngine::run(const core::Schedule& schedule, const core::Topology& topology,
                                 const core::RunOptions& options) const {
  return Simulation(schedule, topology, options).run();
}

} // namespace collsim::engines
