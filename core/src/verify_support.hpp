#pragma once
// Internal to core: what validate (verify.cpp), the matching (matching.cpp) and the symbolic
// checker (semantics.cpp) share: operation labels for messages and the untimed execution.

#include "collsim/core/schedule.hpp"
#include "collsim/core/verify.hpp"

#include <cstdint>
#include <fmt/format.h>
#include <string>
#include <vector>

namespace collsim::core::verify_detail {

inline std::string op_label(const Schedule& s, OpId id) {
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
inline std::string participants_text(const Schedule& s) {
  const auto agents = s.header().agents.size();
  if (agents == 0) {
    return fmt::format("{} ranks", s.ranks());
  }
  return fmt::format("{} ranks and {} agent{}", s.ranks(), agents, agents == 1 ? "" : "s");
}

inline bool is_message(OpKind k) {
  return k == OpKind::send || k == OpKind::recv || k == OpKind::recv_reduce;
}
inline bool is_receive(OpKind k) {
  return k == OpKind::recv || k == OpKind::recv_reduce;
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

} // namespace collsim::core::verify_detail
