#pragma once
// The loggp engine's state (loggp_engine.cpp runs the simulation): per-operation state packed for
// the cache, the queue of message arrivals, per-lane, per-port and per-rank state, and the route
// cache. Internal to the engine; everything here is inline because the event loop runs it for
// every operation.

#include "collsim/core/schedule.hpp"
#include "collsim/core/topology.hpp"
#include "collsim/core/verify.hpp"

#include <algorithm>
#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

namespace collsim::engines::loggp_detail {

using core::OpId;
using core::OpKind;
using core::Rank;

enum : std::uint32_t { kPending = 0, kWaiting = 1, kArrived = 2, kDone = 3 };

/// Per-operation engine state, 12 bytes: a time (its meaning depends on the state: a waiting
/// receive's issue time, an arrived message's end of data, a completed operation's end) and the
/// partner operation (the matching receive of a send) with the state in the top two bits.
/// Packed so that one cache line covers five operations (see Schedule::PackedOp for why).
#pragma pack(push, 4)
struct OpState {
  double time = 0.0;
  std::uint32_t link = 0;
  [[nodiscard]] std::uint32_t state() const { return link >> 30; }
  [[nodiscard]] OpId partner() const { return link & kPartnerMask; }
  void set_state(std::uint32_t st) { link = (link & kPartnerMask) | (st << 30); }
  static constexpr std::uint32_t kPartnerMask = (1U << 30) - 1;
};
#pragma pack(pop)
static_assert(sizeof(OpState) == 12);

/// Marks an event that is not an arrival but a send of participant (rank & ~kSendEvent) becoming
/// ready (`recv` then holds the send): sends of a rank with several streams take their port in
/// time order through the same queue.
constexpr Rank kSendEvent = Rank{1} << 31;

/// A message's first byte reaching its receiver (or, with kSendEvent, a send becoming ready). The
/// key packs (time, receive id) so that one integer comparison orders events: non-negative doubles
/// order like their bit patterns.
struct Arrival {
  std::uint64_t time_bits;
  OpId recv;
  Rank rank;
  Arrival(double time, OpId r, Rank k)
      : time_bits(std::bit_cast<std::uint64_t>(time)), recv(r), rank(k) {}
  [[nodiscard]] double time() const { return std::bit_cast<double>(time_bits); }
  [[nodiscard]] bool before(const Arrival& o) const {
    const std::uint64_t a = time_bits >> kTieBits;
    const std::uint64_t b = o.time_bits >> kTieBits;
    return a != b ? a < b : recv < o.recv;
  }
  /// Times equal but for their last 12 bits of mantissa (about 1e-12 of their value: two sums of
  /// the same terms in another order) are simultaneous: ordered by receive id, so the order of
  /// two messages reaching a port at the same instant does not hang on rounding (as SimGrid,
  /// whose clock does not tell them apart either).
  static constexpr unsigned kTieBits = 12;
};

/// The pending arrivals, popped in (time, receive id) order. Two parts: a sorted run that takes
/// every event not smaller than its last one (in regular collectives, sends of one wave are pushed
/// almost in order, so most events cost O(1)), and a 4-ary min-heap for the rest. pop() takes the
/// smaller of the two fronts, so the order is exactly that of a single priority queue.
class ArrivalQueue {
public:
  [[nodiscard]] bool empty() const { return head_ == run_.size() && heap_.empty(); }
  void push(const Arrival& a) {
    if (head_ == run_.size() || !a.before(run_.back())) {
      run_.push_back(a);
      return;
    }
    heap_push(a);
  }
  Arrival pop() {
    const bool from_run =
        head_ < run_.size() && (heap_.empty() || run_[head_].before(heap_.front()));
    if (!from_run) {
      return heap_pop();
    }
    const Arrival a = run_[head_++];
    if (head_ == run_.size()) {
      run_.clear();
      head_ = 0;
    } else if (head_ >= kCompactAt && head_ * 2 >= run_.size()) {
      run_.erase(run_.begin(), run_.begin() + static_cast<std::ptrdiff_t>(head_));
      head_ = 0;
    }
    return a;
  }

private:
  static constexpr std::size_t kCompactAt = std::size_t{1} << 16;

  void heap_push(const Arrival& a) {
    std::size_t i = heap_.size();
    heap_.push_back(a);
    while (i > 0) {
      const std::size_t parent = (i - 1) / 4;
      if (!a.before(heap_[parent])) {
        break;
      }
      heap_[i] = heap_[parent];
      i = parent;
    }
    heap_[i] = a;
  }
  Arrival heap_pop() {
    const Arrival top = heap_.front();
    const Arrival last = heap_.back();
    heap_.pop_back();
    const std::size_t n = heap_.size();
    if (n == 0) {
      return top;
    }
    std::size_t i = 0;
    while (true) {
      const std::size_t first = 4 * i + 1;
      if (first >= n) {
        break;
      }
      std::size_t best = first;
      const std::size_t end = std::min(first + 4, n);
      for (std::size_t c = first + 1; c < end; ++c) {
        if (heap_[c].before(heap_[best])) {
          best = c;
        }
      }
      if (!heap_[best].before(last)) {
        break;
      }
      heap_[i] = heap_[best];
      i = best;
    }
    heap_[i] = last;
    return top;
  }

  std::vector<Arrival> run_;
  std::size_t head_ = 0;
  std::vector<Arrival> heap_;
};

/// A cursor over one issue lane (a rank's stream; core::Lanes): its next operation, the operation
/// it waits for, and when it issued its last one.
struct LaneState {
  std::size_t next = 0;
  OpId blocked_on = core::kNoMatch;
  double last_issue = 0.0;
};

/// When a link is busy, as sorted disjoint stretches [begin, end): the messages of rate-bound
/// channels (core::Protocol::stream_bandwidth) each take their wire time at the first free
/// stretch from when their channel starts them, so channels interleave on the link instead of
/// one channel's backlog delaying all others.
class PortCalendar {
public:
  /// Books `duration` seconds at the first free stretch from `from`; returns its end. Stretches
  /// ending before `horizon` are forgotten: no later booking starts before it.
  double reserve(double from, double duration, double horizon) {
    std::size_t drop = 0;
    while (drop < busy_.size() && busy_[drop].second <= horizon) {
      ++drop;
    }
    busy_.erase(busy_.begin(), busy_.begin() + static_cast<std::ptrdiff_t>(drop));
    double at = from;
    std::size_t i = 0;
    for (; i < busy_.size(); ++i) {
      if (busy_[i].second <= at) {
        continue;
      }
      if (busy_[i].first >= at + duration) {
        break;
      }
      at = std::max(at, busy_[i].second);
    }
    const double end = at + duration;
    // Insert at i, merged with the stretches it touches.
    const bool join_prev = i > 0 && busy_[i - 1].second >= at;
    const bool join_next = i < busy_.size() && busy_[i].first <= end;
    if (join_prev && join_next) {
      busy_[i - 1].second = busy_[i].second;
      busy_.erase(busy_.begin() + static_cast<std::ptrdiff_t>(i));
    } else if (join_prev) {
      busy_[i - 1].second = end;
    } else if (join_next) {
      busy_[i].first = at;
    } else {
      busy_.insert(busy_.begin() + static_cast<std::ptrdiff_t>(i), {at, end});
    }
    return end;
  }

private:
  std::vector<std::pair<double, double>> busy_;
};

/// One port of a participant: LogGP's o, g and G state for the messages it serialises.
struct PortState {
  double cpu_free = 0.0;
  double send_free = 0.0;   // earliest start of the next send (gap g)
  double inject_free = 0.0; // the send port is injecting until then
  double recv_free = 0.0;
  PortCalendar calendar; // sends of rate-bound channels
};

struct RankState {
  const core::EndpointParams* endpoint = nullptr;
  bool agent = false; // an in-network switch: a port per link, no serialisation of its messages
  PortState port;     // the single port (LogGP)
  /// With core::Protocol::stream_bandwidth: per issue stream, when it has moved its last
  /// message's payload at that rate (sized on first use).
  std::vector<double> stream_free;
  /// With core::Protocol::port_per_link: a port per link of the device, by link (or, on a full
  /// mesh, by peer), found by linear search (a device has a few dozen links at most).
  std::vector<std::pair<std::uint32_t, PortState>> ports;
  double finish = 0.0;
  /// With core::Protocol::proxy_overhead: when the rank's network proxy is free again.
  double proxy_free = 0.0;
  PortState& port_for(std::uint32_t key) {
    for (auto& [k, st] : ports) {
      if (k == key) {
        return st;
      }
    }
    ports.emplace_back(key, PortState{});
    return ports.back().second;
  }
};

/// Route costs between participants (ranks, then agents): constant on a full mesh, else cached
/// per ordered pair.
class Routes {
public:
  Routes(const core::Topology& t, std::vector<core::DeviceId> devices)
      : t_(t), devices_(std::move(devices)) {
    if (t.is_full_mesh() && t.rank_count() > 1) {
      mesh_ = t.route_cost(0, 1);
    }
  }
  const core::RouteCost& get(Rank a, Rank b) {
    if (t_.is_full_mesh()) {
      return mesh_;
    }
    const std::uint64_t key = (static_cast<std::uint64_t>(a) << 32) | b;
    auto it = cache_.find(key);
    if (it == cache_.end()) {
      it = cache_.emplace(key, t_.route_cost_between(devices_[a], devices_[b])).first;
    }
    return it->second;
  }
  /// The first and the last link of the route from a to b (the ports a message leaves and
  /// arrives through); on a full mesh, the peers themselves stand for the links.
  std::pair<std::uint32_t, std::uint32_t> end_links(Rank a, Rank b) {
    if (t_.is_full_mesh()) {
      return {b, a};
    }
    const std::uint64_t key = (static_cast<std::uint64_t>(a) << 32) | b;
    auto it = ends_.find(key);
    if (it == ends_.end()) {
      const std::vector<core::LinkId> path = t_.route_between(devices_[a], devices_[b]);
      const std::pair<std::uint32_t, std::uint32_t> ends =
          path.empty() ? std::pair<std::uint32_t, std::uint32_t>{b, a}
                       : std::pair<std::uint32_t, std::uint32_t>{path.front(), path.back()};
      it = ends_.emplace(key, ends).first;
    }
    return it->second;
  }
  [[nodiscard]] const std::vector<core::DeviceId>& devices() const { return devices_; }
  /// Whether a message from a to b stays inside one node (for a protocol's per-message latency).
  [[nodiscard]] bool same_node(Rank a, Rank b) const {
    if (t_.is_full_mesh()) {
      return false; // a full mesh is one rank per node
    }
    const core::Device& da = t_.devices()[devices_[a]];
    const core::Device& db = t_.devices()[devices_[b]];
    return da.node == db.node && da.kind != core::DeviceKind::network_switch &&
           db.kind != core::DeviceKind::network_switch;
  }

private:
  const core::Topology& t_;
  std::vector<core::DeviceId> devices_; // per participant (graph topologies only)
  core::RouteCost mesh_;
  std::unordered_map<std::uint64_t, core::RouteCost> cache_;
  std::unordered_map<std::uint64_t, std::pair<std::uint32_t, std::uint32_t>> ends_;
};

using core::rate_time;

} // namespace collsim::engines::loggp_detail
