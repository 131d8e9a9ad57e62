// A workload from a PyTorch profiler trace (Kineto's Chrome trace JSON, torch.profiler with
// on_trace_ready=tensorboard_trace_handler or export_chrome_trace; .json or .json.gz).
//
// PyTorch's c10d records every collective call as a CPU event named `record_param_comms`
// (torch/csrc/distributed/c10d/ParamCommsUtils.hpp, RECORD_PARAM_COMMS_DATA) whose args hold
// "Collective name" (allreduce, _allgather_base, ...), "In msg nelems", "Out msg nelems", "dtype"
// (c10's ScalarType name: Float, BFloat16, ...) and "Group size" (PyTorch 2.1 and later; older
// traces carry none of them). Profiled steps are the distinct "ProfilerStep#N" annotations.

#include "collsim/io/workload_import.hpp"

#include "collsim/core/errors.hpp"
#include "collsim/core/units.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <zlib.h>

#include <array>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

namespace collsim::io {
namespace {

struct CollectiveName {
  const char* pytorch;
  const char* collective; ///< collsim's; empty: not timed (a point-to-point receive)
  bool whole_is_out;      ///< nccl-tests' S is the output (allgather), else the input
};
// c10d's names (ProcessGroupNCCL's collective names, as recorded).
constexpr std::array<CollectiveName, 18> kNames{
    {{"allreduce", "allreduce", false},
     {"allreduce_coalesced", "allreduce", false},
     {"broadcast", "bcast", false},
     {"reduce", "reduce", false},
     {"allgather", "allgather", true},
     {"_allgather_base", "allgather", true},
     {"allgather_coalesced", "allgather", true},
     {"allgather_into_tensor_coalesced", "allgather", true},
     {"reduce_scatter", "reduce_scatter", false},
     {"_reduce_scatter_base", "reduce_scatter", false},
     {"reduce_scatter_tensor_coalesced", "reduce_scatter", false},
     {"all_to_all", "alltoall", false},
     {"alltoall", "alltoall", false},
     {"alltoall_base", "alltoall", false},
     {"gather", "gather", true},
     {"scatter", "scatter", false},
     {"send", "bcast", false},
     {"recv", "", false}}};

struct TypeName {
  const char* scalar_type; ///< c10::ScalarType's name
  const char* dtype;       ///< nccl-tests' name
  std::uint32_t bytes;
};
constexpr std::array<TypeName, 12> kTypes{{{"Float", "float", 4},
                                           {"BFloat16", "bfloat16", 2},
                                           {"Half", "half", 2},
                                           {"Double", "double", 8},
                                           {"Long", "int64", 8},
                                           {"Int", "int32", 4},
                                           {"Short", "int16", 2},
                                           {"Char", "int8", 1},
                                           {"Byte", "uint8", 1},
                                           {"Bool", "uint8", 1},
                                           {"Float8_e4m3fn", "fp8_e4m3", 1},
                                           {"Float8_e5m2", "fp8_e5m2", 1}}};

/// The file's bytes, inflated when it is gzip (zlib reads plain files through as they are).
std::string read_maybe_gzip(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  if (f == nullptr) {
    throw core::LogParseError({path, 0, 0}, "cannot open the file");
  }
  std::string out;
  std::array<char, 1 << 16> buf{};
  int n = 0;
  while ((n = gzread(f, buf.data(), static_cast<unsigned>(buf.size()))) > 0) {
    out.append(buf.data(), static_cast<std::size_t>(n));
  }
  int err = Z_OK;
  const char* message = gzerror(f, &err);
  const std::string why = message != nullptr ? message : "";
  gzclose(f);
  if (n < 0 || (err != Z_OK && err != Z_STREAM_END)) {
    throw core::LogParseError({path, 0, 0}, fmt::format("not a complete gzip file ({})", why));
  }
  return out;
}

core::SourcePos position(const std::string& path, const std::string& text, std::size_t byte) {
  core::SourcePos pos{path, 1, 1};
  for (std::size_t i = 0; i < byte && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++pos.line;
      pos.column = 1;
    } else {
      ++pos.column;
    }
  }
  return pos;
}

std::uint64_t whole(const nlohmann::json& v) {
  return v.is_number_unsigned() ? v.get<std::uint64_t>()
         : v.is_number_integer() && v.get<std::int64_t>() > 0
             ? static_cast<std::uint64_t>(v.get<std::int64_t>())
             : 0;
}

/// distributedInfo's `key` (rank or world_size), 0 when absent. A number outside 0 to 2^32 - 1
/// is a damaged trace (converting 2.9e49 to int was undefined behaviour: found by fuzzing); a
/// value of another type leaves nlohmann's type error to import_kineto_trace.
std::uint32_t rank_field(const std::string& path, const nlohmann::json& d, const char* key) {
  if (!d.is_object() || !d.contains(key) || !d[key].is_number()) {
    return static_cast<std::uint32_t>(d.value(key, 0));
  }
  const nlohmann::json& v = d[key];
  const double x = v.is_number_unsigned()  ? static_cast<double>(v.get<std::uint64_t>())
                   : v.is_number_integer() ? static_cast<double>(v.get<std::int64_t>())
                                           : v.get<double>();
  if (!(x >= 0.0 && x < 4294967296.0)) {
    throw core::LogParseError({path, 0, 0},
                              fmt::format("distributedInfo.{} is {}, not a rank count (0 to "
                                          "4294967295)",
                                          key, v.dump()));
  }
  return static_cast<std::uint32_t>(x);
}

/// nlohmann's message without its "[json.exception.kind.id] " prefix.
std::string json_message(const nlohmann::json::exception& e) {
  const std::string what = e.what();
  const auto bracket = what.find("] ");
  return bracket == std::string::npos ? what : what.substr(bracket + 2);
}

KinetoSummary read_trace(const std::string& path, const nlohmann::json& trace,
                         const KinetoImport& options);

} // namespace

KinetoSummary import_kineto_trace(const std::string& path, const KinetoImport& options) {
  const std::string text = read_maybe_gzip(path);
  nlohmann::json trace;
  try {
    trace = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    const std::string what = e.what();
    throw core::LogParseError(
        position(path, text, e.byte > 0 ? e.byte - 1 : 0),
        fmt::format("not a complete JSON trace: {}", what.substr(what.find(':') + 2)));
  } catch (const nlohmann::json::exception& e) {
    // Valid syntax the parser still refuses: a number past a double's range (out_of_range 406,
    // found by fuzzing). It gives no offset; the number it quotes is found in the text.
    const std::string message = json_message(e);
    const auto open = message.find('\'');
    const auto close = message.rfind('\'');
    const std::size_t at =
        open != std::string::npos && close > open
            ? std::min(text.find(message.substr(open + 1, close - open - 1)), text.size())
            : 0;
    throw core::LogParseError(position(path, text, at),
                              fmt::format("not a JSON trace collsim can read: {}", message));
  }
  try {
    return read_trace(path, trace, options);
  } catch (const nlohmann::json::exception& e) {
    // A field of another type than PyTorch writes ("rank": "0", "args": [...]).
    throw core::LogParseError(
        {path, 0, 0},
        fmt::format("a field of the trace has an unexpected type: {}", json_message(e)));
  }
}

namespace {

/// The workload of a parsed trace; nlohmann's type errors escape to import_kineto_trace.
KinetoSummary read_trace(const std::string& path, const nlohmann::json& trace,
                         const KinetoImport& options) {
  const nlohmann::json* events = trace.is_object() && trace.contains("traceEvents")
                                     ? &trace["traceEvents"]
                                 : trace.is_array() ? &trace
                                                    : nullptr;
  if (events == nullptr || !events->is_array()) {
    throw core::LogParseError(
        {path, 1, 1}, "not a Chrome trace: no traceEvents array (export it with torch.profiler)");
  }
  KinetoSummary out;
  if (trace.is_object() && trace.contains("distributedInfo")) {
    const auto& d = trace["distributedInfo"];
    out.rank = rank_field(path, d, "rank");
    out.world = rank_field(path, d, "world_size");
  }
  std::set<std::string> steps;
  std::map<std::tuple<std::string, std::uint64_t, std::uint32_t>, std::size_t> index;
  std::uint64_t comms = 0;
  for (const auto& e : *events) {
    if (!e.is_object() || !e.contains("name") || !e["name"].is_string()) {
      continue;
    }
    const std::string name = e["name"].get<std::string>();
    if (name.rfind("ProfilerStep#", 0) == 0) {
      steps.insert(name);
      continue;
    }
    if (name != "record_param_comms") {
      continue;
    }
    ++comms;
    const nlohmann::json args = e.value("args", nlohmann::json::object());
    if (!args.contains("Collective name") || !args["Collective name"].is_string()) {
      ++out.without_sizes;
      continue;
    }
    const std::string coll = args["Collective name"].get<std::string>();
    const auto known = std::find_if(kNames.begin(), kNames.end(),
                                    [&](const CollectiveName& c) { return coll == c.pytorch; });
    if (known == kNames.end()) {
      ++out.skipped[coll]; // wait, barrier, monitored_barrier: no data to time
      continue;
    }
    if (std::string(known->collective).empty()) {
      continue; // a recv: its send is counted on the sender
    }
    const std::string scalar = args.value("dtype", std::string());
    const auto type = std::find_if(kTypes.begin(), kTypes.end(),
                                   [&](const TypeName& t) { return scalar == t.scalar_type; });
    if (type == kTypes.end()) {
      ++out.skipped[fmt::format("{} of dtype '{}'", coll, scalar)];
      continue;
    }
    const std::uint64_t in = whole(args.value("In msg nelems", nlohmann::json()));
    const std::uint64_t out_n = whole(args.value("Out msg nelems", nlohmann::json()));
    const std::uint64_t group = whole(args.value("Group size", nlohmann::json()));
    const std::uint64_t elements = known->whole_is_out ? out_n : in;
    if (elements == 0 || group == 0) {
      ++out.skipped[coll + " without a size"];
      continue;
    }
    if (group > std::numeric_limits<std::uint32_t>::max() ||
        elements > std::numeric_limits<std::uint64_t>::max() / type->bytes) {
      // Past what any job holds: a damaged trace, not a size to round.
      throw core::LogParseError(
          {path, 0, 0},
          fmt::format("record_param_comms: {} of {} elements in a group of {} is beyond 64-bit "
                      "sizes and 32-bit rank counts",
                      coll, elements, group));
    }
    ImportedCall call;
    call.op = coll;
    call.collective = known->collective;
    call.count = elements;
    call.dtype = type->dtype;
    call.nranks = static_cast<std::uint32_t>(std::string(known->pytorch) == "send" ? 2 : group);
    call.bytes = elements * type->bytes;
    const auto key = std::make_tuple(std::string(call.collective), call.bytes, call.nranks);
    const auto [it, fresh] = index.emplace(key, out.calls.size());
    if (fresh) {
      out.calls.push_back(call);
    }
    ++out.calls[it->second].calls;
  }
  if (comms == 0) {
    throw core::LogParseError(
        {path, 1, 1}, "no collective calls in the trace (no record_param_comms events): profile a "
                      "torch.distributed job with torch.profiler");
  }
  if (out.calls.empty()) {
    throw core::LogParseError(
        {path, 1, 1},
        out.without_sizes > 0
            ? fmt::format(
                  "the trace's {} record_param_comms events carry no collective name or sizes "
                  "(PyTorch records them from 2.1 on)",
                  out.without_sizes)
            : "no collective call with data to time (only waits and barriers)");
  }
  out.steps = options.steps > 0
                  ? options.steps
                  : std::max<std::uint32_t>(1, static_cast<std::uint32_t>(steps.size()));
  std::uint32_t world = out.world;
  for (const ImportedCall& c : out.calls) {
    world = std::max(world, c.nranks);
  }
  std::string y = fmt::format(
      "# Written by {}\n", options.command.empty() ? "collsim workload import" : options.command);
  y += fmt::format("# from {} record_param_comms events of rank {} of {} in {}, {} step{} ({})\n",
                   comms, out.rank, world, path.substr(path.find_last_of('/') + 1), out.steps,
                   out.steps == 1 ? "" : "s",
                   options.steps > 0 ? "--steps"
                   : steps.empty()   ? "no ProfilerStep annotation"
                                     : "its ProfilerStep annotations");
  for (const auto& [what, n] : out.skipped) {
    y += fmt::format("# left out: {} x {}\n", n, what);
  }
  y += "# Each phase's process group is the first `ranks` ranks of the job; a send is a message\n"
       "# between two ranks (bcast on a pair).\n";
  y += fmt::format("name: {}\n", options.name);
  y += fmt::format("description: \"PyTorch collective calls of rank {}, from {}\"\n", out.rank,
                   path.substr(path.find_last_of('/') + 1));
  y += "phases:\n";
  for (const ImportedCall& c : out.calls) {
    const std::uint64_t per_step = (c.calls + out.steps - 1) / out.steps;
    y += fmt::format("  - name: {} {} n={}   # {} x {}\n", c.op,
                     core::format_bytes(core::Bytes{c.bytes}), c.nranks, c.count, c.dtype);
    y += fmt::format("    collective: {}\n", c.collective);
    y += fmt::format("    bytes: {}\n", c.bytes);
    y += fmt::format(
        "    calls: {}{}\n", per_step,
        c.calls % out.steps == 0 ? "" : fmt::format("   # {} in the trace, rounded up", c.calls));
    y += c.op == "send" ? "    group: pair\n"
                        : fmt::format("    group: world\n    ranks: {}\n", c.nranks);
  }
  out.yaml = y;
  return out;
}

} // namespace

} // namespace collsim::io
