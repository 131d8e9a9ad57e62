// A parsed GOAL file as a collsim schedule (goal.hpp, goal_model.hpp): the operations alone, in
// an issue order that respects requires and irequires, with LogGOPSim's matching checked against
// collsim's; or, for a file that carries collsim's comments, the schedule they spell, checked
// against the GOAL operations.

#include "goal_model.hpp"

#include "collsim/core/errors.hpp"

#include <algorithm>
#include <charconv>
#include <fmt/format.h>
#include <map>
#include <queue>
#include <string>
#include <tuple>
#include <vector>

namespace collsim::io::detail {

core::Schedule goal_schedule(const GoalFile& f, const GoalImportOptions& options) {
  const auto p = static_cast<std::uint32_t>(f.ranks.size());
  // Issue order per rank: every `requires` and `irequires` target first, file order otherwise.
  std::vector<std::vector<std::size_t>> order(p);
  std::vector<std::vector<std::uint32_t>> position(p);
  std::uint64_t data_bytes = 0;
  std::size_t total = 0;
  for (core::Rank r = 0; r < p; ++r) {
    const auto& ops = f.ranks[r].ops;
    total += ops.size();
    std::vector<std::vector<std::size_t>> waiters(ops.size());
    std::vector<std::size_t> pending(ops.size(), 0);
    std::uint64_t rank_bytes = 0;
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const GoalOp& op = ops[i];
      if (op.kind != GoalOp::Kind::calc) {
        if (op.peer >= static_cast<std::int64_t>(p) || op.peer == static_cast<std::int64_t>(r)) {
          goal_fail(f.name, op.line, op.column,
                    op.peer == static_cast<std::int64_t>(r)
                        ? fmt::format("rank {} {} itself", r,
                                      op.kind == GoalOp::Kind::send ? "sends to" : "receives from")
                        : fmt::format("rank {} does not exist (num_ranks {})", op.peer, p));
        }
        rank_bytes += op.amount;
      }
      for (const auto* list : {&op.requires_, &op.irequires_}) {
        for (const std::size_t b : *list) {
          waiters[b].push_back(i);
          ++pending[i];
        }
      }
    }
    data_bytes = std::max(data_bytes, rank_bytes);
    std::priority_queue<std::size_t, std::vector<std::size_t>, std::greater<>> ready;
    for (std::size_t i = 0; i < ops.size(); ++i) {
      if (pending[i] == 0) {
        ready.push(i);
      }
    }
    position[r].assign(ops.size(), 0);
    while (!ready.empty()) {
      const std::size_t i = ready.top();
      ready.pop();
      position[r][i] = static_cast<std::uint32_t>(order[r].size());
      order[r].push_back(i);
      for (const std::size_t w : waiters[i]) {
        if (--pending[w] == 0) {
          ready.push(w);
        }
      }
    }
    if (order[r].size() != ops.size()) {
      const auto stuck =
          std::find_if(pending.begin(), pending.end(), [](std::size_t n) { return n > 0; }) -
          pending.begin();
      const GoalOp& op = ops[static_cast<std::size_t>(stuck)];
      goal_fail(f.name, op.line, op.column,
                fmt::format("rank {}: this operation is on a cycle of requires/irequires", r));
    }
  }

  // LogGOPSim matches by (source, tag) in order. collsim matches in issue order per connection
  // (pair of ranks, tag): when every tag is one of collsim's (0..255, no wildcard) the tags carry
  // over and the two agree; otherwise collsim matches per pair, and where that could pair
  // differently from LogGOPSim, or the sizes differ, the receive says so.
  bool tags = true;
  for (core::Rank r = 0; r < p; ++r) {
    for (const GoalOp& op : f.ranks[r].ops) {
      tags = tags &&
             (op.kind == GoalOp::Kind::calc || (op.tag >= 0 && op.tag < core::Schedule::kMaxTags));
    }
  }
  using Connection = std::tuple<core::Rank, core::Rank, std::int64_t>;
  std::map<Connection, std::vector<const GoalOp*>> sends;
  std::map<Connection, std::vector<const GoalOp*>> recvs;
  for (core::Rank r = 0; r < p; ++r) {
    for (const std::size_t i : order[r]) {
      const GoalOp& op = f.ranks[r].ops[i];
      const std::int64_t tag = tags ? op.tag : 0;
      if (op.kind == GoalOp::Kind::send) {
        sends[{r, static_cast<core::Rank>(op.peer), tag}].push_back(&op);
      } else if (op.kind == GoalOp::Kind::recv) {
        recvs[{static_cast<core::Rank>(op.peer), r, tag}].push_back(&op);
      }
    }
  }
  for (const auto& [connection, rs] : recvs) {
    const std::pair<core::Rank, core::Rank> pair{std::get<0>(connection), std::get<1>(connection)};
    const auto it = sends.find(connection);
    const std::size_t n = it == sends.end() ? 0 : it->second.size();
    for (std::size_t k = 0; k < rs.size(); ++k) {
      const GoalOp& rv = *rs[k];
      if (k >= n) {
        goal_fail(f.name, rv.line, rv.column,
                  fmt::format("rank {} receives {} message{} from rank {}, which sends it {}",
                              pair.second, rs.size(), rs.size() == 1 ? "" : "s", pair.first, n));
      }
      const GoalOp& sd = *it->second[k];
      if (sd.amount != rv.amount) {
        goal_fail(
            f.name, rv.line, rv.column,
            fmt::format("this receive of {} B is rank {}'s message {} from rank {}, whose send "
                        "(line {}) has {} B (collsim matches in order per pair of ranks)",
                        rv.amount, pair.second, k + 1, pair.first, sd.line, sd.amount));
      }
      if (sd.tag != rv.tag && sd.tag != -1 && rv.tag != -1) {
        goal_fail(
            f.name, rv.line, rv.column,
            fmt::format("tag {} here, but the send it meets in collsim's in-order matching per "
                        "pair of ranks (line {}) has tag {}: LogGOPSim would pair by tag",
                        rv.tag, sd.line, sd.tag));
      }
    }
  }
  for (const auto& [connection, ss] : sends) {
    const std::pair<core::Rank, core::Rank> pair{std::get<0>(connection), std::get<1>(connection)};
    const auto it = recvs.find(connection);
    const std::size_t n = it == recvs.end() ? 0 : it->second.size();
    if (ss.size() > n) {
      const GoalOp& sd = *ss[n];
      goal_fail(f.name, sd.line, sd.column,
                fmt::format("rank {} sends {} message{} to rank {}, which receives {}", pair.first,
                            ss.size(), ss.size() == 1 ? "" : "s", pair.second, n));
    }
  }

  core::ScheduleHeader h;
  h.collective = options.collective;
  h.ranks = p;
  h.bytes = options.bytes;
  h.data_bytes = data_bytes;
  h.algorithm = options.algorithm;
  core::Schedule s(h);
  s.reserve(total, total);
  std::vector<std::uint32_t> deps;
  for (core::Rank r = 0; r < p; ++r) {
    s.begin_rank(r);
    std::uint64_t offset = 0; // every message its own bytes: GOAL says nothing of buffers
    for (const std::size_t i : order[r]) {
      const GoalOp& op = f.ranks[r].ops[i];
      deps.clear();
      for (const std::size_t b : op.requires_) {
        deps.push_back(position[r][b]);
      }
      std::sort(deps.begin(), deps.end());
      deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
      s.set_stream(op.cpu);
      s.set_tag(tags && op.kind != GoalOp::Kind::calc ? static_cast<std::uint32_t>(op.tag) : 0);
      const core::Range bytes{core::Buffer::data, offset, op.amount};
      offset += op.kind == GoalOp::Kind::calc ? 0 : op.amount;
      switch (op.kind) {
      case GoalOp::Kind::send:
        s.add(core::OpKind::send, static_cast<core::Rank>(op.peer), bytes, {}, deps);
        break;
      case GoalOp::Kind::recv:
        s.add(core::OpKind::recv, static_cast<core::Rank>(op.peer), bytes, {}, deps);
        break;
      case GoalOp::Kind::calc:
        s.calc(core::Seconds{static_cast<double>(op.amount) * options.seconds_per_unit}, deps);
        break;
      }
    }
  }
  s.finish();
  return s;
}

core::Schedule goal_annotated_schedule(const GoalFile& f, const GoalImportOptions& options) {
  // The collsim text the comments carry, with each of its lines' place in the GOAL file.
  std::string text;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> origin; // (GOAL line, column offset)
  std::size_t c = 0;
  for (const GoalAnnotation& a : f.annotated) {
    for (; c < f.closes.size() && f.closes[c] < a.line; ++c) {
      text += "}\n";
      origin.emplace_back(f.closes[c], 0);
    }
    text += a.text + "\n";
    origin.emplace_back(a.line, a.column - 1);
  }
  for (; c < f.closes.size(); ++c) {
    text += "}\n";
    origin.emplace_back(f.closes[c], 0);
  }
  core::Schedule s;
  try {
    s = core::parse_schedule(text, f.name);
  } catch (const core::ScheduleError& e) {
    // "name:line:column: error: msg" of the rebuilt text: point at the comment it came from.
    const std::string what = e.what();
    const std::string prefix = f.name + ":";
    std::uint32_t line = 0;
    std::uint32_t column = 0;
    const char* p = what.c_str() + (what.starts_with(prefix) ? prefix.size() : 0);
    const char* end = what.c_str() + what.size();
    auto r1 = std::from_chars(p, end, line);
    if (r1.ec == std::errc{} && r1.ptr < end && *r1.ptr == ':') {
      auto r2 = std::from_chars(r1.ptr + 1, end, column);
      const std::string_view rest(r2.ptr, static_cast<std::size_t>(end - r2.ptr));
      if (r2.ec == std::errc{} && line >= 1 && line <= origin.size() &&
          rest.starts_with(": error: ")) {
        goal_fail(f.name, origin[line - 1].first, column + origin[line - 1].second,
                  fmt::format("in its `// collsim:` line: {}", rest.substr(9)));
      }
    }
    throw;
  }
  if (s.participants() != f.ranks.size()) {
    goal_fail(
        f.name, f.closes.empty() ? 1 : f.closes.back(), 1,
        fmt::format("the `// collsim:` lines describe {} participants but the file has {} ranks",
                    s.participants(), f.ranks.size()));
  }
  const auto disagree = [&](const GoalOp& g, const std::string& expected) {
    goal_fail(f.name, g.line, g.column,
              fmt::format("this operation disagrees with its `// collsim:` line ({}); delete the "
                          "`// collsim:` lines to import the GOAL operations alone",
                          expected));
  };
  for (core::Rank r = 0; r < s.participants(); ++r) {
    const auto& g = f.ranks[r].ops;
    std::size_t j = 0;
    for (core::OpId id = s.rank_begin(r); id < s.rank_end(r); ++id) {
      const core::OpKind kind = s.kind(id);
      const std::uint64_t len = s.target(id).length;
      std::string expected;
      bool ok = j < g.size();
      switch (kind) {
      case core::OpKind::send:
      case core::OpKind::recv:
      case core::OpKind::recv_reduce: {
        const bool send = kind == core::OpKind::send;
        expected = fmt::format("{} {}b {} {}", send ? "send" : "recv", len, send ? "to" : "from",
                               s.peer(id));
        ok = ok && g[j].kind == (send ? GoalOp::Kind::send : GoalOp::Kind::recv) &&
             g[j].amount == len && g[j].peer == static_cast<std::int64_t>(s.peer(id));
        if (ok && kind == core::OpKind::recv_reduce) {
          ++j;
          expected = "a calc for the reduction after the recv";
          ok = j < g.size() && g[j].kind == GoalOp::Kind::calc;
        }
        break;
      }
      case core::OpKind::calc:
        expected = fmt::format("calc {}", s.calc_ns(id));
        ok = ok && g[j].kind == GoalOp::Kind::calc &&
             (options.seconds_per_unit != 1e-9 || g[j].amount == s.calc_ns(id));
        break;
      case core::OpKind::reduce:
      case core::OpKind::copy:
        expected = "a calc";
        ok = ok && g[j].kind == GoalOp::Kind::calc;
        break;
      }
      if (!ok) {
        if (j < g.size()) {
          disagree(g[j], expected);
        }
        goal_fail(f.name, f.closes[r], 1,
                  fmt::format("rank {} ends before the operation its `// collsim:` lines describe "
                              "({})",
                              r, expected));
      }
      ++j;
    }
    if (j < g.size()) {
      disagree(g[j], "none: the `// collsim:` lines list no more operations for this rank");
    }
  }
  return s;
}

} // namespace collsim::io::detail
