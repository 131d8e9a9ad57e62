// A workload from NCCL's debug output. With NCCL_DEBUG=INFO and NCCL_DEBUG_SUBSYS=COLL (or ALL),
// NCCL prints one line per collective call as it is enqueued (src/enqueue.cc, ncclEnqueueCheck):
//
//   host:pid:tid [dev] NCCL INFO AllReduce: opCount 1f sendbuff 0x.. recvbuff 0x.. count 262144
//       datatype 7 op 0 root 0 comm 0x.. [nranks=8] stream 0x..
//
// `count` is elements per rank as the API takes them (for AllGather the send count, for
// ReduceScatter the receive count), `datatype` the ncclDataType_t value (nccl.h: int8, uint8,
// int32, uint32, int64, uint64, float16, float32, float64, bfloat16 from NCCL 2.10, fp8 e4m3 and
// e5m2 from 2.19). Every rank prints its own lines, so the calls of one process are one rank's
// calls. Send and Recv lines are NCCL's point-to-point API (pipeline stages, PyTorch's
// all-to-all); each Send becomes a message between two ranks (a bcast on a `pair`).

#include "collsim/io/workload_import.hpp"

#include "collsim/core/errors.hpp"
#include "collsim/core/units.hpp"
#include "collsim/io/workload_loader.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <tuple>

namespace collsim::io {
namespace {

// ncclDataType_t values 0..11 (nccl.h), by nccl-tests' names.
constexpr std::array<const char*, 12> kNcclTypes{"int8",   "uint8",    "int32",    "uint32",
                                                 "int64",  "uint64",   "half",     "float",
                                                 "double", "bfloat16", "fp8_e4m3", "fp8_e5m2"};

struct OpName {
  const char* nccl;
  const char* collective;
  bool per_rank_count; ///< the count is one rank's part of the collective's S
};
constexpr std::array<OpName, 7> kOps{{{"AllReduce", "allreduce", false},
                                      {"Broadcast", "bcast", false},
                                      {"Reduce", "reduce", false},
                                      {"AllGather", "allgather", true},
                                      {"ReduceScatter", "reduce_scatter", true},
                                      {"Send", "bcast", false},
                                      {"Recv", "", false}}};

/// Whether `seen` (host:pid as found in a line) is the process `chosen`. A log line glued onto
/// the end of a program's output line without a newline (nccl-tests does this) has the output's
/// last characters in front of the host name, so a host that ends with the chosen one matches.
bool same_process(const std::string& seen, const std::string& chosen) {
  if (seen == chosen) {
    return true;
  }
  const std::size_t host_end = chosen.find(':');
  if (host_end == std::string::npos) {
    return false;
  }
  const std::string rest = chosen.substr(host_end); // ":pid"
  return seen.size() > chosen.size() && seen.ends_with(rest) &&
         seen.substr(0, seen.size() - rest.size()).ends_with(chosen.substr(0, host_end));
}

// The lines are scanned by hand, not with std::regex: libstdc++'s regex searched 0.3 MB/s of
// text without NCCL lines (a training log's own output) and 6 MB/s of NCCL lines.

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
bool is_letter(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}
bool is_host_char(char c) {
  return is_digit(c) || is_letter(c) || c == '_' || c == '.' || c == '-';
}
bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

/// The prefix NCCL puts on each line, `host:pid:tid [dev] NCCL `: where it starts in the line,
/// its host:pid and its device.
struct Prefix {
  std::size_t begin = 0;
  std::size_t end = 0; ///< just past "NCCL "
  std::string process;
  std::string device;
};

/// The leftmost prefix in `line` from `from` on: each "] NCCL " read backwards as
/// `host:pid:tid [dev`, the host being the longest run of [A-Za-z0-9_.-] before the first colon.
std::optional<Prefix> find_prefix(std::string_view line, std::size_t from) {
  constexpr std::string_view kAnchor = "] NCCL ";
  for (std::size_t at = line.find(kAnchor, from); at != std::string_view::npos;
       at = line.find(kAnchor, at + 1)) {
    // Walk back over [a run of digits] from `end`; returns the run's first index.
    const auto digits_before = [&](std::size_t end) {
      std::size_t b = end;
      while (b > 0 && is_digit(line[b - 1])) {
        --b;
      }
      return b;
    };
    const std::size_t dev = digits_before(at);
    if (dev == at || dev < 2 || line[dev - 1] != '[' || line[dev - 2] != ' ') {
      continue;
    }
    const std::size_t tid = digits_before(dev - 2);
    if (tid == dev - 2 || tid < 1 || line[tid - 1] != ':') {
      continue;
    }
    const std::size_t pid = digits_before(tid - 1);
    if (pid == tid - 1 || pid < 1 || line[pid - 1] != ':') {
      continue;
    }
    std::size_t host = pid - 1;
    while (host > 0 && is_host_char(line[host - 1])) {
      --host;
    }
    if (host == pid - 1) {
      continue;
    }
    Prefix p;
    p.begin = host;
    p.end = at + kAnchor.size();
    p.process = std::string(line.substr(host, tid - 1 - host));
    p.device = std::string(line.substr(dev, at - dev));
    return p;
  }
  return std::nullopt;
}

/// A collective line's start: its prefix followed by `INFO Op: opCount `.
std::optional<Prefix> find_start(std::string_view line) {
  for (std::optional<Prefix> p = find_prefix(line, 0); p; p = find_prefix(line, p->end - 6)) {
    std::string_view rest = line.substr(p->end);
    if (!rest.starts_with("INFO ")) {
      continue;
    }
    rest.remove_prefix(5);
    std::size_t n = 0;
    while (n < rest.size() && is_letter(rest[n])) {
      ++n;
    }
    if (n > 0 && rest.substr(n).starts_with(": opCount ")) {
      return p;
    }
  }
  return std::nullopt;
}

/// The fields of `NCCL INFO Op: opCount X sendbuff S recvbuff R count N datatype D op O root R
/// comm C [nranks=N] stream S` read from `at` (where "NCCL INFO" starts): each field's text and
/// its index in the line; nothing when a literal or a field is missing.
struct CallFields {
  std::array<std::string_view, 9> text;  ///< 1 op, 3 count, 4 datatype, 8 nranks (the rest unused)
  std::array<std::size_t, 9> position{}; ///< where each starts in the line
};

std::optional<CallFields> read_call(std::string_view line, std::size_t at) {
  CallFields f;
  std::size_t i = at;
  const auto literal = [&](std::string_view word) {
    if (!line.substr(i).starts_with(word)) {
      return false;
    }
    i += word.size();
    return true;
  };
  const auto field = [&](int k, auto accept, bool sign = false) {
    const std::size_t b = i;
    if (sign && i < line.size() && line[i] == '-' && i + 1 < line.size() && is_digit(line[i + 1])) {
      ++i;
    }
    while (i < line.size() && accept(line[i])) {
      ++i;
    }
    f.text[static_cast<std::size_t>(k)] = line.substr(b, i - b);
    f.position[static_cast<std::size_t>(k)] = b;
    return i > b;
  };
  const auto word = [](char c) { return !is_space(c); };
  const auto hex = [](char c) {
    return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') || c == 'x';
  };
  const bool ok =
      literal("NCCL INFO ") && field(1, is_letter) && literal(": opCount ") && field(2, hex) &&
      literal(" sendbuff ") && field(0, word) && literal(" recvbuff ") && field(0, word) &&
      literal(" count ") && field(3, is_digit) && literal(" datatype ") && field(4, is_digit) &&
      literal(" op ") && field(5, is_digit) && literal(" root ") && field(6, is_digit, true) &&
      literal(" comm ") && field(7, word) && literal(" [nranks=") && field(8, is_digit) &&
      literal("] stream ") && field(0, word);
  if (!ok) {
    return std::nullopt;
  }
  return f;
}

} // namespace

NcclDebugSummary import_nccl_debug(const std::string& text, const std::string& file,
                                   const NcclDebugImport& options) {
  std::set<std::string> devices;
  if (options.steps == 0) {
    throw core::UsageError("--steps: must be at least 1");
  }
  NcclDebugSummary out;
  std::map<std::tuple<std::string, std::uint64_t, std::string, std::uint32_t>, std::size_t> index;
  // The process: the one asked for, else the first with a collective line.
  out.process = options.process;
  // Lines as std::getline cuts them: at each '\n', none after a final one.
  const auto for_each_line = [&text](auto&& f) {
    std::uint32_t number = 0;
    for (std::size_t b = 0; b < text.size();) {
      const std::size_t e = std::min(text.find('\n', b), text.size());
      if (!f(std::string_view(text).substr(b, e - b), ++number)) {
        return;
      }
      b = e + 1;
    }
  };
  if (out.process.empty()) {
    for_each_line([&](std::string_view line, std::uint32_t) {
      if (const std::optional<Prefix> first = find_start(line)) {
        out.process = first->process;
        return false;
      }
      return true;
    });
  }
  for_each_line([&](std::string_view line, std::uint32_t number) {
    if (const std::optional<Prefix> any = find_prefix(line, 0);
        any && same_process(any->process, out.process)) {
      devices.insert(any->device);
    }
    const std::optional<Prefix> start = find_start(line);
    if (!start) {
      return true;
    }
    const std::string& process = start->process;
    if (!same_process(process, out.process)) {
      if (std::find(out.others.begin(), out.others.end(), process) == out.others.end()) {
        out.others.push_back(process);
      }
      return true;
    }
    const auto column = static_cast<std::uint32_t>(start->begin + 1);
    const std::string_view rest = line.substr(start->begin);
    const std::optional<CallFields> m = read_call(line, start->end - 5);
    if (!m) {
      throw core::LogParseError({file, number, column},
                                "an NCCL collective line without its fields (expected '... count N "
                                "datatype D op O root R "
                                "comm C [nranks=N] stream S'; a truncated line?)");
    }
    const std::string op(m->text[1]);
    const auto known =
        std::find_if(kOps.begin(), kOps.end(), [&](const OpName& o) { return op == o.nccl; });
    if (known == kOps.end()) {
      std::vector<std::string> names;
      for (const OpName& o : kOps) {
        names.emplace_back(o.nccl);
      }
      throw core::LogParseError({file, number, column + static_cast<std::uint32_t>(rest.find(op))},
                                core::UnknownNameError("NCCL operation", op, names).what());
    }
    ++out.lines;
    if (op == "Recv") {
      return true; // the Send of the same message is counted on its sender
    }
    // The column of field k.
    const auto at = [&](int k) {
      return static_cast<std::uint32_t>(m->position[static_cast<std::size_t>(k)] + 1);
    };
    // A field's number, or a positioned error when its digits do not fit 64 bits (std::stoull
    // threw std::out_of_range out of the importer: found by fuzzing).
    const auto field = [&](int k) {
      std::uint64_t v = 0;
      const std::string digits(m->text[static_cast<std::size_t>(k)]);
      const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
      if (ec != std::errc{} || ptr != digits.data() + digits.size()) {
        throw core::LogParseError({file, number, at(k)}, fmt::format("{} is out of range", digits));
      }
      return v;
    };
    const std::uint64_t type = field(4);
    if (type >= kNcclTypes.size()) {
      throw core::LogParseError(
          {file, number, at(4)},
          fmt::format("datatype {} is not an ncclDataType_t (0 to 11)", type));
    }
    const std::uint64_t count = field(3);
    const std::uint64_t nranks = field(8);
    if (count == 0) {
      ++out.empty_calls; // moves no data (a synchronisation, a rank's empty share)
      return true;
    }
    ImportedCall call;
    call.op = op;
    call.collective = known->collective;
    call.count = count;
    call.dtype = kNcclTypes[type];
    const std::uint64_t copies = known->per_rank_count ? nranks : 1;
    const std::uint64_t unit = dtype_bytes(call.dtype);
    if (nranks > std::numeric_limits<std::uint32_t>::max() ||
        count >
            std::numeric_limits<std::uint64_t>::max() / unit / std::max<std::uint64_t>(copies, 1)) {
      throw core::LogParseError(
          {file, number, at(3)},
          fmt::format("count {} x {} ranks is beyond 64-bit sizes and 32-bit rank counts", count,
                      nranks));
    }
    call.nranks = static_cast<std::uint32_t>(nranks);
    call.bytes = count * unit * copies;
    call.first_line = number;
    const auto key = std::make_tuple(call.op, call.count, call.dtype, call.nranks);
    const auto [it, fresh] = index.emplace(key, out.calls.size());
    if (fresh) {
      out.calls.push_back(call);
    }
    ++out.calls[it->second].calls;
    return true;
  });
  if (out.lines == 0) {
    throw core::LogParseError(
        {file, 1, 1},
        out.process.empty()
            ? "no NCCL collective lines ('NCCL INFO AllReduce: opCount ...'): run with "
              "NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=COLL"
            : fmt::format("no NCCL collective lines of process {}", out.process));
  }
  if (out.calls.empty()) {
    throw core::LogParseError({file, 1, 1}, "only Recv lines: nothing to time on this rank");
  }
  // One process may drive several GPUs (nccl-tests -g N, one thread): each of its ranks makes
  // the calls, and the [dev] of a line is only the device current when it was printed.
  out.ranks_in_process = static_cast<std::uint32_t>(std::max<std::size_t>(devices.size(), 1));
  std::string y = fmt::format(
      "# Written by {}\n", options.command.empty() ? "collsim workload import" : options.command);
  y += fmt::format("# from {} NCCL collective lines of process {} in {}", out.lines, out.process,
                   file);
  y += options.steps > 1 ? fmt::format(", over {} steps\n", options.steps) : " (one step)\n";
  if (out.ranks_in_process > 1) {
    y +=
        fmt::format("# the process drives {} GPUs (devices {}): its calls are divided among them\n",
                    out.ranks_in_process, fmt::join(devices, ", "));
  }
  if (out.empty_calls > 0) {
    y += fmt::format("# calls with count 0, left out: {}\n", out.empty_calls);
  }
  if (!out.others.empty()) {
    y += fmt::format("# other processes in the log, not used: {}\n", out.others.size());
  }
  y += "# Each phase's communicator is the first `ranks` ranks of the job (the log does not say\n"
       "# which ranks it holds); Send lines are messages between two ranks (bcast on a pair).\n";
  y += fmt::format("name: {}\n", options.name);
  y += fmt::format("description: \"NCCL calls of one rank, from {}\"\n",
                   file.substr(file.find_last_of('/') + 1));
  y += "phases:\n";
  for (const ImportedCall& c : out.calls) {
    const std::uint64_t per = std::uint64_t{options.steps} * out.ranks_in_process;
    const std::uint64_t per_step = (c.calls + per - 1) / per;
    y += fmt::format("  - name: {} {} n={}   # count {} x {}, first on line {}\n", c.op,
                     core::format_bytes(core::Bytes{c.bytes}), c.nranks, c.count, c.dtype,
                     c.first_line);
    y += fmt::format("    collective: {}\n", c.collective);
    y += fmt::format("    bytes: {}\n", c.bytes);
    y += fmt::format("    calls: {}{}\n", per_step,
                     c.calls % per == 0 ? ""
                                        : fmt::format("   # {} in the log, rounded up", c.calls));
    y += c.op == "Send" ? "    group: pair\n"
                        : fmt::format("    group: world\n    ranks: {}\n", c.nranks);
  }
  out.yaml = y;
  return out;
}

} // namespace collsim::io
