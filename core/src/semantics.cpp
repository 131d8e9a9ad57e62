// The symbolic checker (verify.hpp, check_semantics): every byte's contributions and origin,
// executed untimed, then the collective's postcondition (algorithms.md section 5.2).

#include "collsim/core/verify.hpp"

#include "verify_support.hpp"

#include "collsim/core/errors.hpp"
#include "collsim/core/layout.hpp"

#include <algorithm>
#include <array>
#include <fmt/format.h>
#include <random>

namespace collsim::core {

using verify_detail::execute_untimed;
using verify_detail::is_receive;
using verify_detail::op_label;
using verify_detail::participants_text;

namespace {

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

VerifyReport check_semantics(const Schedule& s, std::uint64_t seed) {
  SemanticsOptions options;
  options.seed = seed;
  return check_semantics(s, options);
}

VerifyReport check_semantics(const Schedule& s, const SemanticsOptions& options) {
  if (s.header().collapse.active()) {
    // The checker runs the full schedule; tests/analysis/collapse_test.cpp checks that a collapsed
    // one matches it message for message.
    throw InternalError("check_semantics on a collapsed schedule");
  }
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

} // namespace collsim::core
