// Chrome trace writer (Trace Event Format, "JSON Object Format"; complete events "X" and metadata
// events "M"). The document is streamed event by event, one per line, rather than built as a JSON
// tree: a large schedule has tens of millions of operations.

#include "collsim/io/chrome_trace.hpp"

#include "collsim/core/collective.hpp"
#include "collsim/core/errors.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fmt/format.h>
#include <functional>
#include <iterator>
#include <nlohmann/json.hpp>
#include <queue>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

namespace collsim::io {
namespace {

// Perfetto treats pid 0 as the kernel's idle process (swapper), so the two processes start at 1.
constexpr int kRanksPid = 1;
constexpr int kLinksPid = 2;
constexpr std::size_t kFlushBytes = std::size_t{1} << 16;

/// An event's extent in integer picoseconds. Both ends are rounded once, so events that touch in
/// the run touch in the trace, and ts + dur prints exactly the end.
struct Extent {
  std::int64_t begin = 0;
  std::int64_t end = 0;
};

std::int64_t picoseconds(core::Seconds t, std::string_view what) {
  // int64 picoseconds reach +-106 days; a time beyond that (or NaN) is an engine bug.
  constexpr double kLimitSeconds = 9.0e6;
  if (!std::isfinite(t.value) || std::abs(t.value) > kLimitSeconds) {
    throw core::InternalError(fmt::format(
        "chrome trace: {} has the time {} s, which a trace cannot show", what, t.value));
  }
  return std::llround(t.value * 1e12);
}

Extent extent(core::Seconds start, core::Seconds end, std::string_view what) {
  const Extent e{picoseconds(start, what), picoseconds(end, what)};
  if (e.end < e.begin) {
    throw core::InternalError(fmt::format("chrome trace: {} ends ({} s) before it starts ({} s)",
                                          what, end.value, start.value));
  }
  return e;
}

/// Microseconds with up to 6 decimals (picoseconds), trailing zeros dropped: 1.5, 0.000001, 12.
void append_us(std::string& out, std::int64_t ps) {
  const bool negative = ps < 0;
  const std::uint64_t magnitude =
      negative ? std::uint64_t{0} - static_cast<std::uint64_t>(ps) : static_cast<std::uint64_t>(ps);
  if (negative) {
    out += '-';
  }
  fmt::format_to(std::back_inserter(out), "{}", magnitude / 1000000);
  std::uint64_t fraction = magnitude % 1000000;
  if (fraction == 0) {
    return;
  }
  int digits = 6;
  while (fraction % 10 == 0) {
    fraction /= 10;
    --digits;
  }
  fmt::format_to(std::back_inserter(out), ".{:0{}}", fraction, digits);
}

/// A JSON string literal; invalid UTF-8 in device names becomes U+FFFD instead of an exception.
void append_string(std::string& out, std::string_view s) {
  out +=
      nlohmann::json(std::string(s)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

/// The events of one owner (a participant or a link): indices into the extents, sorted by begin,
/// and the lane of each.
struct Group {
  std::vector<std::uint32_t> members;
  std::vector<std::uint32_t> lane;
  std::uint32_t lanes = 0;       ///< 0: the owner has no track
  std::uint32_t first_extra = 0; ///< the tid of lane 1
};

/// Gives each member the lowest lane whose events all end by the time it begins (lanes: at least
/// 1). Sorting by begin and reusing the lowest free lane keeps a run without overlaps in lane 0.
void pack_lanes(Group& g, const std::vector<Extent>& extents) {
  std::sort(g.members.begin(), g.members.end(), [&](std::uint32_t a, std::uint32_t b) {
    const Extent& x = extents[a];
    const Extent& y = extents[b];
    return std::tie(x.begin, x.end, a) < std::tie(y.begin, y.end, b);
  });
  using Busy = std::pair<std::int64_t, std::uint32_t>; // (end, lane)
  std::priority_queue<Busy, std::vector<Busy>, std::greater<>> busy;
  std::priority_queue<std::uint32_t, std::vector<std::uint32_t>, std::greater<>> free;
  g.lane.resize(g.members.size());
  std::uint32_t lanes = 0;
  for (std::size_t k = 0; k < g.members.size(); ++k) {
    const Extent& e = extents[g.members[k]];
    while (!busy.empty() && busy.top().first <= e.begin) {
      free.push(busy.top().second);
      busy.pop();
    }
    if (free.empty()) {
      g.lane[k] = lanes++;
    } else {
      g.lane[k] = free.top();
      free.pop();
    }
    busy.emplace(e.end, g.lane[k]);
  }
  g.lanes = std::max<std::uint32_t>(lanes, 1);
}

/// Owner o's lane 0 is tid o; further lanes take consecutive tids after the last owner.
void assign_tids(std::vector<Group>& groups) {
  auto next = static_cast<std::uint32_t>(groups.size());
  for (Group& g : groups) {
    g.first_extra = next;
    next += g.lanes > 0 ? g.lanes - 1 : 0;
  }
}

std::uint32_t tid(const std::vector<Group>& groups, std::uint32_t owner, std::uint32_t lane) {
  return lane == 0 ? owner : groups[owner].first_extra + lane - 1;
}

/// Streams the document: events separated by ",\n", written out in 64 KiB pieces.
class TraceStream {
public:
  explicit TraceStream(std::ostream& out) : out_(out) { buf_ = "{\"traceEvents\":["; }
  TraceStream(const TraceStream&) = delete;
  TraceStream& operator=(const TraceStream&) = delete;
  ~TraceStream() = default;

  /// Appends one event; `body` is its members without the braces.
  void event(std::string_view body) {
    buf_ += first_ ? "\n{" : ",\n{";
    first_ = false;
    buf_ += body;
    buf_ += '}';
    if (buf_.size() >= kFlushBytes) {
      flush();
    }
  }
  /// Names process `pid` and starts the sort order of its tracks.
  void begin_process(int pid, std::string_view name, int sort_index) {
    metadata(pid, 0, "process_name", fmt::format(R"("name":"{}")", name));
    metadata(pid, 0, "process_sort_index", fmt::format(R"("sort_index":{})", sort_index));
    sort_index_ = 0;
  }
  void metadata(int pid, std::uint32_t tid, std::string_view name, std::string_view args) {
    event(fmt::format(R"("name":"{}","ph":"M","pid":{},"tid":{},"args":{{{}}})", name, pid, tid,
                      args));
  }
  /// Names the tracks of `owner`: "label", "label (2)", ... in sort order.
  void name_tracks(int pid, const std::vector<Group>& groups, std::uint32_t owner,
                   const std::string& label) {
    for (std::uint32_t lane = 0; lane < groups[owner].lanes; ++lane) {
      std::string args = "\"name\":";
      append_string(args, lane == 0 ? label : fmt::format("{} ({})", label, lane + 1));
      const std::uint32_t t = tid(groups, owner, lane);
      metadata(pid, t, "thread_name", args);
      metadata(pid, t, "thread_sort_index", fmt::format("\"sort_index\":{}", sort_index_++));
    }
  }
  /// Ends the event array and appends `tail` (the remaining members and the closing brace).
  void finish(std::string_view tail) {
    buf_ += "\n],";
    buf_ += tail;
    flush();
  }

private:
  void flush() {
    out_.write(buf_.data(), static_cast<std::streamsize>(buf_.size()));
    buf_.clear();
  }
  std::ostream& out_;
  std::string buf_;
  bool first_ = true;
  std::int64_t sort_index_ = 0;
};

std::string op_name(const core::Schedule& s, core::OpId id) {
  const core::OpKind kind = s.kind(id);
  switch (kind) {
  case core::OpKind::send: return fmt::format("send -> {}", s.peer(id));
  case core::OpKind::recv:
  case core::OpKind::recv_reduce: return fmt::format("{} <- {}", core::to_string(kind), s.peer(id));
  case core::OpKind::reduce:
  case core::OpKind::copy: return std::string(core::to_string(kind));
  case core::OpKind::calc: return fmt::format("calc {} ns", s.calc_ns(id));
  }
  throw core::InternalError("chrome trace: unknown OpKind value");
}

/// "r3" for a rank, the device name for an agent (message names on link tracks).
std::string participant_label(const core::Schedule& s, core::Rank p) {
  return p < s.ranks() ? fmt::format("r{}", p) : s.header().agents[p - s.ranks()];
}

void check_op(const core::Schedule& s, core::OpId id, std::string_view where) {
  if (id >= s.op_count()) {
    throw core::InternalError(
        fmt::format("chrome trace: the {} names operation {}, but the schedule has {} operations",
                    where, id, s.op_count()));
  }
}

/// The events of one process, checked and packed into tracks before anything is written.
struct Process {
  std::vector<Extent> extents; ///< per timeline entry or message
  std::vector<Group> groups;   ///< per participant or link
};

Process rank_process(const core::Schedule& schedule, const core::RunResult& result) {
  const std::vector<core::OpTiming>& timeline = result.timeline;
  Process p;
  p.extents.resize(timeline.size());
  p.groups.resize(schedule.participants());
  for (std::uint32_t i = 0; i < timeline.size(); ++i) {
    const core::OpTiming& t = timeline[i];
    check_op(schedule, t.op, "timeline");
    p.extents[i] = extent(t.start, t.end, fmt::format("operation {}", t.op));
    p.groups[schedule.rank_of(t.op)].members.push_back(i);
  }
  for (Group& g : p.groups) {
    pack_lanes(g, p.extents); // every participant gets a track, busy or not
  }
  assign_tids(p.groups);
  return p;
}

Process link_process(const core::Schedule& schedule, const core::Topology& topology,
                     const core::RunResult& result) {
  const std::vector<core::MessageTiming>& messages = result.message_timeline;
  const std::vector<core::DeviceId> device =
      core::participant_devices(schedule, topology, "chrome trace");
  std::unordered_map<std::uint64_t, std::vector<core::LinkId>> routes;
  Process p;
  p.extents.resize(messages.size());
  p.groups.resize(topology.links().size());
  for (std::uint32_t j = 0; j < messages.size(); ++j) {
    const core::MessageTiming& m = messages[j];
    check_op(schedule, m.send, "message timeline");
    if (schedule.kind(m.send) != core::OpKind::send) {
      throw core::InternalError(fmt::format(
          "chrome trace: the message timeline names operation {}, which is a {}, not a send",
          m.send, core::to_string(schedule.kind(m.send))));
    }
    p.extents[j] = extent(m.start, m.end, fmt::format("the message of operation {}", m.send));
    const core::Rank from = schedule.rank_of(m.send);
    const core::Rank to = schedule.peer(m.send);
    const std::uint64_t key = (static_cast<std::uint64_t>(from) << 32) | to;
    auto it = routes.find(key);
    if (it == routes.end()) {
      it = routes.emplace(key, topology.route_between(device[from], device[to])).first;
    }
    for (const core::LinkId l : it->second) {
      p.groups[l].members.push_back(j);
    }
  }
  for (Group& g : p.groups) {
    if (!g.members.empty()) { // only links that carried a message get a track
      pack_lanes(g, p.extents);
    }
  }
  assign_tids(p.groups);
  return p;
}

void append_extent(std::string& body, const Extent& e) {
  body += "\"ts\":";
  append_us(body, e.begin);
  body += ",\"dur\":";
  append_us(body, e.end - e.begin);
}

void write_ranks(TraceStream& stream, const core::Schedule& schedule, const core::RunResult& result,
                 const Process& process) {
  stream.begin_process(kRanksPid, "ranks", 1);
  const std::vector<std::string>& agents = schedule.header().agents;
  for (core::Rank p = 0; p < schedule.participants(); ++p) {
    stream.name_tracks(kRanksPid, process.groups, p,
                       p < schedule.ranks() ? fmt::format("rank {}", p)
                                            : "agent " + agents[p - schedule.ranks()]);
  }
  std::string body;
  for (core::Rank p = 0; p < schedule.participants(); ++p) {
    const Group& g = process.groups[p];
    for (std::size_t k = 0; k < g.members.size(); ++k) {
      const std::uint32_t i = g.members[k];
      const core::OpId id = result.timeline[i].op;
      const core::OpKind kind = schedule.kind(id);
      body.clear();
      // Operation names and kinds are generated ASCII: no escaping needed.
      fmt::format_to(std::back_inserter(body),
                     R"("name":"{}","cat":"{}","ph":"X","pid":{},"tid":{},)", op_name(schedule, id),
                     core::to_string(kind), kRanksPid, tid(process.groups, p, g.lane[k]));
      append_extent(body, process.extents[i]);
      fmt::format_to(std::back_inserter(body), R"(,"args":{{"bytes":{},"op":{})",
                     schedule.length(id), id - schedule.rank_begin(p));
      if (kind == core::OpKind::send || kind == core::OpKind::recv ||
          kind == core::OpKind::recv_reduce) {
        fmt::format_to(std::back_inserter(body), R"(,"peer":{})", schedule.peer(id));
      }
      fmt::format_to(std::back_inserter(body), R"(,"stream":{}}})", schedule.stream(id));
      stream.event(body);
    }
  }
}

void write_links(TraceStream& stream, const core::Schedule& schedule,
                 const core::Topology& topology, const core::RunResult& result,
                 const Process& process) {
  stream.begin_process(kLinksPid, "links", 2);
  std::string body;
  for (core::LinkId l = 0; l < process.groups.size(); ++l) {
    const Group& g = process.groups[l];
    if (g.members.empty()) {
      continue;
    }
    stream.name_tracks(kLinksPid, process.groups, l, core::link_label(topology, l));
    for (std::size_t k = 0; k < g.members.size(); ++k) {
      const std::uint32_t j = g.members[k];
      const core::OpId send = result.message_timeline[j].send;
      body.clear();
      body += "\"name\":";
      append_string(body,
                    fmt::format("{} -> {}", participant_label(schedule, schedule.rank_of(send)),
                                participant_label(schedule, schedule.peer(send))));
      fmt::format_to(std::back_inserter(body), R"(,"cat":"message","ph":"X","pid":{},"tid":{},)",
                     kLinksPid, tid(process.groups, l, g.lane[k]));
      append_extent(body, process.extents[j]);
      fmt::format_to(std::back_inserter(body), R"(,"args":{{"bytes":{}}})", schedule.length(send));
      stream.event(body);
    }
  }
}

} // namespace

void write_chrome_trace(std::ostream& out, const core::Schedule& schedule,
                        const core::Topology& topology, const core::RunResult& result,
                        const TraceInfo& info) {
  if (result.timeline.empty() && schedule.op_count() > 0) {
    throw core::UsageError("chrome trace: the run recorded no operation timeline; run the engine "
                           "with the timeline option (RunOptions::timeline)");
  }
  const std::string tail = [&] {
    std::string t = R"("displayTimeUnit":"ns","otherData":{"collective":)";
    append_string(t, core::to_string(schedule.header().collective));
    t += ",\"algorithm\":";
    append_string(t, info.algorithm.empty() ? schedule.header().algorithm : info.algorithm);
    t += ",\"engine\":";
    append_string(t, info.engine);
    t += ",\"scenario\":";
    append_string(t, info.scenario);
    fmt::format_to(std::back_inserter(t), R"(,"ranks":{},"bytes":{},"time_us":)", schedule.ranks(),
                   schedule.header().bytes.value);
    append_us(t, picoseconds(result.time, "the run"));
    t += "}}\n";
    return t;
  }();

  // Everything is checked before the first byte is written.
  const Process ranks = rank_process(schedule, result);
  const bool links =
      !topology.is_full_mesh() && !result.message_timeline.empty() && !topology.links().empty();
  const Process messages = links ? link_process(schedule, topology, result) : Process{};

  TraceStream stream(out);
  write_ranks(stream, schedule, result, ranks);
  if (links) {
    write_links(stream, schedule, topology, result, messages);
  }
  stream.finish(tail);
}

} // namespace collsim::io
