// steady_state_run (steady_state.hpp): a long chunk pipeline timed from a run of fewer loops.

#include "collsim/analysis/steady_state.hpp"

#include "collsim/core/verify.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <vector>

namespace collsim::analysis {
namespace {

using core::OpId;
using core::Rank;

/// The periods tried, in loops (loggp's NVLS-tree on two nodes repeats every 32 loops, SimGrid's
/// every 8: docs/benchmarks.md). A run is sized so that the request's loops beyond it are a
/// multiple of each (kRunAlign).
constexpr std::array<std::uint32_t, 6> kPeriods{1, 2, 4, 8, 16, 32};
constexpr std::uint64_t kRunAlign = 32;
/// Loops added to every estimated reach: a loop's operations are counted from the start of each
/// program, so the estimate may be a loop short at either end.
constexpr std::uint64_t kMargin = 2;
/// Two times are the same within this share of the run's time.
constexpr double kTolerance = 1e-9;

/// Operations, sends and bytes sent of a schedule, in all and per participant.
struct Counts {
  std::vector<std::uint64_t> ops; // per participant
  std::uint64_t sends = 0;
  std::uint64_t bytes = 0;
};

Counts count(const core::Schedule& s) {
  Counts c;
  c.ops.resize(s.participants());
  for (Rank r = 0; r < s.participants(); ++r) {
    c.ops[r] = s.rank_end(r) - s.rank_begin(r);
    for (OpId id = s.rank_begin(r); id < s.rank_end(r); ++id) {
      if (s.kind(id) == core::OpKind::send) {
        ++c.sends;
        c.bytes += s.length(id);
      }
    }
  }
  return c;
}

/// What one loop adds to the schedule.
struct Loop {
  std::vector<std::uint64_t> ops; // per participant, > 0 for every one that has operations
  std::uint64_t ops_total = 0;
  std::uint64_t sends = 0;
  std::uint64_t bytes = 0;
};

/// One loop's operations from schedules of k, k + 1 and k + 2 loops, where both steps add the
/// same to every participant; nullopt where they do not, or a participant with operations gets
/// none per loop (its operations would not move with the loops).
std::optional<Loop> loop_of(const Counts& a, const Counts& b, const Counts& c) {
  if (a.ops.size() != b.ops.size() || b.ops.size() != c.ops.size() ||
      b.sends - a.sends != c.sends - b.sends || b.bytes - a.bytes != c.bytes - b.bytes) {
    return std::nullopt;
  }
  Loop out;
  out.sends = b.sends - a.sends;
  out.bytes = b.bytes - a.bytes;
  for (std::size_t r = 0; r < a.ops.size(); ++r) {
    if (b.ops[r] < a.ops[r] || c.ops[r] - b.ops[r] != b.ops[r] - a.ops[r] ||
        (b.ops[r] == a.ops[r] && a.ops[r] != 0)) {
      return std::nullopt;
    }
    out.ops.push_back(b.ops[r] - a.ops[r]);
    out.ops_total += out.ops.back();
  }
  return out;
}

/// The loop of operation `id` of participant r, counted from the start of its program.
std::uint64_t loop_index(const core::Schedule& s, const Loop& loop, Rank r, OpId id) {
  return loop.ops[r] == 0 ? 0 : (id - s.rank_begin(r)) / loop.ops[r];
}

/// The most loops between an operation and one it waits for: a dependency, the previous
/// operation of its program, or the other end of its message.
std::uint64_t reach(const core::Schedule& s, const Loop& loop) {
  std::uint64_t most = 1;
  for (Rank r = 0; r < s.participants(); ++r) {
    const OpId base = s.rank_begin(r);
    for (OpId id = base; id < s.rank_end(r); ++id) {
      const std::uint64_t at = loop_index(s, loop, r, id);
      for (const std::uint32_t d : s.deps(id)) {
        most = std::max(most, at - std::min(at, loop_index(s, loop, r, base + d)));
      }
    }
  }
  (void)core::match_messages(s, [&](OpId send, OpId recv) {
    const std::uint64_t a = loop_index(s, loop, s.rank_of(send), send);
    const std::uint64_t b = loop_index(s, loop, s.rank_of(recv), recv);
    most = std::max(most, a > b ? a - b : b - a);
  });
  return most + kMargin;
}

/// A steady state found in a run: its period in loops, the shift per period, and the first loop of
/// the window that showed it.
struct Period {
  std::uint32_t loops = 0;
  double shift = 0.0;
  std::uint64_t window = 0;
};

/// The period and shift of a run of `run_loops` loops whose dependencies reach `span` loops:
/// every operation in the window of loops [w, w + span + P) starts and ends the same time later
/// P loops on, the window as late as the drain allows (its last span loops): w = run_loops -
/// 2 span - 2 P.
std::optional<Period> find_period(const core::Schedule& s, const Loop& loop,
                                  const core::RunResult& run, std::uint64_t run_loops,
                                  std::uint64_t span) {
  std::vector<double> start(s.op_count(), -1.0);
  std::vector<double> end(s.op_count(), -1.0);
  for (const core::OpTiming& t : run.timeline) {
    start[t.op] = t.start.value;
    end[t.op] = t.end.value;
  }
  const double tolerance = kTolerance * run.time.value;
  for (const std::uint32_t period : kPeriods) {
    std::optional<double> shift;
    bool periodic = true;
    for (Rank r = 0; r < s.participants() && periodic; ++r) {
      const std::uint64_t per = loop.ops[r];
      if (per == 0) {
        continue;
      }
      if (run_loops < 3 * span + 2 * period) {
        periodic = false;
        break;
      }
      // Inside the rank's program (checked below), so the ids fit an OpId.
      const std::uint64_t w = run_loops - 2 * span - 2 * period;
      const std::uint64_t first = s.rank_begin(r) + w * per;
      const std::uint64_t last = first + (span + period) * per;
      if (last + period * per > s.rank_end(r)) {
        periodic = false;
        break;
      }
      for (OpId id = static_cast<OpId>(first); id < last; ++id) {
        const OpId later = static_cast<OpId>(id + period * per);
        if (end[id] < 0.0 || end[later] < 0.0) {
          periodic = false;
          break;
        }
        const double d = end[later] - end[id];
        if (!shift) {
          shift = d;
        }
        // A start may also stay where it was: a receive posted at the start of the run, before
        // anything it waits for (its end, when the message is in, moves with the rest).
        const double moved = start[later] - start[id];
        if (std::abs(d - *shift) > tolerance ||
            (std::abs(moved - *shift) > tolerance && moved != 0.0)) {
          periodic = false;
          break;
        }
      }
    }
    if (periodic && shift && *shift > 0.0) {
      return Period{period, *shift, run_loops - 2 * span - 2 * period};
    }
  }
  return std::nullopt;
}

/// The links' loads of the full run: the run's, plus for every period of loops the full run has
/// in addition the bytes and messages of one period's messages (those sent in the window's first
/// `period` loops) and the busy time of one period's stretch of time in the steady state (the
/// messages' time on the wire clipped to [t0, t0 + shift)). nullopt where two consecutive
/// stretches of time are not equally busy on some link.
std::optional<std::vector<core::LinkLoad>>
extrapolate_loads(const core::Schedule& s, const core::Topology& topology, const Loop& loop,
                  const core::RunResult& run, const Period& period, std::uint64_t periods) {
  std::vector<core::MessageTiming> one;    // the messages of one period of loops
  std::vector<core::MessageTiming> first;  // every message clipped to [t0, t0 + shift)
  std::vector<core::MessageTiming> second; // ... and to the next stretch
  // t0: when participant 0's first operation of the window starts (participant 0 has
  // operations in every loop: loop_of).
  double t0 = 0.0;
  for (const core::OpTiming& t : run.timeline) {
    if (t.op == s.rank_begin(0) + period.window * loop.ops[0]) {
      t0 = t.start.value;
      break;
    }
  }
  const double d = period.shift;
  const auto clip = [](core::MessageTiming m, double from, double to,
                       std::vector<core::MessageTiming>& out) {
    const double a = std::max(m.start.value, from);
    const double b = std::min(m.end.value, to);
    if (b > a) {
      m.start = core::Seconds{a};
      m.end = core::Seconds{b};
      out.push_back(m);
    }
  };
  for (const core::MessageTiming& m : run.message_timeline) {
    const Rank r = s.rank_of(m.send);
    const std::uint64_t l = loop_index(s, loop, r, m.send);
    if (l >= period.window && l < period.window + period.loops) {
      one.push_back(m);
    }
    clip(m, t0, t0 + d, first);
    clip(m, t0 + d, t0 + 2 * d, second);
  }
  const std::vector<core::LinkLoad> per = core::link_loads(s, topology, one);
  const std::vector<core::LinkLoad> a = core::link_loads(s, topology, first);
  const std::vector<core::LinkLoad> b = core::link_loads(s, topology, second);
  const double tolerance = kTolerance * run.time.value;
  std::map<core::LinkId, core::LinkLoad> out;
  for (const core::LinkLoad& l : run.link_loads) {
    out[l.link] = l;
  }
  std::map<core::LinkId, double> busy_a;
  std::map<core::LinkId, double> busy_b;
  for (const core::LinkLoad& l : a) {
    busy_a[l.link] = l.busy.value;
  }
  for (const core::LinkLoad& l : b) {
    busy_b[l.link] = l.busy.value;
  }
  for (const auto& [link, busy] : busy_a) {
    if (std::abs(busy - busy_b[link]) > tolerance) {
      return std::nullopt;
    }
  }
  for (const auto& [link, busy] : busy_b) {
    if (std::abs(busy - busy_a[link]) > tolerance) {
      return std::nullopt;
    }
  }
  for (const core::LinkLoad& l : per) {
    core::LinkLoad& o = out[l.link];
    o.link = l.link;
    o.bytes += periods * l.bytes;
    o.messages += periods * l.messages;
  }
  for (const auto& [link, busy] : busy_a) {
    core::LinkLoad& o = out[link];
    o.link = link;
    o.busy = core::Seconds{o.busy.value + static_cast<double>(periods) * busy};
  }
  std::vector<core::LinkLoad> loads;
  loads.reserve(out.size());
  for (const auto& [link, l] : out) {
    loads.push_back(l);
  }
  return loads;
}

} // namespace

std::optional<core::RunResult>
steady_state_run(const algorithms::AlgorithmInfo& algo, const algorithms::Request& request,
                 const core::Topology& topology, const LowerRequest& lower, const RunSchedule& run,
                 const core::RunOptions& options, SteadyState* found) {
  const std::uint64_t n = request.bytes.value;
  if (!algo.loop_bytes || !request.counts.empty() || !request.arrivals.empty() || n == 0 ||
      options.timeline || options.messages) {
    return std::nullopt;
  }
  algorithms::Request pinned = request;
  if (pinned.chunk_basis == 0) {
    pinned.chunk_basis = n;
  }
  const std::uint64_t step = algo.loop_bytes(pinned);
  if (step == 0 || step >= n) {
    return std::nullopt;
  }
  const std::uint64_t loops = (n + step - 1) / step;
  if (loops < 2 * (6 + 2 * kRunAlign)) {
    return std::nullopt; // even the shortest run below would not save half
  }
  const auto with_loops = [&](std::uint64_t k) {
    algorithms::Request r = pinned;
    r.bytes = core::Bytes{n - (loops - k) * step};
    return r;
  };
  // What a loop adds, and how far back an operation's dependencies reach, on schedules long
  // enough to show the reach (generated only, not run).
  std::uint64_t probe = std::min<std::uint64_t>(16, loops / 4);
  std::optional<Loop> loop;
  std::uint64_t span = 0;
  while (true) {
    if (probe < 2) {
      return std::nullopt;
    }
    const core::Schedule a = lower(with_loops(probe));
    const Counts ca = count(a);
    loop = loop_of(ca, count(lower(with_loops(probe + 1))), count(lower(with_loops(probe + 2))));
    if (!loop || loop->ops_total == 0) {
      return std::nullopt;
    }
    span = reach(a, *loop);
    if (6 * span + 2 * kRunAlign > loops / 2) {
      return std::nullopt; // the run below would not save half (the estimate only grows)
    }
    if (2 * span < probe) {
      break; // the probe is long enough to show the whole reach
    }
    if (4 * probe > loops) {
      return std::nullopt;
    }
    probe *= 2;
  }
  // A warm-up (the pipeline fills), the window (the reach and two periods) and the drain (the
  // reach). The check in the window is what makes the result exact, whatever the warm-up, so the
  // first run gives the warm-up one reach (NVLS-tree on two nodes settles within it on both
  // engines since the network proxies post in operation order: 384 loops instead of 672,
  // docs/benchmarks.md); where its window is not periodic yet, once more with four reaches (the
  // earlier first run), then with ten.
  constexpr std::array<std::uint64_t, 3> kWarmups{1, 4, 10};
  std::uint64_t run_loops = 0;
  std::uint64_t spent = 0; // loops run by the attempts before
  std::optional<Period> periodic;
  core::RunResult out;
  for (std::size_t attempt = 0; attempt < kWarmups.size() && !periodic; ++attempt) {
    spent += run_loops;
    run_loops = (kWarmups[attempt] + 2) * span + 2 * kRunAlign;
    if (run_loops > loops) {
      return std::nullopt;
    }
    run_loops += (loops - run_loops) % kRunAlign;
    if (2 * (spent + run_loops) > loops) {
      // The attempts together would save less than half the run. (A run that never settles,
      // NVLS-tree at NCCL's 16 channels on two nodes since 2026-12-07, cost three attempts of
      // 128, 160 and 256 of its 512 loops at 8 GiB before running in full.)
      return std::nullopt;
    }
    const core::Schedule s = lower(with_loops(run_loops));
    core::RunOptions timed;
    timed.timeline = true;
    timed.messages = options.link_loads;
    timed.link_loads = options.link_loads;
    out = run(s, timed);
    periodic = find_period(s, *loop, out, run_loops, span);
    if (periodic && options.link_loads) {
      const std::uint64_t periods = (loops - run_loops) / periodic->loops;
      auto loads = extrapolate_loads(s, topology, *loop, out, *periodic, periods);
      if (!loads) {
        return std::nullopt;
      }
      out.link_loads = std::move(*loads);
    }
    if (periodic) {
      break;
    }
  }
  if (!periodic) {
    return std::nullopt;
  }
  const std::uint32_t period = periodic->loops;
  const double shift = periodic->shift;
  const std::uint64_t more = loops - run_loops;
  const double later = static_cast<double>(more / period) * shift;
  out.time = core::Seconds{out.time.value + later};
  for (std::size_t x = 0; x < out.rank_finish.size() && x < loop->ops.size(); ++x) {
    if (loop->ops[x] != 0) {
      out.rank_finish[x] = core::Seconds{out.rank_finish[x].value + later};
    }
  }
  out.operations += more * loop->ops_total;
  out.messages += more * loop->sends;
  out.bytes_sent += more * loop->bytes;
  out.timeline.clear();
  out.message_timeline.clear();
  if (found != nullptr) {
    *found = SteadyState{loops, run_loops, period, shift};
  }
  return out;
}

} // namespace collsim::analysis
