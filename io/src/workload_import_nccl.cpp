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
#include <regex>
#include <set>
#include <sstream>
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

} // namespace

NcclDebugSummary import_nccl_debug(const std::string& text, const std::string& file,
                                   const NcclDebugImport& options) {
  // Where a collective line starts, and the whole line as NCCL prints it.
  static const std::regex kStart{
      R"(([A-Za-z0-9_.-]+):(\d+):\d+ \[(\d+)\] NCCL INFO ([A-Za-z]+): opCount )"};
  static const std::regex kCall{
      R"(NCCL INFO ([A-Za-z]+): opCount ([0-9a-fA-Fx]+) sendbuff \S+ recvbuff \S+ count (\d+) datatype (\d+) op (\d+) root (-?\d+) comm (\S+) \[nranks=(\d+)\] stream \S+)"};
  // Any NCCL line: which devices a process drives.
  static const std::regex kAnyLine{R"(([A-Za-z0-9_.-]+):(\d+):\d+ \[(\d+)\] NCCL )"};
  std::set<std::string> devices;
  if (options.steps == 0) {
    throw core::UsageError("--steps: must be at least 1");
  }
  NcclDebugSummary out;
  std::map<std::tuple<std::string, std::uint64_t, std::string, std::uint32_t>, std::size_t> index;
  // The process: the one asked for, else the first with a collective line.
  out.process = options.process;
  if (out.process.empty()) {
    std::smatch first;
    if (std::regex_search(text, first, kStart)) {
      out.process = first[1].str() + ":" + first[2].str();
    }
  }
  std::istringstream in(text);
  std::string line;
  std::uint32_t number = 0;
  while (std::getline(in, line)) {
    ++number;
    std::smatch any;
    if (std::regex_search(line, any, kAnyLine) &&
        same_process(any[1].str() + ":" + any[2].str(), out.process)) {
      devices.insert(any[3].str());
    }
    std::smatch start;
    if (!std::regex_search(line, start, kStart)) {
      continue;
    }
    const std::string process = start[1].str() + ":" + start[2].str();
    if (!same_process(process, out.process)) {
      if (std::find(out.others.begin(), out.others.end(), process) == out.others.end()) {
        out.others.push_back(process);
      }
      continue;
    }
    const auto column = static_cast<std::uint32_t>(start.position(0) + 1);
    std::smatch m;
    const std::string rest = line.substr(static_cast<std::size_t>(start.position(0)));
    if (!std::regex_search(rest, m, kCall) ||
        m.position(0) != static_cast<std::ptrdiff_t>(rest.find("NCCL INFO"))) {
      throw core::LogParseError({file, number, column},
                                "an NCCL collective line without its fields (expected '... count N "
                                "datatype D op O root R "
                                "comm C [nranks=N] stream S'; a truncated line?)");
    }
    const std::string op = m[1].str();
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
      continue; // the Send of the same message is counted on its sender
    }
    // A field's number, or a positioned error when its digits do not fit 64 bits (std::stoull
    // threw std::out_of_range out of the importer: found by fuzzing).
    const auto field = [&](int k) {
      std::uint64_t v = 0;
      const std::string digits = m[k].str();
      const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
      if (ec != std::errc{} || ptr != digits.data() + digits.size()) {
        throw core::LogParseError(
            {file, number, column + static_cast<std::uint32_t>(m.position(k))},
            fmt::format("{} is out of range", digits));
      }
      return v;
    };
    const std::uint64_t type = field(4);
    if (type >= kNcclTypes.size()) {
      throw core::LogParseError(
          {file, number, column + static_cast<std::uint32_t>(m.position(4))},
          fmt::format("datatype {} is not an ncclDataType_t (0 to 11)", type));
    }
    const std::uint64_t count = field(3);
    const std::uint64_t nranks = field(8);
    if (count == 0) {
      ++out.empty_calls; // moves no data (a synchronisation, a rank's empty share)
      continue;
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
          {file, number, column + static_cast<std::uint32_t>(m.position(3))},
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
  }
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
