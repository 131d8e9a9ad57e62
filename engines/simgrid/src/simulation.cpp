// The SimGrid simulation: its event loop over SimGrid's activities and timers, and the ranks'
// programs (issue order, dependencies, completion); the sending side is in simulation_send.cpp.

#include "simulation.hpp"
#include "simulation_run.hpp"

#include "collsim/core/errors.hpp"
#include "collsim/core/verify.hpp"
#include "collsim/engines/simgrid.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fmt/format.h>
#include <string>
#include <vector>

namespace collsim::engines::detail {
namespace simgrid_run {

Simulation::Simulation(const core::Schedule& s, const core::Topology& t,
                       const core::RunOptions& opt, const core::SimgridSpec& settings)
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
      ranks_[r].endpoint = &t.devices()[*t.find_device(s.header().agents[r - s.ranks()])].endpoint;
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

core::RunResult Simulation::run() {
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

std::uint32_t Simulation::new_event(Ev kind, std::uint32_t subject) {
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

void Simulation::on_completion(const sg4::Activity& a) {
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

void Simulation::handle(std::uint32_t index) {
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

void Simulation::arrive(OpId recv) {
  ops_[recv].arrived = true;
  ops_[recv].end = now();
  if (ops_[recv].state == kIssued) {
    finish_receive(recv);
  }
}

void Simulation::enqueue(Rank r) {
  if (!ranks_[r].queued && ranks_[r].started) {
    ranks_[r].queued = true;
    work_.push_back(r);
  }
}

void Simulation::drain() {
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

void Simulation::complete(OpId id, double end) {
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

void Simulation::issue_rank(Rank r) {
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

void Simulation::issue(std::size_t l, Rank r) {
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

bool Simulation::send_done_by_now(OpId dep, Rank r) {
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

void Simulation::start_op(OpId id, Rank r) {
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

void Simulation::finish_receive(OpId id) {
  const Rank r = s_.rank_of(id);
  const core::EndpointParams& ep = *ranks_[r].endpoint;
  double d = proto_.overhead(ep, r, s_.peer(id));
  if (s_.kind(id) == OpKind::recv_reduce) {
    d += rate_time(s_.length(id), reduce_rate(ep, r));
  }
  local(id, r, d);
}

void Simulation::local(OpId id, Rank r, double seconds) {
  if (seconds > kEpsilon) {
    start_exec(r, seconds, Ev::local, id);
  } else {
    complete(id, now());
  }
}

} // namespace simgrid_run

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
  simgrid::s4u::Engine engine(&argc, argv.data());
  simgrid_run::Simulation sim(schedule, topology, options, settings);
  return sim.run();
}

} // namespace collsim::engines::detail
