// collsim schedules as LogGOPSim GOAL text (goal.hpp). The format's facts come from LogGOPSim's
// grammar (src/LogGOPSim/txt2bin.re) as ../shared/reference/interchange.md section 3 records
// them: ranks ascending and complete, labels defined before any `requires` names them, options in
// the order tag, cpu, nic, one operation per line, `calc` in time units.

#include "collsim/io/goal.hpp"

#include <cmath>
#include <fmt/format.h>
#include <string>
#include <vector>

namespace collsim::io {
namespace {

/// The lines of `text`, without their line ends.
std::vector<std::string_view> lines_of(std::string_view text) {
  std::vector<std::string_view> out;
  while (!text.empty()) {
    const auto nl = text.find('\n');
    out.push_back(text.substr(0, nl));
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
  }
  return out;
}

/// Nanoseconds (rounded up) to move `bytes` at `rate`; 0 when the rate is 0 (free).
std::uint64_t work_ns(std::uint64_t bytes, core::Bandwidth rate) {
  if (rate.bytes_per_second <= 0.0 || bytes == 0) {
    return 0;
  }
  return static_cast<std::uint64_t>(
      std::ceil(static_cast<double>(bytes) / rate.bytes_per_second * 1e9 - 1e-6));
}

} // namespace

std::string write_goal(const core::Schedule& s, const GoalExportOptions& options) {
  using core::OpKind;
  const std::string collsim_text = core::print_schedule(s);
  const std::vector<std::string_view> text = lines_of(collsim_text);
  std::size_t line = 0;
  const core::ScheduleHeader& h = s.header();
  std::string out = fmt::format(
      "// LogGOPSim GOAL, exported by collsim: {} {} on {} ranks, {} B, root {}\n"
      "// calc times in ns: reductions at {:.6g} GB/s, copies at {:.6g} GB/s (0: free); tag = "
      "collsim's connection tag (collsim matches in order per pair of ranks and tag, as MPI per "
      "source and tag); cpu = collsim's issue stream\n"
      "// The `// collsim:` lines are the schedule in collsim's text form: `collsim import` "
      "reads them back exactly.\n",
      h.algorithm.empty() ? "schedule" : h.algorithm, core::to_string(h.collective), h.ranks,
      h.bytes.value, h.root, options.reduce_bandwidth.bytes_per_second / 1e9,
      options.copy_bandwidth.bytes_per_second / 1e9);
  for (; line < text.size() && !text[line].ends_with("{"); ++line) {
    out += fmt::format("// collsim: {}\n", text[line]);
  }
  out += fmt::format("num_ranks {}\n", s.participants());
  // The GOAL label that completes operation `local` of the current rank (a recv_reduce's calc).
  const auto done_label = [&](core::OpId first, std::uint32_t local) {
    return s.kind(first + local) == OpKind::recv_reduce ? fmt::format("l{}r", local)
                                                        : fmt::format("l{}", local);
  };
  std::vector<std::int64_t> last_in_stream;
  for (core::Rank r = 0; r < s.participants(); ++r) {
    out += fmt::format("// collsim: {}\nrank {} {{\n", line < text.size() ? text[line] : "", r);
    ++line;
    last_in_stream.assign(core::Schedule::kMaxStreams, -1);
    const core::OpId first = s.rank_begin(r);
    for (core::OpId id = first; id < s.rank_end(r); ++id) {
      const auto k = static_cast<std::uint32_t>(id - first);
      out += fmt::format("// collsim: {}\n", line < text.size() ? text[line] : "");
      ++line;
      const std::uint32_t stream = s.stream(id);
      const std::string cpu = stream == 0 ? std::string{} : fmt::format(" cpu {}", stream);
      const core::Range target = s.target(id);
      switch (s.kind(id)) {
      case OpKind::send:
        out += fmt::format("l{}: send {}b to {} tag {}{}\n", k, target.length, s.peer(id),
                           s.tag(id), cpu);
        break;
      case OpKind::recv:
      case OpKind::recv_reduce:
        out += fmt::format("l{}: recv {}b from {} tag {}{}\n", k, target.length, s.peer(id),
                           s.tag(id), cpu);
        break;
      case OpKind::reduce:
        out += fmt::format("l{}: calc {}{}\n", k, work_ns(target.length, options.reduce_bandwidth),
                           cpu);
        break;
      case OpKind::copy:
        out +=
            fmt::format("l{}: calc {}{}\n", k, work_ns(target.length, options.copy_bandwidth), cpu);
        break;
      case OpKind::calc: out += fmt::format("l{}: calc {}{}\n", k, s.calc_ns(id), cpu); break;
      }
      // collsim's program order: issued after the operation before it in its stream issued.
      if (last_in_stream[stream] >= 0) {
        out += fmt::format("l{} irequires l{}\n", k, last_in_stream[stream]);
      }
      last_in_stream[stream] = k;
      for (const std::uint32_t d : s.deps(id)) {
        out += fmt::format("l{} requires {}\n", k, done_label(first, d));
      }
      if (s.kind(id) == OpKind::recv_reduce) {
        out += fmt::format("l{}r: calc {}{}\nl{}r requires l{}\n", k,
                           work_ns(target.length, options.reduce_bandwidth), cpu, k, k);
      }
    }
    out += "}\n";
    ++line; // the block's closing brace
  }
  return out;
}

} // namespace collsim::io
