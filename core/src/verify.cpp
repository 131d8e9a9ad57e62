#include "collsim/core/verify.hpp"

#include "collsim/core/errors.hpp"
#include "collsim/core/layout.hpp"

#include <algorithm>
#include <array>
#include <fmt/format.h>
#include <random>

namespace collsim::core {

void VerifyReport::add(std::string problem) {
  ++total_problems;
  if (problems.size() < kMaxProblems) {
    problems.push_back(std::move(problem));
  }
}

std::string VerifyReport::summary() const {
  std::string out;
  for (const auto& p : problems) {
    if (!out.empty()) {
      out += '\n';
    }
    out += p;
  }
  if (total_problems > problems.size()) {
    out += fmt::format("\n... and {} more problems", total_problems - problems.size());
  }
  return out;
}

namespace {

std::string op_label(const Schedule& s, OpId id) {
  const Rank r = s.rank_of(id);
  const OpKind k = s.kind(id);
  const Range t = s.target(id);
  std::string what;
  switch (k) {
  case OpKind::send:
    what = fmt::format("send {}[{}..{}) to {}", to_string(t.buffer), t.offset, t.offset + t.length,
                       s.peer(id));
    break;
  case OpKind::recv:
  case OpKind::recv_reduce:
    what = fmt::format("{} {}[{}..{}) from {}", to_string(k), to_string(t.buffer), t.offset,
                       t.offset + t.length, s.peer(id));
    break;
  case OpKind::reduce:
  case OpKind::copy: {
    const Range src = s.source(id);
    what =
        fmt::format("{} {}[{}..{}) -> {}[{}..{})", to_string(k), to_string(src.buffer), src.offset,
                    src.offset + src.length, to_string(t.buffer), t.offset, t.offset + t.length);
    break;
  }
  case OpKind::calc: what = fmt::format("calc {} s", s.calc_time(id).value); break;
  }
  if (r >= s.ranks()) {
    return fmt::format("agent {} ({}) l{} ({})", r, s.header().agents[r - s.ranks()],
                       id - s.rank_begin(r), what);
  }
  return fmt::format("rank {} l{} ({})", r, id - s.rank_begin(r), what);
}

/// "5 ranks", or "5 ranks and 2 agents".
std::string participants_text(const Schedule& s) {
  const auto agents = s.header().agents.size();
  if (agents == 0) {
    return fmt::format("{} ranks", s.ranks());
  }
  return fmt::format("{} ranks and {} agent{}", s.ranks(), agents, agents == 1 ? "" : "s");
}

bool is_message(OpKind k) {
  return k == OpKind::send || k == OpKind::recv || k == OpKind::recv_reduce;
}
bool is_receive(OpKind k) {
  return k == OpKind::recv || k == OpKind::recv_reduce;
}

std::uint64_t buffer_size(const ScheduleHeader& h, Buffer b) {
  return b == Buffer::data ? h.data_bytes : h.tmp_bytes;
}

void check_structure(const Schedule& s, VerifyReport& report) {
  const auto& h = s.header();
  for (Rank r = 0; r < s.participants(); ++r) {
    for (OpId id = s.rank_begin(r); id < s.rank_end(r); ++id) {
      const std::uint32_t local = id - s.rank_begin(r);
      const OpKind k = s.kind(id);
      auto check_range = [&](const Range& rg) {
        const std::uint64_t size = buffer_size(h, rg.buffer);
        if (rg.offset > size || rg.length > size - rg.offset) {
          report.add(fmt::format("{}: range ends at byte {} but buffer '{}' has {} bytes",
                                 op_label(s, id), rg.offset + rg.length, to_string(rg.buffer),
                                 size));
        }
      };
      check_range(s.target(id));
      if (is_message(k)) {
        if (s.peer(id) >= s.participants()) {
          report.add(fmt::format("{}: peer {} does not exist ({})", op_label(s, id), s.peer(id),
                                 participants_text(s)));
        } else if (s.peer(id) == r) {
          report.add(fmt::format("{}: a rank cannot message itself (use copy)", op_label(s, id)));
        }
      } else {
        const Range src = s.source(id);
        check_range(src);
        const Range dst = s.target(id);
        if (src.buffer == dst.buffer && src.offset < dst.offset + dst.length &&
            dst.offset < src.offset + src.length && src.length > 0) {
          report.add(fmt::format("{}: source and target overlap", op_label(s, id)));
        }
      }
      for (std::uint32_t d : s.deps(id)) {
        if (d == local) {
          report.add(fmt::format("dependency cycle: {} requires itself", op_label(s, id)));
        } else if (d > local) {
          const bool exists = d < s.rank_end(r) - s.rank_begin(r);
          report.add(fmt::format(
              "dependency cycle: {} requires l{}, {}", op_label(s, id), d,
              exists ? "which cannot issue before it (operations issue in program order)"
                     : "which does not exist"));
        }
      }
    }
  }
}

/// Within a rank, two operations that touch overlapping bytes, one of them writing, must be ordered
/// by dependencies (MPI's rule for reusing a buffer): the untimed execution below follows one
/// interleaving, engines may follow another. Dependencies are closed transitively with a bitset
/// per operation, so the work is quadratic in a rank's program; schedules whose sum over ranks of
/// (operations per rank)^2 exceeds kRaceCheckBudget are not checked (documented limit).
constexpr std::uint64_t kRaceCheckBudget = std::uint64_t{1} << 28;

struct Access {
  Range range;
  bool write = false;
};

std::size_t accesses(const Schedule& s, OpId id, Access (&out)[2]) {
  switch (s.kind(id)) {
  case OpKind::send: out[0] = {s.target(id), false}; return 1;
  case OpKind::recv:
  case OpKind::recv_reduce: out[0] = {s.target(id), true}; return 1;
  case OpKind::reduce:
  case OpKind::copy:
    out[0] = {s.source(id), false};
    out[1] = {s.target(id), true};
    return 2;
  case OpKind::calc: return 0;
  }
  return 0;
}

bool conflict(const Access& a, const Access& b) {
  return (a.write || b.write) && a.range.buffer == b.range.buffer && a.range.length > 0 &&
         b.range.length > 0 && a.range.offset < b.range.offset + b.range.length &&
         b.range.offset < a.range.offset + a.range.length;
}

void check_local_races(const Schedule& s, VerifyReport& report) {
  std::uint64_t work = 0;
  for (Rank r = 0; r < s.participants(); ++r) {
    const std::uint64_t m = s.rank_end(r) - s.rank_begin(r);
    work += m * m;
  }
  if (work > kRaceCheckBudget) {
    return;
  }
  for (Rank r = 0; r < s.participants(); ++r) {
    const OpId base = s.rank_begin(r);
    const std::size_t m = s.rank_end(r) - base;
    const std::size_t words = (m + 63) / 64;
    std::vector<std::uint64_t> before(m * words, 0); // ops that complete before op i issues
    std::vector<std::array<Access, 2>> acc(m);
    std::vector<std::uint8_t> nacc(m);
    for (std::size_t i = 0; i < m; ++i) {
      const auto id = base + static_cast<OpId>(i);
      std::uint64_t* row = before.data() + i * words;
      for (std::uint32_t d : s.deps(id)) {
        row[d / 64] |= std::uint64_t{1} << (d % 64);
        const std::uint64_t* drow = before.data() + std::size_t{d} * words;
        for (std::size_t w = 0; w < words; ++w) {
          row[w] |= drow[w];
        }
      }
      Access mine[2];
      nacc[i] = static_cast<std::uint8_t>(accesses(s, id, mine));
      acc[i] = {mine[0], mine[1]};
      for (std::size_t j = 0; j < i; ++j) {
        if ((row[j / 64] >> (j % 64) & 1U) != 0) {
          continue;
        }
        for (std::size_t a = 0; a < nacc[j]; ++a) {
          for (std::size_t b = 0; b < nacc[i]; ++b) {
            if (conflict(acc[j][a], acc[i][b])) {
              report.add(fmt::format("race: {} may touch bytes that {} still uses; no dependency "
                                     "orders them",
                                     op_label(s, id), op_label(s, base + static_cast<OpId>(j))));
              return;
            }
          }
        }
      }
    }
  }
}

/// Untimed execution shared by the deadlock check and the symbolic checker. Sends complete when
/// issued (eager), receives when issued and their message has been sent, local ops when issued.
/// `on_done(op)` sees every completion, each send before its receive. Returns the number of
/// operations that never completed.
template <class OnDone>
std::size_t execute_untimed(const Schedule& s, const Matching& m, OnDone&& on_done,
                            VerifyReport* report) {
  enum : std::uint8_t { kPending = 0, kWaiting = 1, kDone = 2 };
  const std::size_t n = s.op_count();
  std::vector<std::uint8_t> state(n, kPending);
  std::vector<std::uint8_t> sent(n, 0); // for receives: the matching send completed
  // A cursor per issue lane (a rank's stream, schedule-format.md): a lane stops at an operation
  // whose dependencies are not complete; the rank's other lanes go on.
  const Lanes lanes(s);
  std::vector<std::size_t> next(lanes.count());
  std::vector<std::size_t> work;
  work.reserve(lanes.count());
  for (std::size_t l = 0; l < lanes.count(); ++l) {
    next[l] = lanes.begin(l);
    work.push_back(l);
  }
  const auto wake_rank = [&](Rank r) {
    for (std::size_t l = lanes.first_lane(r); l < lanes.first_lane(r + 1); ++l) {
      work.push_back(l);
    }
  };
  std::size_t completed = 0;
  auto complete = [&](OpId id) {
    state[id] = kDone;
    ++completed;
    on_done(id);
  };
  while (!work.empty()) {
    const std::size_t l = work.back();
    work.pop_back();
    const Rank r = lanes.rank(l);
    const OpId base = s.rank_begin(r);
    bool progressed = false;
    while (next[l] < lanes.end(l)) {
      const OpId id = lanes.op_at(next[l]);
      bool ready = true;
      for (std::uint32_t d : s.deps(id)) {
        if (base + d >= id || state[base + d] != kDone) {
          ready = false;
          break;
        }
      }
      if (!ready) {
        break;
      }
      ++next[l];
      progressed = true;
      const OpKind k = s.kind(id);
      if (k == OpKind::send) {
        complete(id);
        const OpId recv = m.partner[id];
        if (recv != kNoMatch) {
          sent[recv] = 1;
          if (state[recv] == kWaiting) {
            complete(recv);
            wake_rank(s.rank_of(recv));
          }
        }
      } else if (is_receive(k)) {
        if (sent[id] != 0) {
          complete(id);
        } else {
          state[id] = kWaiting;
        }
      } else {
        complete(id);
      }
    }
    // What this lane completed may be what another lane of the rank waits for.
    if (progressed && lanes.first_lane(r + 1) - lanes.first_lane(r) > 1) {
      for (std::size_t o = lanes.first_lane(r); o < lanes.first_lane(r + 1); ++o) {
        if (o != l && next[o] < lanes.end(o)) {
          work.push_back(o);
        }
      }
    }
  }
  const std::size_t stuck = n - completed;
  if (stuck > 0 && report != nullptr) {
    std::string examples;
    int shown = 0;
    for (Rank r = 0; r < s.participants() && shown < 3; ++r) {
      for (OpId id = s.rank_begin(r); id < s.rank_end(r) && shown < 3; ++id) {
        if (state[id] == kWaiting) {
          examples += fmt::format("; {} waits for a message that is never sent", op_label(s, id));
          ++shown;
          break;
        }
        if (state[id] == kPending) {
          examples += fmt::format("; {} never issues", op_label(s, id));
          ++shown;
          break;
        }
      }
    }
    report->add(fmt::format("deadlock: {} of {} operations never complete{}", stuck, n, examples));
  }
  return stuck;
}

// ---- symbolic values ---------------------------------------------------------------------------

/// What a byte holds: a multiset of contributing ranks (two random-weight fingerprints and a count)
/// and which element of the origin buffers it is (origin index = position + delta).
struct Value {
  bool defined = false;
  std::int64_t delta = 0;
  std::uint64_t fp1 = 0;
  std::uint64_t fp2 = 0;
  std::uint32_t count = 0;
  bool operator==(const Value&) const = default;
};

struct Segment {
  std::uint64_t begin;
  std::uint64_t end;
  Value value;
};

/// A buffer as sorted, non-overlapping segments covering [0, size).
class SymbolicBuffer {
public:
  explicit SymbolicBuffer(std::uint64_t size) {
    if (size > 0) {
      segs_.push_back({0, size, Value{}});
    }
  }

  [[nodiscard]] std::vector<Segment> read(std::uint64_t begin, std::uint64_t end) const {
    std::vector<Segment> out;
    for (auto it = find(begin); it != segs_.end() && it->begin < end; ++it) {
      out.push_back({std::max(it->begin, begin), std::min(it->end, end), it->value});
    }
    return out;
  }

  void assign(std::uint64_t begin, std::uint64_t end, const std::vector<Segment>& pieces) {
    if (begin >= end) {
      return;
    }
    auto first = find(begin);
    auto last = first;
    while (last != segs_.end() && last->begin < end) {
      ++last;
    }
    std::vector<Segment> repl;
    if (first->begin < begin) {
      repl.push_back({first->begin, begin, first->value});
    }
    for (const auto& p : pieces) {
      if (!repl.empty() && repl.back().end == p.begin && repl.back().value == p.value) {
        repl.back().end = p.end;
      } else {
        repl.push_back(p);
      }
    }
    const auto& tail = *(last - 1);
    if (tail.end > end) {
      repl.push_back({end, tail.end, tail.value});
    }
    const auto pos = first - segs_.begin();
    segs_.erase(first, last);
    segs_.insert(segs_.begin() + pos, repl.begin(), repl.end());
  }

  [[nodiscard]] const std::vector<Segment>& segments() const { return segs_; }

private:
  [[nodiscard]] std::vector<Segment>::const_iterator find(std::uint64_t pos) const {
    return std::upper_bound(segs_.begin(), segs_.end(), pos,
                            [](std::uint64_t p, const Segment& sg) { return p < sg.end; });
  }
  std::vector<Segment>::iterator find(std::uint64_t pos) {
    return std::upper_bound(segs_.begin(), segs_.end(), pos,
                            [](std::uint64_t p, const Segment& sg) { return p < sg.end; });
  }
  std::vector<Segment> segs_;
};

class SymbolicState {
public:
  SymbolicState(const Schedule& s, std::uint64_t seed)
      : s_(s), h_(s.header()), layout_(s.header()) {
    std::mt19937_64 gen(seed);
    w1_.resize(h_.ranks);
    w2_.resize(h_.ranks);
    for (Rank q = 0; q < h_.ranks; ++q) {
      w1_[q] = gen();
      w2_[q] = gen();
      all1_ += w1_[q];
      all2_ += w2_[q];
    }
    // Agents (in-network switches) have buffers too; they start undefined and end unchecked.
    for (Rank r = 0; r < s.participants(); ++r) {
      data_.emplace_back(h_.data_bytes);
      tmp_.emplace_back(h_.tmp_bytes);
    }
    initialise();
  }

  /// Report every message or local operation that reads bytes nothing has written.
  void report_undefined_reads() { undefined_reads_ = true; }

  void run(const Matching& m, VerifyReport& report) {
    messages_.assign(s_.op_count(), {});
    report_ = &report;
    execute_untimed(
        s_, m, [&](OpId id) { apply(id, m); }, nullptr);
  }

  void check_postcondition(VerifyReport& report) const;

private:
  [[nodiscard]] Value contribution(Rank q, std::int64_t delta) const {
    return Value{true, delta, w1_[q], w2_[q], 1};
  }
  [[nodiscard]] Value everyone(std::int64_t delta) const {
    return Value{true, delta, all1_, all2_, h_.ranks};
  }
  SymbolicBuffer& buffer(Rank r, Buffer b) { return b == Buffer::data ? data_[r] : tmp_[r]; }

  void set(Rank r, std::uint64_t begin, std::uint64_t end, Value v) {
    data_[r].assign(begin, end, {Segment{begin, end, v}});
  }

  void initialise() {
    const std::uint64_t n = h_.bytes.value;
    const Rank p = h_.ranks;
    for (Rank r = 0; r < p; ++r) {
      switch (h_.collective) {
      case CollectiveKind::allreduce:
      case CollectiveKind::reduce:
      case CollectiveKind::reduce_scatter: set(r, 0, n, contribution(r, 0)); break;
      case CollectiveKind::bcast:
      case CollectiveKind::scatter:
        if (r == h_.root) {
          set(r, 0, n, contribution(r, 0));
        }
        break;
      case CollectiveKind::allgather:
      case CollectiveKind::gather: {
        const auto [b, len] = layout_.block(r);
        set(r, b, b + len, contribution(r, 0));
        break;
      }
      case CollectiveKind::alltoall: set(r, 0, n, contribution(r, 0)); break;
      case CollectiveKind::barrier: break;
      }
    }
  }

  /// Moves `pieces` (read at source offset `from`) to target offset `to`: the origin index of
  /// each byte is preserved, so delta grows by (from - to).
  static std::vector<Segment> shifted(std::vector<Segment> pieces, std::uint64_t from,
                                      std::uint64_t to) {
    const auto shift = static_cast<std::int64_t>(from) - static_cast<std::int64_t>(to);
    for (auto& p : pieces) {
      p.begin = p.begin - from + to;
      p.end = p.end - from + to;
      if (p.value.defined) {
        p.value.delta += shift;
      }
    }
    return pieces;
  }

  void write(OpId id, Rank r, const Range& target, std::vector<Segment> incoming, bool combine) {
    SymbolicBuffer& buf = buffer(r, target.buffer);
    const std::uint64_t end = target.offset + target.length;
    if (!combine) {
      buf.assign(target.offset, end, std::move(incoming));
      return;
    }
    const auto old = buf.read(target.offset, end);
    std::vector<Segment> out;
    std::size_t i = 0;
    std::size_t j = 0;
    std::uint64_t pos = target.offset;
    bool reported = false;
    while (pos < end && i < old.size() && j < incoming.size()) {
      const std::uint64_t stop = std::min(old[i].end, incoming[j].end);
      const Value& a = old[i].value;
      const Value& b = incoming[j].value;
      Value v;
      if (!a.defined || !b.defined) {
        if (!reported) {
          report_->add(fmt::format("{}: reduces bytes [{}..{}) that hold no data yet ({} operand)",
                                   op_label(s_, id), pos, stop,
                                   !a.defined ? "target" : "incoming"));
          reported = true;
        }
      } else if (a.delta != b.delta) {
        if (!reported) {
          report_->add(fmt::format(
              "{}: combines misaligned elements at bytes [{}..{}) (element {} of one operand with "
              "element {} of the other)",
              op_label(s_, id), pos, stop, static_cast<std::int64_t>(pos) + a.delta,
              static_cast<std::int64_t>(pos) + b.delta));
          reported = true;
        }
      } else {
        v = Value{true, a.delta, a.fp1 + b.fp1, a.fp2 + b.fp2, a.count + b.count};
      }
      out.push_back({pos, stop, v});
      pos = stop;
      if (old[i].end == stop) {
        ++i;
      }
      if (incoming[j].end == stop) {
        ++j;
      }
    }
    buf.assign(target.offset, end, std::move(out));
  }

  void apply(OpId id, const Matching& m) {
    const Rank r = s_.rank_of(id);
    const OpKind k = s_.kind(id);
    const Range t = s_.target(id);
    switch (k) {
    case OpKind::send: {
      const OpId recv = m.partner[id];
      if (recv != kNoMatch) {
        messages_[recv] = buffer(r, t.buffer).read(t.offset, t.offset + t.length);
        check_defined(id, t, messages_[recv]);
        // Normalise to offset 0 so the receiver can place it anywhere.
        messages_[recv] = shifted(std::move(messages_[recv]), t.offset, 0);
      }
      break;
    }
    case OpKind::recv:
    case OpKind::recv_reduce: {
      auto pieces = shifted(std::move(messages_[id]), 0, t.offset);
      messages_[id].clear();
      write(id, r, t, std::move(pieces), k == OpKind::recv_reduce);
      break;
    }
    case OpKind::reduce:
    case OpKind::copy: {
      const Range src = s_.source(id);
      auto read = buffer(r, src.buffer).read(src.offset, src.offset + src.length);
      check_defined(id, src, read);
      auto pieces = shifted(std::move(read), src.offset, t.offset);
      write(id, r, t, std::move(pieces), k == OpKind::reduce);
      break;
    }
    case OpKind::calc: break;
    }
  }

  /// With report_undefined_reads(): the first undefined piece of what `id` reads from `from`.
  void check_defined(OpId id, const Range& from, const std::vector<Segment>& pieces) {
    if (!undefined_reads_ || s_.rank_of(id) >= h_.ranks) {
      return; // agents receive before they send, by construction of the generators
    }
    for (const Segment& seg : pieces) {
      if (!seg.value.defined) {
        report_->add(fmt::format("{}: reads {}[{}..{}) before anything wrote it", op_label(s_, id),
                                 to_string(from.buffer), seg.begin, seg.end));
        return;
      }
    }
  }

  [[nodiscard]] std::string describe(const Value& v) const {
    if (!v.defined) {
      return "no data";
    }
    if (v.count == 1) {
      for (Rank q = 0; q < h_.ranks; ++q) {
        if (w1_[q] == v.fp1 && w2_[q] == v.fp2) {
          return fmt::format("rank {}'s contribution", q);
        }
      }
    }
    if (v.count == h_.ranks && v.fp1 == all1_ && v.fp2 == all2_) {
      return "the reduction of all ranks";
    }
    return fmt::format("a reduction of {} contributions{}", v.count,
                       v.count == h_.ranks ? " (some counted twice, some missing)" : "");
  }

  /// Checks that bytes [begin, end) of rank r's data hold `expected`, whose delta is relative.
  void expect(VerifyReport& report, Rank r, std::uint64_t begin, std::uint64_t end,
              const Value& expected, std::string_view what) const {
    if (begin >= end) {
      return;
    }
    for (const auto& seg : data_[r].read(begin, end)) {
      if (seg.value == expected) {
        continue;
      }
      std::string why;
      if (seg.value.defined && expected.defined && seg.value.delta != expected.delta &&
          seg.value.fp1 == expected.fp1 && seg.value.fp2 == expected.fp2) {
        why = fmt::format("holds element {} where element {} belongs",
                          static_cast<std::int64_t>(seg.begin) + seg.value.delta,
                          static_cast<std::int64_t>(seg.begin) + expected.delta);
      } else {
        why = fmt::format("holds {}", describe(seg.value));
      }
      report.add(fmt::format("{}: rank {} data[{}..{}) {}, expected {}", to_string(h_.collective),
                             r, seg.begin, seg.end, why, what));
      return;
    }
  }

  const Schedule& s_;
  const ScheduleHeader& h_;
  BlockLayout layout_;
  std::vector<std::uint64_t> w1_;
  std::vector<std::uint64_t> w2_;
  std::uint64_t all1_ = 0;
  std::uint64_t all2_ = 0;
  std::vector<SymbolicBuffer> data_;
  std::vector<SymbolicBuffer> tmp_;
  std::vector<std::vector<Segment>> messages_; // indexed by receive op
  VerifyReport* report_ = nullptr;
  bool undefined_reads_ = false;
};

void SymbolicState::check_postcondition(VerifyReport& report) const {
  const std::uint64_t n = h_.bytes.value;
  const Rank p = h_.ranks;
  const std::string all = "the reduction of all ranks";
  for (Rank r = 0; r < p; ++r) {
    switch (h_.collective) {
    case CollectiveKind::allreduce: expect(report, r, 0, n, everyone(0), all); break;
    case CollectiveKind::reduce:
      if (r == h_.root) {
        expect(report, r, 0, n, everyone(0), all);
      }
      break;
    case CollectiveKind::bcast:
      expect(report, r, 0, n, contribution(h_.root, 0), fmt::format("rank {}'s data", h_.root));
      break;
    case CollectiveKind::allgather:
      for (Rank q = 0; q < p; ++q) {
        const auto [b, len] = layout_.block(q);
        expect(report, r, b, b + len, contribution(q, 0), fmt::format("rank {}'s block", q));
      }
      break;
    case CollectiveKind::gather:
      if (r == h_.root) {
        for (Rank q = 0; q < p; ++q) {
          const auto [b, len] = layout_.block(q);
          expect(report, r, b, b + len, contribution(q, 0), fmt::format("rank {}'s block", q));
        }
      }
      break;
    case CollectiveKind::reduce_scatter: {
      const auto [b, len] = layout_.block(r);
      expect(report, r, b, b + len, everyone(0), all);
      break;
    }
    case CollectiveKind::scatter: {
      const auto [b, len] = layout_.block(r);
      expect(report, r, b, b + len, contribution(h_.root, 0),
             fmt::format("block {} of rank {}'s data", r, h_.root));
      break;
    }
    case CollectiveKind::alltoall: {
      // Input in data[0, n), output from data[n]; the output holds, in source order, what each
      // rank q sent to r (uniform: block r of every rank, each n / p bytes).
      if (!layout_.varying() && n % p != 0) {
        report.add(fmt::format("alltoall: {} bytes is not a multiple of {} ranks", n, p));
        return;
      }
      for (Rank q = 0; q < p; ++q) {
        const std::uint64_t pos = layout_.recv_offset(q, r);
        const std::uint64_t len = layout_.count(q, r);
        const auto delta =
            static_cast<std::int64_t>(layout_.send_offset(q, r)) - static_cast<std::int64_t>(pos);
        expect(report, r, pos, pos + len, contribution(q, delta),
               fmt::format("block {} of rank {}", r, q));
      }
      break;
    }
    case CollectiveKind::barrier: break; // checked on the happens-before graph instead
    }
  }
}

/// Barrier: for every pair (a, b), something of a happens before b's last completion. Knowledge
/// (which ranks have been heard from) flows along dependencies and messages only.
void check_barrier(const Schedule& s, const Matching& m, VerifyReport& report) {
  const Rank p = s.ranks();
  if (p <= 1) {
    return;
  }
  const std::size_t words = (p + 63) / 64;
  if (s.op_count() * words > (std::size_t{1} << 25)) {
    report.add(
        fmt::format("barrier: too large to check ({} ranks, {} operations)", p, s.op_count()));
    return;
  }
  std::vector<std::uint64_t> know(s.op_count() * words, 0);
  auto row = [&](OpId id) { return know.data() + static_cast<std::size_t>(id) * words; };
  execute_untimed(
      s, m,
      [&](OpId id) {
        const Rank r = s.rank_of(id);
        std::uint64_t* k = row(id);
        if (r < p) { // agents relay knowledge but are not barrier members
          k[r / 64] |= std::uint64_t{1} << (r % 64);
        }
        for (std::uint32_t d : s.deps(id)) {
          const std::uint64_t* kd = row(s.rank_begin(r) + d);
          for (std::size_t w = 0; w < words; ++w) {
            k[w] |= kd[w];
          }
        }
        if (is_receive(s.kind(id)) && m.partner[id] != kNoMatch) {
          const std::uint64_t* ks = row(m.partner[id]);
          for (std::size_t w = 0; w < words; ++w) {
            k[w] |= ks[w];
          }
        }
      },
      nullptr);
  for (Rank b = 0; b < p; ++b) {
    std::vector<std::uint64_t> exit(words, 0);
    exit[b / 64] |= std::uint64_t{1} << (b % 64);
    for (OpId id = s.rank_begin(b); id < s.rank_end(b); ++id) {
      for (std::size_t w = 0; w < words; ++w) {
        exit[w] |= row(id)[w];
      }
    }
    for (Rank a = 0; a < p; ++a) {
      if ((exit[a / 64] >> (a % 64) & 1U) == 0) {
        report.add(fmt::format("barrier: rank {} can leave before rank {} has entered", b, a));
        break;
      }
    }
  }
}

} // namespace

Matching match_messages(const Schedule& s, VerifyReport* report) {
  Matching m;
  m.partner.assign(s.op_count(), kNoMatch);
  m.unmatched = match_messages(
      s,
      [&](OpId send, OpId recv) {
        m.partner[send] = recv;
        m.partner[recv] = send;
      },
      report);
  return m;
}

namespace {

/// Per-peer counters for one rank's program: an open-addressing table reused rank after rank, so
/// that a rank with a few peers among a million touches a few cache lines, not a dense array.
class PeerCounters {
public:
  /// The counter of `peer`, created at zero.
  std::uint64_t& operator[](Rank peer) {
    if ((used_.size() + 1) * 2 > keys_.size()) {
      grow();
    }
    std::size_t i = hash(peer);
    while (keys_[i] != kEmpty && keys_[i] != peer) {
      i = (i + 1) & (keys_.size() - 1);
    }
    if (keys_[i] == kEmpty) {
      keys_[i] = peer;
      values_[i] = 0;
      used_.push_back(static_cast<std::uint32_t>(i));
    }
    return values_[i];
  }
  /// The peers seen since the last clear, in first-seen order.
  template <class F>
  void for_each(F&& f) {
    for (std::uint32_t i : used_) {
      f(keys_[i], values_[i]);
    }
  }
  void clear() {
    for (std::uint32_t i : used_) {
      keys_[i] = kEmpty;
    }
    used_.clear();
  }

private:
  static constexpr Rank kEmpty = 0xffffffffU;
  [[nodiscard]] std::size_t hash(Rank r) const {
    return (static_cast<std::size_t>(r) * 0x9e3779b97f4a7c15ULL >> 20) & (keys_.size() - 1);
  }
  void grow() {
    std::vector<std::pair<Rank, std::uint64_t>> old;
    for_each([&](Rank k, std::uint64_t v) { old.emplace_back(k, v); });
    const std::size_t cap = std::max<std::size_t>(64, keys_.size() * 2);
    keys_.assign(cap, kEmpty);
    values_.assign(cap, 0);
    used_.clear();
    for (const auto& [k, v] : old) {
      (*this)[k] = v;
    }
  }
  std::vector<Rank> keys_;
  std::vector<std::uint64_t> values_;
  std::vector<std::uint32_t> used_;
};

} // namespace

std::size_t match_messages(const Schedule& s, const std::function<void(OpId, OpId)>& sink,
                           VerifyReport* report) {
  std::size_t unmatched = 0;
  const Rank p = s.participants();
  if (p >= (Rank{1} << 24) - 1) {
    throw UsageError(fmt::format("{} participants: matching supports fewer than 2^24", p));
  }
  // A connection: the source rank and the message's tag, packed into one key (sources < 2^24,
  // tags < 256) whose order is the source's, then the tag's.
  const auto connection = [&s](Rank source, OpId id) { return source << 8 | s.tag(id); };
  // Per receiving rank b: its receives bucketed by connection (a stable counting sort, O(ops)),
  // and a small table of (connection, first, count) sorted by connection. The k-th send from a to
  // b on tag t then matches entry first + k of b's bucket for (a, t). Sends look their bucket up
  // by binary search.
  struct Group {
    Rank key; // the connection
    std::uint32_t count;
    std::uint64_t first;       // index into recv_sorted
    std::uint32_t matched = 0; // sends matched so far
  };
  std::vector<OpId> recv_sorted;
  std::vector<Group> groups;
  std::vector<std::uint64_t> group_begin(static_cast<std::size_t>(p) + 1, 0);
  PeerCounters counters;
  std::vector<std::pair<Rank, std::uint64_t>> sources;
  for (Rank b = 0; b < p; ++b) {
    group_begin[b] = groups.size();
    for (OpId id = s.rank_begin(b); id < s.rank_end(b); ++id) {
      if (is_receive(s.kind(id)) && s.peer(id) < p) {
        ++counters[connection(s.peer(id), id)];
      }
    }
    sources.clear();
    counters.for_each([&](Rank a, std::uint64_t n) { sources.emplace_back(a, n); });
    std::sort(sources.begin(), sources.end());
    std::uint64_t pos = recv_sorted.size();
    for (const auto& [a, n] : sources) {
      groups.push_back({a, static_cast<std::uint32_t>(n), pos, 0});
      counters[a] = pos; // from now on: the next free slot of a's bucket
      pos += n;
    }
    recv_sorted.resize(pos);
    for (OpId id = s.rank_begin(b); id < s.rank_end(b); ++id) {
      if (is_receive(s.kind(id)) && s.peer(id) < p) {
        recv_sorted[counters[connection(s.peer(id), id)]++] = id;
      }
    }
    counters.clear();
  }
  group_begin[p] = groups.size();

  for (Rank a = 0; a < p; ++a) {
    for (OpId id = s.rank_begin(a); id < s.rank_end(a); ++id) {
      if (s.kind(id) != OpKind::send) {
        continue;
      }
      const Rank b = s.peer(id);
      if (b >= p || b == a) {
        continue; // reported by the structural check
      }
      const Rank key = connection(a, id);
      const std::uint64_t k = counters[connection(b, id)]++; // sends from a to b on this tag so far
      const auto lo = groups.begin() + static_cast<std::ptrdiff_t>(group_begin[b]);
      const auto hi = groups.begin() + static_cast<std::ptrdiff_t>(group_begin[b + 1]);
      const auto g =
          std::lower_bound(lo, hi, key, [](const Group& x, Rank v) { return x.key < v; });
      if (g == hi || g->key != key || k >= g->count) {
        ++unmatched;
        if (report != nullptr) {
          report->add(fmt::format("unmatched send: {} has no matching receive on rank {}",
                                  op_label(s, id), b));
        }
        continue;
      }
      ++g->matched;
      const OpId recv = recv_sorted[g->first + k];
      sink(id, recv);
      // Engines time only validated schedules; the length check belongs to validate().
      if (report != nullptr && s.length(id) != s.length(recv)) {
        report->add(fmt::format("length mismatch: {} sends {} bytes but {} receives {}",
                                op_label(s, id), s.length(id), op_label(s, recv), s.length(recv)));
      }
    }
    counters.clear();
  }
  // Receives beyond the number of sends on their channel are unmatched.
  for (Rank b = 0; b < p; ++b) {
    for (auto g = group_begin[b]; g < group_begin[b + 1]; ++g) {
      const Group& grp = groups[g];
      for (std::uint32_t k = grp.matched; k < grp.count; ++k) {
        ++unmatched;
        if (report != nullptr) {
          report->add(fmt::format("unmatched receive: {} has no matching send",
                                  op_label(s, recv_sorted[grp.first + k])));
        }
      }
    }
  }
  return unmatched;
}

VerifyReport validate(const Schedule& s) {
  VerifyReport report;
  const auto& h = s.header();
  if (h.ranks == 0) {
    report.add("a schedule needs at least one rank");
    return report;
  }
  if (h.root >= h.ranks) {
    report.add(fmt::format("root {} does not exist ({} ranks)", h.root, h.ranks));
  }
  for (std::size_t i = 0; i < h.agents.size(); ++i) {
    if (h.agents[i].empty()) {
      report.add(fmt::format("agent {} has no device name", h.ranks + i));
    }
  }
  if (!(h.protocol.efficiency > 0.0 && h.protocol.efficiency <= 1.0)) {
    report.add(fmt::format("protocol efficiency {} is not in (0, 1]", h.protocol.efficiency));
  }
  check_structure(s, report);
  if (!report.ok()) {
    return report;
  }
  const Matching m = match_messages(s, &report);
  if (!report.ok()) {
    return report;
  }
  execute_untimed(
      s, m, [](OpId) {}, &report);
  if (report.ok()) {
    check_local_races(s, report);
  }
  return report;
}

VerifyReport check_semantics(const Schedule& s, std::uint64_t seed) {
  SemanticsOptions options;
  options.seed = seed;
  return check_semantics(s, options);
}

VerifyReport check_semantics(const Schedule& s, const SemanticsOptions& options) {
  VerifyReport report = validate(s);
  if (!report.ok()) {
    return report;
  }
  const Matching m = match_messages(s);
  if (s.header().collective == CollectiveKind::barrier) {
    check_barrier(s, m, report);
    return report;
  }
  const auto& h = s.header();
  if (const std::string why = counts_problem(h.collective, h.ranks, h.bytes.value, h.counts);
      !why.empty()) {
    report.add(fmt::format("{}: {}", to_string(h.collective), why));
    return report;
  }
  const std::uint64_t needed = BlockLayout(h).data_bytes();
  if (h.data_bytes < needed) {
    report.add(fmt::format("{}: data buffer has {} bytes but the collective needs {}",
                           to_string(h.collective), h.data_bytes, needed));
    return report;
  }
  SymbolicState state(s, options.seed);
  if (options.undefined_reads) {
    state.report_undefined_reads();
  }
  state.run(m, report);
  if (options.postcondition) {
    state.check_postcondition(report);
  }
  return report;
}

void require_correct(const Schedule& s) {
  const VerifyReport r = check_semantics(s);
  if (!r.ok()) {
    throw ScheduleError(r.summary());
  }
}

} // namespace collsim::core
