#include "cli_support.hpp"

#include "collsim/core/errors.hpp"
#include "collsim/core/layout.hpp"
#include "collsim/core/sizes.hpp"
#include "collsim/distributed/session.hpp"
#include "collsim/io/imbalance_files.hpp"
#include "collsim/stacks/stack.hpp"

#include <CLI/CLI.hpp>

#include <charconv>
#include <cstdio>
#include <fmt/format.h>
#include <fstream>
#include <iostream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <unistd.h>

namespace collsim::cli {
namespace {

std::uint64_t parse_uint(std::string_view s, const std::string& option, const std::string& whole) {
  std::uint64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || ptr != s.data() + s.size() || s.empty()) {
    throw core::UsageError(fmt::format(
        "{}: expected rank counts like '16', '8,16,64', '1..64' or '2..1024:x2', got '{}'", option,
        whole));
  }
  return v;
}

} // namespace

std::vector<std::uint32_t> parse_ranks(const std::string& text, const std::string& option) {
  constexpr std::uint64_t kMax = 1ULL << 24;
  std::vector<std::uint64_t> values;
  const auto dots = text.find("..");
  if (dots != std::string::npos) {
    std::string_view rest = std::string_view(text).substr(dots + 2);
    std::uint64_t factor = 0;
    if (const auto colon = rest.find(":x"); colon != std::string_view::npos) {
      factor = parse_uint(rest.substr(colon + 2), option, text);
      rest = rest.substr(0, colon);
      if (factor < 2) {
        throw core::UsageError(
            fmt::format("{}: the factor in '{}' must be at least 2", option, text));
      }
    }
    const std::uint64_t lo = parse_uint(std::string_view(text).substr(0, dots), option, text);
    const std::uint64_t hi = parse_uint(rest, option, text);
    if (hi < lo || lo == 0) {
      throw core::UsageError(fmt::format("{}: '{}' is an empty range", option, text));
    }
    if (hi > kMax) {
      throw core::UsageError(fmt::format("{}: at most {} ranks, got {}", option, kMax, hi));
    }
    for (std::uint64_t v = lo; v <= hi; v = factor != 0 ? v * factor : v + 1) {
      values.push_back(v);
    }
  } else {
    std::size_t start = 0;
    while (start <= text.size()) {
      auto comma = text.find(',', start);
      if (comma == std::string::npos) {
        comma = text.size();
      }
      values.push_back(
          parse_uint(std::string_view(text).substr(start, comma - start), option, text));
      start = comma + 1;
    }
  }
  std::vector<std::uint32_t> out;
  for (auto v : values) {
    if (v == 0) {
      throw core::UsageError(fmt::format("{}: a collective needs at least 1 rank, got 0", option));
    }
    if (v > kMax) {
      throw core::UsageError(fmt::format("{}: at most {} ranks, got {}", option, kMax, v));
    }
    out.push_back(static_cast<std::uint32_t>(v));
  }
  return out;
}

std::vector<core::Bytes> parse_sizes(const std::string& text, const std::string& option) {
  auto parsed = core::parse_size_sweep(text);
  if (!parsed.ok()) {
    throw core::UsageError(fmt::format("{}: {}", option, parsed.error));
  }
  return parsed.value;
}

core::Bytes parse_size(const std::string& text, const std::string& option) {
  auto parsed = core::parse_bytes(text);
  if (!parsed.ok()) {
    throw core::UsageError(fmt::format("{}: {}", option, parsed.error));
  }
  return parsed.value;
}

void add_memory_option(CLI::App& cmd, std::string& text) {
  cmd.add_option("--max-memory", text,
                 "The most memory the sweep's points may hold at once, e.g. '16 GiB' (default: "
                 "the memory available when it starts; a point that needs more runs alone)");
}

std::optional<std::uint64_t> parse_memory_option(const std::string& text) {
  if (text.empty()) {
    return std::nullopt;
  }
  const core::Bytes bytes = parse_size(text, "--max-memory");
  if (bytes.value == 0) {
    throw core::UsageError("--max-memory: must be more than 0 bytes");
  }
  return bytes.value;
}

CollectiveOptions parse_collective_options(const std::string& collective, const std::string& counts,
                                           const std::string& skew) {
  CollectiveOptions out;
  const auto named = core::parse_collective_name(collective);
  if (!named) {
    out.kind = core::collective_from_name(collective); // throws UnknownNameError with the list
  } else {
    out.kind = named->kind;
  }
  using CK = core::CountsSpec::Kind;
  if (!counts.empty()) {
    const core::Parsed<core::CountsSpec> c = core::parse_counts_spec(counts);
    if (!c.ok()) {
      throw core::UsageError(fmt::format("--counts '{}': {}", counts, c.error));
    }
    out.counts = c.value;
    if (out.counts.kind != CK::none && !core::has_counts_variant(out.kind)) {
      throw core::UsageError(
          fmt::format("--counts: {} has no v-variant (counts apply to allgather, gather, scatter, "
                      "reduce_scatter and alltoall)",
                      core::to_string(out.kind)));
    }
    const bool graph = out.counts.kind == CK::cart || out.counts.kind == CK::graph ||
                       out.counts.kind == CK::sparse;
    if (graph && out.kind != core::CollectiveKind::alltoall) {
      throw core::UsageError("--counts: a process graph's counts belong to an alltoall "
                             "(--collective neighbor_alltoall)");
    }
    io::load_counts_data(out.counts, "");
  }
  if (named && named->neighbor && out.counts.kind != CK::cart && out.counts.kind != CK::graph &&
      out.counts.kind != CK::sparse) {
    throw core::UsageError(fmt::format("--collective {} needs its process graph: --counts "
                                       "cart:DxD[,periodic], graph:PATH or sparse:D",
                                       collective));
  }
  if (named && named->v && out.counts.kind == CK::none) {
    out.counts.kind = CK::uniform;
    out.counts.text = "uniform";
  }
  if (!skew.empty()) {
    const core::Parsed<core::SkewSpec> s = core::parse_skew_spec(skew);
    if (!s.ok()) {
      throw core::UsageError(fmt::format("--skew '{}': {}", skew, s.error));
    }
    out.skew = s.value;
    io::load_skew_data(out.skew, "");
  }
  return out;
}

std::map<std::string, std::string> parse_params(const std::vector<std::string>& items) {
  std::map<std::string, std::string> out;
  for (const auto& item : items) {
    const auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == item.size()) {
      throw core::UsageError(fmt::format(
          "--param: expected NAME=VALUE (e.g. segment_size=64KiB or inter=ring), got '{}'", item));
    }
    out[item.substr(0, eq)] = item.substr(eq + 1);
  }
  return out;
}

std::string read_input_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw core::UsageError(fmt::format("{}: cannot open the file", path));
  }
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void emit(const std::string& text, const std::string& path) {
  if (!distributed::primary()) {
    return; // in an MPI job rank 0 writes what every rank computed
  }
  if (path.empty() || path == "-") {
    std::cout << text << std::flush;
    return;
  }
  std::ofstream f(path);
  if (!f) {
    throw core::UsageError(fmt::format("cannot write '{}'", path));
  }
  f << text;
}

analysis::Progress terminal_progress(const std::string& label) {
  if (isatty(STDERR_FILENO) == 0) {
    return {};
  }
  auto lock = std::make_shared<std::mutex>();
  return [label, lock](std::size_t done, std::size_t total) {
    const std::lock_guard guard(*lock);
    std::fprintf(stderr, "\r%s: %zu/%zu points", label.c_str(), done, total);
    if (done == total) {
      std::fprintf(stderr, "\r\033[K");
    }
    std::fflush(stderr);
  };
}

std::string format_crossovers(const std::vector<analysis::CrossoverRange>& ranges) {
  std::string out = fmt::format("# {:>6}  {:>12}  {:>12}  {:<22}  {:<22}  {}\n", "ranks", "from",
                                "to", "fastest", "runner-up", "speedup");
  for (const auto& r : ranges) {
    const std::string speed =
        r.runner_up.empty() ? std::string("-")
                            : (r.min_speedup == r.max_speedup
                                   ? fmt::format("{:.2f}x", r.min_speedup)
                                   : fmt::format("{:.2f}x-{:.2f}x", r.min_speedup, r.max_speedup));
    out += fmt::format("  {:>6}  {:>12}  {:>12}  {:<22}  {:<22}  {}\n", r.ranks,
                       core::format_bytes(r.from), core::format_bytes(r.to), r.winner,
                       r.runner_up.empty() ? "-" : r.runner_up, speed);
  }
  return out;
}

std::string crossovers_json(const std::vector<analysis::CrossoverRange>& ranges) {
  nlohmann::json arr = nlohmann::json::array();
  for (const auto& r : ranges) {
    arr.push_back({{"collective", std::string(core::to_string(r.collective))},
                   {"ranks", r.ranks},
                   {"from_bytes", r.from.value},
                   {"to_bytes", r.to.value},
                   {"fastest", r.winner},
                   {"runner_up", r.runner_up},
                   {"min_speedup", r.min_speedup},
                   {"max_speedup", r.max_speedup}});
  }
  return arr.dump();
}

namespace {

/// The value of --ranks or --nodes: a whole number from 1 to 2^24. `what` is "rank" or "node".
std::uint32_t parse_count(const std::string& text, const char* option, const char* what,
                          const char* example) {
  constexpr std::uint64_t kMax = 1ULL << 24;
  const bool negative = text.size() > 1 && text.front() == '-';
  const std::string_view digits = std::string_view(text).substr(negative ? 1 : 0);
  std::uint64_t v = 0;
  const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
  if (digits.empty() || ptr != digits.data() + digits.size() ||
      (ec != std::errc{} && ec != std::errc::result_out_of_range)) {
    throw core::UsageError(fmt::format("{}: expected a whole number of {}s like '{}', got '{}'",
                                       option, what, example, text));
  }
  if (negative || v == 0) {
    throw core::UsageError(
        fmt::format("{}: a log needs at least 1 {}, got {}", option, what, text));
  }
  if (ec == std::errc::result_out_of_range || v > kMax) {
    throw core::UsageError(fmt::format("{}: at most {} {}s, got {}", option, kMax, what, text));
  }
  return static_cast<std::uint32_t>(v);
}

} // namespace

void add_stack_options(CLI::App& cmd, StackOptions& options, std::string_view buffers_default) {
  cmd.add_option("--stack", options.stack,
                 "Library stack the algorithms run under (collsim stacks lists them: nccl, "
                 "openmpi-4.1, openmpi-4.1+ucc, openmpi-4.1+ucc+nccl, direct); default: the "
                 "scenario's stack, else each algorithm's own");
  cmd.add_option("--buffers", options.buffers,
                 fmt::format("Where the buffers live: device or host (default: the scenario's "
                             "buffers, else {})",
                             buffers_default));
}

void apply_stack_options(const StackOptions& options, core::Scenario& scenario) {
  if (!options.stack.empty()) {
    scenario.stack = options.stack;
    scenario.stack_pos = {};
  }
  if (!options.buffers.empty()) {
    if (options.buffers != "device" && options.buffers != "host") {
      throw core::UsageError(
          fmt::format("--buffers: expected device or host, got '{}'", options.buffers));
    }
    scenario.buffers = options.buffers;
    scenario.buffers_pos = {};
  }
  analysis::check_stack(scenario);
}

void add_log_shape_options(CLI::App& cmd, LogShapeOptions& options) {
  options.ranks_option =
      cmd.add_option("--ranks", options.ranks,
                     "Rank count of every log given, for logs that do not state it (OSU tables "
                     "without a launch command, tables pasted without nccl-tests' device list); "
                     "replaces a count the log states, with a warning");
  options.nodes_option =
      cmd.add_option("--nodes", options.nodes,
                     "Node count of every log given (ranks per node = ranks / nodes); replaces a "
                     "count the log states, with a warning");
}

io::LogShape log_shape(const LogShapeOptions& options) {
  io::LogShape shape;
  if (options.ranks_option != nullptr && options.ranks_option->count() > 0) {
    shape.ranks = parse_count(options.ranks, "--ranks", "rank", "16");
  }
  if (options.nodes_option != nullptr && options.nodes_option->count() > 0) {
    shape.nodes = parse_count(options.nodes, "--nodes", "node", "2");
  }
  if (shape.ranks && shape.nodes) {
    if (*shape.nodes > *shape.ranks) {
      throw core::UsageError(fmt::format("--nodes {} is more than --ranks {}: every node runs at "
                                         "least one rank",
                                         *shape.nodes, *shape.ranks));
    }
    if (*shape.ranks % *shape.nodes != 0) {
      throw core::UsageError(fmt::format("--ranks {} does not divide evenly over --nodes {}: "
                                         "ranks per node = ranks / nodes must be a whole number",
                                         *shape.ranks, *shape.nodes));
    }
  }
  return shape;
}

void add_print_options(CLI::App& cmd, PrintOptions& o, const std::string& formats) {
  cmd.add_option("--engine", o.engine, "Engine: loggp, simgrid or analytic")->capture_default_str();
  cmd.add_option("--format", o.format, formats)->capture_default_str();
  cmd.add_option("-o,--output", o.output, "Write to this file instead of standard output");
  cmd.add_option("--threads", o.threads,
                 "Worker threads (0: all cores; under mpirun or srun: 1 per process)")
      ->capture_default_str();
  add_stack_options(cmd, o.stack);
}

Format parse_format(const std::string& text) {
  if (text == "table") {
    return Format::table;
  }
  if (text == "csv") {
    return Format::csv;
  }
  if (text == "json") {
    return Format::json;
  }
  throw core::UnknownNameError("format", text, {"table", "csv", "json"});
}

} // namespace collsim::cli

#include <filesystem>

namespace collsim::cli {

std::string default_scenario_path() {
  const std::filesystem::path local = "scenarios/default.yaml";
  if (std::filesystem::exists(local)) {
    return local.string();
  }
  const std::filesystem::path built = std::filesystem::path(COLLSIM_DATA_DIR) / local;
  if (std::filesystem::exists(built)) {
    return built.string();
  }
  return "default"; // the compiled-in preset: collsim runs from any directory
}

} // namespace collsim::cli
