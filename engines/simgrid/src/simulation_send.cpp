// The SimGrid simulation's sending side: a send's CPU work (a core's copy before it leaves), the
// network proxy that posts a rank's messages between nodes, the serial ports, and the flows.

#include "simulation_run.hpp"

#include "collsim/core/errors.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fmt/format.h>
#include <vector>

namespace collsim::engines::detail::simgrid_run {

void Simulation::delay_until(Rank r, double time, OpId send) {
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

void Simulation::leave_port(OpId send) {
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

void Simulation::start_comm(OpId send) {
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

void Simulation::hand_to_proxy(OpId id, Rank r) {
  proxy_pending_.push_back(id);
  if (!proxy_armed_) {
    proxy_armed_ = true;
    start_exec(r, kEpsilon, Ev::proxy, 0);
  }
}

void Simulation::post_proxied() {
  proxy_armed_ = false;
  std::vector<OpId> batch;
  batch.swap(proxy_pending_);
  std::sort(batch.begin(), batch.end());
  for (const OpId id : batch) {
    post_send(id, s_.rank_of(id), ops_[id].start);
  }
}

void Simulation::post_send(OpId id, Rank r, double t) {
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

void Simulation::stream_done(OpId send) {
  const Rank r = s_.rank_of(send);
  const std::uint64_t lane = proto_.lane(s_.stream(send), s_.peer(send));
  if (!ranks_[r].agent) {
    if (const OpId next = ranks_[r].release_lane(lane); next != core::kNoMatch) {
      start_op(next, r);
    }
  }
}

double Simulation::copy_first(Rank a, Rank b, std::uint64_t m) const {
  const core::Protocol& p = proto_.protocol();
  if (!core::copies_before_send(p)) {
    return 0.0;
  }
  const core::SenderCopy c = core::sender_copy(p, proto_.same_node(a, b), ranks_[a].agent,
                                               ranks_[b].agent, ranks_[a].endpoint->copy_bandwidth);
  return rate_time(c.wire_bytes ? proto_.wire_bytes(m, a, b) : m, c.rate);
}

} // namespace collsim::engines::detail::simgrid_run
