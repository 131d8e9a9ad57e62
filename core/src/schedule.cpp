#include "collsim/core/schedule.hpp"

#include "collsim/core/errors.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <fmt/format.h>
#include <limits>

namespace collsim::core {
namespace {
constexpr std::uint32_t kNoArg = std::numeric_limits<std::uint32_t>::max();
} // namespace

std::string_view to_string(Buffer b) {
  switch (b) {
  case Buffer::data: return "data";
  case Buffer::tmp: return "tmp";
  }
  throw InternalError("unknown Buffer value");
}

std::string_view to_string(OpKind k) {
  switch (k) {
  case OpKind::send: return "send";
  case OpKind::recv: return "recv";
  case OpKind::recv_reduce: return "recv_reduce";
  case OpKind::reduce: return "reduce";
  case OpKind::copy: return "copy";
  case OpKind::calc: return "calc";
  }
  throw InternalError("unknown OpKind value");
}

Schedule::Schedule(ScheduleHeader header) : header_(std::move(header)), lease_(header_.meter) {
  if (const Collapse& c = header_.collapse; c.active()) {
    const std::uint32_t k = header_.ranks;
    const bool xor_ok = c.kind != SymmetryKind::xor_blocks ||
                        ((c.ranks & (c.ranks - 1)) == 0 && (k & (k - 1)) == 0);
    if (k == 0 || c.ranks < k || c.ranks % k != 0 || !xor_ok) {
      throw InternalError(
          fmt::format("a schedule collapsed to {} programs cannot stand for {} ranks", k, c.ranks));
    }
  }
  rank_begin_.reserve(static_cast<std::size_t>(participants()) + 1);
}

void Schedule::set_meter(MeterRef meter) {
  header_.meter = meter;
  lease_ = MeterLease(meter);
  lease_.hold(memory_bytes());
}

void Schedule::charge_growth(std::size_t ops, std::size_t deps) {
  constexpr std::size_t kPerOp = sizeof(PackedOp) + sizeof(std::uint64_t) + 2; // + stream, tag
  const std::size_t per_op = kPerOp + (header_.collapse.active() ? sizeof(Rank) : 0);
  lease_.hold(memory_bytes() + ops * per_op + deps * sizeof(std::uint32_t));
}

std::size_t Schedule::memory_bytes() const {
  return ops_.capacity() * sizeof(PackedOp) + offset_.capacity() * sizeof(std::uint64_t) +
         extra_deps_.capacity() * sizeof(std::uint32_t) + rank_begin_.capacity() * sizeof(OpId) +
         local_sources_.capacity() * sizeof(LocalSource) +
         calc_ns_.capacity() * sizeof(std::uint64_t) +
         long_lengths_.capacity() * sizeof(std::pair<OpId, std::uint64_t>) +
         streams_.capacity() * sizeof(std::uint8_t) + tags_.capacity() * sizeof(std::uint8_t) +
         route_peers_.capacity() * sizeof(Rank);
}

void Schedule::reserve(std::size_t ops, std::size_t /*deps*/) {
  // Single dependencies live inline; only lists of two or more use extra_deps_, grown on demand.
  if (lease_.metered() && ops > ops_.capacity()) {
    charge_growth(ops, 0);
  }
  ops_.reserve(ops);
  offset_.reserve(ops);
  if (header_.collapse.active()) {
    route_peers_.reserve(ops);
  }
}

void Schedule::check_building(const char* what) const {
  if (finished_) {
    throw InternalError(fmt::format("Schedule::{} after finish()", what));
  }
}

void Schedule::begin_rank(Rank rank) {
  check_building("begin_rank");
  if (rank != next_rank_ || rank >= participants()) {
    throw InternalError(fmt::format("Schedule::begin_rank({}) out of order (expected {} of {})",
                                    rank, next_rank_, participants()));
  }
  if (rank > 0) {
    rank_begin_.push_back(static_cast<OpId>(ops_.size()));
  }
  ++next_rank_;
  stream_ = 0;
  tag_ = 0;
}

void Schedule::set_stream(std::uint32_t stream) {
  check_building("set_stream");
  if (stream >= kMaxStreams) {
    throw UsageError(
        fmt::format("stream {} out of range (a rank has at most {} streams)", stream, kMaxStreams));
  }
  stream_ = stream;
}

void Schedule::set_tag(std::uint32_t tag) {
  check_building("set_tag");
  if (tag >= kMaxTags) {
    throw UsageError(
        fmt::format("tag {} out of range (messages have at most {} tags)", tag, kMaxTags));
  }
  tag_ = tag;
}

std::uint32_t Schedule::add(OpKind kind, Rank peer, Range target, Range source,
                            std::span<const std::uint32_t> deps) {
  check_building("add");
  if (next_rank_ == 0) {
    throw InternalError("Schedule::add before begin_rank");
  }
  if (ops_.size() >= kMaxOps) {
    throw UsageError("schedule too large: more than 2^30 operations");
  }
  if (deps.size() >= (1U << 24)) {
    throw UsageError("an operation cannot depend on more than 16 million others");
  }
  if (lease_.metered()) {
    const bool ops_full = ops_.size() == ops_.capacity();
    const bool deps_full =
        deps.size() > 1 && extra_deps_.size() + deps.size() > extra_deps_.capacity();
    if (ops_full || deps_full) {
      charge_growth(
          ops_full ? std::max<std::size_t>(2 * ops_.capacity(), 1) : 0,
          deps_full ? std::max(2 * extra_deps_.capacity(), extra_deps_.size() + deps.size()) : 0);
    }
  }
  const auto id = static_cast<OpId>(ops_.size());
  PackedOp o{};
  o.kind = static_cast<unsigned>(kind) | (static_cast<unsigned>(target.buffer) << 4);
  if (kind == OpKind::reduce || kind == OpKind::copy) {
    o.arg = static_cast<std::uint32_t>(local_sources_.size());
    local_sources_.push_back({source.offset, source.buffer});
  } else if (kind == OpKind::calc) {
    o.arg = static_cast<std::uint32_t>(calc_ns_.size()); // its time: calc() sets it
    calc_ns_.push_back(0);
    target = Range{};
  } else if (header_.collapse.active()) {
    if (peer >= header_.collapse.ranks) {
      throw InternalError(fmt::format("a message to rank {} of {}", peer, header_.collapse.ranks));
    }
    o.arg = peer % header_.ranks; // the representative of the partner's class (collapse.hpp)
  } else {
    o.arg = peer;
  }
  if (target.length >= kLongLength) {
    o.length = kLongLength;
    long_lengths_.emplace_back(id, target.length);
  } else {
    o.length = static_cast<std::uint32_t>(target.length);
  }
  o.ndeps = static_cast<std::uint32_t>(deps.size()) & 0xffffffU; // < 2^24, checked above
  if (deps.size() == 1) {
    o.dep = deps[0];
  } else if (deps.size() > 1) {
    o.dep = static_cast<std::uint32_t>(extra_deps_.size());
    extra_deps_.insert(extra_deps_.end(), deps.begin(), deps.end());
  }
  dep_total_ += deps.size();
  // The per-operation arrays start at the first operation off stream 0 (or tag 0), which may be
  // the schedule's very first.
  if (stream_ != 0 || !streams_.empty()) {
    streams_.resize(ops_.size(), 0);
    streams_.push_back(static_cast<std::uint8_t>(stream_));
    stream_count_ = std::max(stream_count_, stream_ + 1);
  }
  const bool message = kind == OpKind::send || kind == OpKind::recv || kind == OpKind::recv_reduce;
  const std::uint32_t tag = message ? tag_ : 0;
  if (tag != 0 || !tags_.empty()) {
    tags_.resize(ops_.size(), 0);
    tags_.push_back(static_cast<std::uint8_t>(tag));
  }
  if (header_.collapse.active()) {
    route_peers_.push_back(message ? peer : 0);
  }
  ops_.push_back(o);
  offset_.push_back(target.offset);
  return id - rank_begin_.back();
}

std::uint32_t Schedule::send(Rank peer, Range from, std::initializer_list<std::uint32_t> deps) {
  return add(OpKind::send, peer, from, {}, deps);
}
std::uint32_t Schedule::recv(Rank peer, Range into, std::initializer_list<std::uint32_t> deps) {
  return add(OpKind::recv, peer, into, {}, deps);
}
std::uint32_t Schedule::recv_reduce(Rank peer, Range into,
                                    std::initializer_list<std::uint32_t> deps) {
  return add(OpKind::recv_reduce, peer, into, {}, deps);
}
std::uint32_t Schedule::reduce(Range from, Range into, std::initializer_list<std::uint32_t> deps) {
  return add(OpKind::reduce, kNoArg, into, from, deps);
}
std::uint32_t Schedule::copy(Range from, Range into, std::initializer_list<std::uint32_t> deps) {
  return add(OpKind::copy, kNoArg, into, from, deps);
}

std::vector<std::uint32_t> Schedule::append_program(const Schedule& from, Rank r, Rank peer_shift,
                                                    std::uint32_t entry) {
  check_building("append_program");
  if (next_rank_ == 0 || !from.finished_ || r >= from.participants()) {
    throw InternalError("Schedule::append_program: needs a started participant and a finished "
                        "schedule to copy from");
  }
  const bool collapsed = header_.collapse.active();
  const OpId begin = from.rank_begin(r);
  const std::size_t n = from.rank_end(r) - begin;
  const auto shift = static_cast<std::uint32_t>(ops_.size() - rank_begin_.back());
  if (ops_.size() + n > kMaxOps) {
    throw UsageError("schedule too large: more than 2^30 operations");
  }
  if (ops_.size() + n > ops_.capacity()) {
    const std::size_t want = std::max(ops_.size() + n, 2 * ops_.capacity());
    if (lease_.metered()) {
      charge_growth(want, 0);
    }
    ops_.reserve(want);
    offset_.reserve(want);
    if (collapsed) {
      route_peers_.reserve(want);
    }
  }
  // The per-operation arrays exist once either schedule has an operation off stream (tag) 0;
  // they and the offsets are copied whole.
  const OpId end = begin + static_cast<OpId>(n);
  const auto copy_bytes = [&](BigVector<std::uint8_t>& mine,
                              const BigVector<std::uint8_t>& theirs) {
    if (theirs.empty() && mine.empty()) {
      return;
    }
    mine.resize(ops_.size(), 0);
    if (theirs.empty()) {
      mine.resize(ops_.size() + n, 0);
    } else {
      mine.insert(mine.end(), theirs.begin() + begin, theirs.begin() + end);
    }
  };
  copy_bytes(streams_, from.streams_);
  copy_bytes(tags_, from.tags_);
  if (!from.streams_.empty()) {
    for (OpId id = begin; id < end; ++id) {
      stream_count_ = std::max<std::uint32_t>(stream_count_, from.streams_[id] + 1U);
    }
  }
  offset_.insert(offset_.end(), from.offset_.begin() + begin, from.offset_.begin() + end);
  std::vector<std::uint8_t> waited(n, 0);
  const auto wait_for = [&](std::uint32_t d) {
    if (d >= n) {
      throw InternalError(fmt::format("Schedule::append_program: dependency l{} of {}", d, n));
    }
    waited[d] = 1;
  };
  // The operations copied whole, then set right in place: most need a peer or a dependency
  // shifted and nothing else.
  const std::size_t first_new = ops_.size();
  ops_.insert(ops_.end(), from.ops_.begin() + begin, from.ops_.begin() + end);
  PackedOp* dst = ops_.data() + first_new;
  for (std::size_t i = 0; i < n; ++i) {
    PackedOp& o = dst[i];
    switch (static_cast<OpKind>(o.kind & 0x0f)) {
    case OpKind::send:
    case OpKind::recv:
    case OpKind::recv_reduce:
      if (collapsed) { // as add() takes a peer (the representative of its class, collapse.hpp)
        const Rank peer = o.arg + peer_shift;
        if (peer >= header_.collapse.ranks) {
          throw InternalError(
              fmt::format("a message to rank {} of {}", peer, header_.collapse.ranks));
        }
        route_peers_.push_back(peer);
        o.arg = peer % header_.ranks;
      } else {
        o.arg += peer_shift;
      }
      break;
    case OpKind::reduce:
    case OpKind::copy:
      local_sources_.push_back(from.local_sources_[o.arg]);
      o.arg = static_cast<std::uint32_t>(local_sources_.size() - 1);
      break;
    case OpKind::calc:
      calc_ns_.push_back(from.calc_ns_[o.arg]);
      o.arg = static_cast<std::uint32_t>(calc_ns_.size() - 1);
      break;
    }
    if (collapsed && route_peers_.size() == first_new + i) {
      route_peers_.push_back(0); // a local operation
    }
    if (o.length == kLongLength) {
      const auto id = static_cast<OpId>(begin + i);
      long_lengths_.emplace_back(static_cast<OpId>(first_new + i), from.long_length(id));
    }
    if (o.ndeps == 1) {
      wait_for(o.dep);
      o.dep += shift;
    } else if (o.ndeps == 0) {
      if (entry >= shift) {
        throw InternalError(fmt::format("Schedule::append_program: entry l{} is not an operation "
                                        "added before (the participant has {})",
                                        entry, shift));
      }
      o.ndeps = 1;
      o.dep = entry;
    } else {
      const std::uint32_t first = o.dep;
      o.dep = static_cast<std::uint32_t>(extra_deps_.size());
      for (std::uint32_t k = 0; k < o.ndeps; ++k) {
        const std::uint32_t d = from.extra_deps_[first + k];
        wait_for(d);
        extra_deps_.push_back(d + shift);
      }
    }
    dep_total_ += o.ndeps;
  }
  if (lease_.metered()) {
    lease_.hold(memory_bytes()); // the side arrays grew on demand
  }
  std::vector<std::uint32_t> sinks;
  for (std::uint32_t i = 0; i < n; ++i) {
    if (waited[i] == 0) {
      sinks.push_back(shift + i);
    }
  }
  return sinks;
}

void Schedule::finish() {
  if (finished_) {
    return;
  }
  while (next_rank_ < participants()) {
    begin_rank(next_rank_);
  }
  rank_begin_.push_back(static_cast<OpId>(ops_.size()));
  finished_ = true;
  lease_.hold(memory_bytes()); // what the arrays hold now that none grows
}

std::uint32_t Schedule::calc(Seconds time, std::span<const std::uint32_t> deps) {
  if (!(time.value >= 0.0) || !std::isfinite(time.value)) {
    throw InternalError(fmt::format("calc of {} s", time.value));
  }
  const std::uint32_t local = add(OpKind::calc, kNoArg, Range{}, Range{}, deps);
  calc_ns_.back() = static_cast<std::uint64_t>(std::llround(time.value * 1e9));
  return local;
}

std::uint64_t Schedule::calc_ns(OpId id) const {
  return kind(id) == OpKind::calc ? calc_ns_[ops_[id].arg] : 0;
}

Seconds Schedule::calc_time(OpId id) const {
  return Seconds{static_cast<double>(calc_ns(id)) * 1e-9};
}

std::uint64_t Schedule::long_length(OpId id) const {
  auto it = std::lower_bound(long_lengths_.begin(), long_lengths_.end(), id,
                             [](const auto& p, OpId v) { return p.first < v; });
  return it->second;
}

Range Schedule::target(OpId id) const {
  return Range{static_cast<Buffer>((ops_[id].kind >> 4) & 0x3), offset_[id], length(id)};
}

Range Schedule::source(OpId id) const {
  const OpKind k = kind(id);
  if (k != OpKind::reduce && k != OpKind::copy) {
    return {};
  }
  const LocalSource& src = local_sources_[ops_[id].arg];
  return Range{src.buffer, src.offset, length(id)};
}

Rank Schedule::rank_of(OpId id) const {
  auto it = std::upper_bound(rank_begin_.begin(), rank_begin_.end(), id);
  return static_cast<Rank>(it - rank_begin_.begin() - 1);
}

Op Schedule::op(OpId id) const {
  Op o;
  o.kind = kind(id);
  o.rank = rank_of(id);
  o.local = id - rank_begin_[o.rank];
  if (o.kind == OpKind::reduce || o.kind == OpKind::copy) {
    o.source = source(id);
  } else if (o.kind == OpKind::calc) {
    o.calc_seconds = calc_time(id).value;
  } else {
    o.peer = peer(id);
  }
  o.target = target(id);
  const auto d = deps(id);
  o.deps.assign(d.begin(), d.end());
  o.stream = stream(id);
  o.tag = tag(id);
  return o;
}

Lanes::Lanes(const Schedule& s) {
  const Rank n = s.participants();
  rank_lane_.reserve(n + 1);
  if (s.stream_count() == 1) {
    for (Rank r = 0; r < n; ++r) {
      rank_lane_.push_back(r);
      lane_rank_.push_back(r);
      lane_begin_.push_back(s.rank_begin(r));
    }
    rank_lane_.push_back(n);
    lane_begin_.push_back(s.op_count());
    return;
  }
  order_.resize(s.op_count());
  std::size_t position = 0;
  std::array<std::size_t, Schedule::kMaxStreams> count{};
  for (Rank r = 0; r < n; ++r) {
    rank_lane_.push_back(lane_rank_.size());
    count.fill(0);
    for (OpId id = s.rank_begin(r); id < s.rank_end(r); ++id) {
      ++count[s.stream(id)];
    }
    // One lane per stream the rank uses, in stream order; bucket its operations in program order.
    std::array<std::size_t, Schedule::kMaxStreams> next{};
    for (std::uint32_t k = 0; k < Schedule::kMaxStreams; ++k) {
      if (count[k] != 0) {
        lane_rank_.push_back(r);
        lane_begin_.push_back(position);
        next[k] = position;
        position += count[k];
      }
    }
    for (OpId id = s.rank_begin(r); id < s.rank_end(r); ++id) {
      order_[next[s.stream(id)]++] = id;
    }
  }
  rank_lane_.push_back(lane_rank_.size());
  lane_begin_.push_back(position);
}

bool Schedule::operator==(const Schedule& other) const {
  if (!(header_ == other.header_) || op_count() != other.op_count() ||
      rank_begin_ != other.rank_begin_ || route_peers_.size() != other.route_peers_.size()) {
    return false;
  }
  for (OpId id = 0; id < route_peers_.size(); ++id) {
    if (route_peers_[id] != other.route_peers_[id]) {
      return false;
    }
  }
  for (OpId id = 0; id < op_count(); ++id) {
    if (!(op(id) == other.op(id))) {
      return false;
    }
  }
  return true;
}

} // namespace collsim::core
