// collsim-probe's command line. Option names follow collsim's (--collective, --sizes) and OSU's
// short forms are accepted too (-m MIN:MAX, -i, -x, -f), so OSU users keep their habits.
// Iterations follow OSU: fewer above 8 KiB (OSU's defaults are 1000 and 100, ours 100 and 10), and
// an explicit --iterations sets both counts as OSU's -i does.

#include "collsim/probe/probe_options.hpp"

#include "collsim/core/errors.hpp"
#include "collsim/core/text.hpp"
#include "collsim/core/units.hpp"

#include <algorithm>
#include <bit>
#include <charconv>
#include <fmt/format.h>
#include <optional>

namespace collsim::probe {
namespace {

using core::UsageError;

using core::split_trimmed;
using core::trim_blanks;

std::uint32_t parse_count(std::string_view option, std::string_view text, std::uint32_t min) {
  std::uint32_t v = 0;
  const auto* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, v);
  if (text.empty() || ec != std::errc() || ptr != end) {
    throw UsageError(fmt::format("{}: expected a whole number, got '{}'", option, text));
  }
  if (v < min) {
    throw UsageError(fmt::format("{}: must be at least {}, got {}", option, min, v));
  }
  return v;
}

std::uint64_t parse_size(std::string_view text) {
  const core::Parsed<core::Bytes> p = core::parse_bytes(text);
  if (!p.ok()) {
    throw UsageError(fmt::format("--sizes: {}", p.error));
  }
  const std::uint64_t v = p.value.value;
  if (v == 0) {
    throw UsageError("--sizes: sizes start at 1 byte, got 0");
  }
  if (!std::has_single_bit(v)) {
    throw UsageError(
        fmt::format("--sizes: '{}' ({} bytes) is not a power of two", trim_blanks(text), v));
  }
  if (v > kMaxProbeSize) {
    throw UsageError(fmt::format("--sizes: '{}' is larger than the largest size per rank, 1 GiB",
                                 trim_blanks(text)));
  }
  return v;
}

void parse_sizes(std::string_view text, ProbeOptions& o) {
  const std::vector<std::string_view> parts = split_trimmed(text, ':');
  if (parts.size() > 2 || parts[0].empty() || (parts.size() == 2 && parts[1].empty())) {
    throw UsageError(fmt::format("--sizes: expected MIN:MAX or one SIZE (bytes, or with KiB, MiB, "
                                 "GiB), got '{}'",
                                 text));
  }
  o.min_bytes = parse_size(parts[0]);
  o.max_bytes = parts.size() == 2 ? parse_size(parts[1]) : o.min_bytes;
  if (o.min_bytes > o.max_bytes) {
    throw UsageError(fmt::format("--sizes: MIN ({} bytes) is larger than MAX ({} bytes)",
                                 o.min_bytes, o.max_bytes));
  }
}

std::vector<core::CollectiveKind> parse_collectives(std::string_view text) {
  std::vector<core::CollectiveKind> out;
  for (const std::string_view name : split_trimmed(text, ',')) {
    if (name == "all") {
      out.assign(core::kAllCollectives.begin(), core::kAllCollectives.end());
      return out;
    }
    if (name.empty()) {
      throw UsageError(fmt::format("--collective: empty name in '{}'", text));
    }
    core::CollectiveKind c{};
    try {
      c = core::collective_from_name(name);
    } catch (const core::UnknownNameError& e) {
      throw UsageError(fmt::format("--collective: {} (or 'all')", e.what()));
    }
    if (std::find(out.begin(), out.end(), c) == out.end()) {
      out.push_back(c);
    }
  }
  return out;
}

ProbeDatatype parse_datatype(std::string_view text) {
  std::string t(text);
  std::transform(t.begin(), t.end(), t.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  if (t == "char" || t == "mpi_char") {
    return ProbeDatatype::mpi_char;
  }
  if (t == "float" || t == "mpi_float") {
    return ProbeDatatype::mpi_float;
  }
  throw UsageError(fmt::format("--datatype: {}",
                               core::UnknownNameError("datatype", text, {"char", "float"}).what()));
}

std::vector<std::string> parse_algorithms(std::string_view text) {
  std::vector<std::string> out;
  for (const std::string_view a : split_trimmed(text, ',')) {
    if (a.empty()) {
      throw UsageError(fmt::format("--ompi-algorithm: empty entry in '{}' (expected ids or names "
                                   "such as 1,4 or basic_linear,ring)",
                                   text));
    }
    out.emplace_back(a);
  }
  return out;
}

} // namespace

std::string_view probe_version() {
  return "1.0";
}

ProbeOptions parse_probe_options(std::span<const std::string> args) {
  ProbeOptions o;
  bool iterations_large_given = false;
  std::optional<std::uint32_t> iterations_large;
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string name = args[i];
    std::optional<std::string> inline_value;
    if (name.starts_with("--")) {
      if (const auto eq = name.find('='); eq != std::string::npos) {
        inline_value = name.substr(eq + 1);
        name.resize(eq);
      }
    }
    const auto value = [&]() -> std::string {
      if (inline_value) {
        return *inline_value;
      }
      if (i + 1 >= args.size()) {
        throw UsageError(fmt::format("{}: missing value", name));
      }
      return args[++i];
    };
    const auto no_value = [&] {
      if (inline_value) {
        throw UsageError(fmt::format("{}: takes no value, got '{}'", name, *inline_value));
      }
    };
    if (name == "--collective" || name == "-c") {
      o.collectives = parse_collectives(value());
    } else if (name == "--sizes" || name == "-m") {
      parse_sizes(value(), o);
    } else if (name == "--iterations" || name == "-i") {
      o.iterations = parse_count(name, value(), 1);
      if (!iterations_large_given) {
        o.iterations_large = o.iterations;
      }
    } else if (name == "--iterations-large") {
      iterations_large = parse_count(name, value(), 1);
      iterations_large_given = true;
    } else if (name == "--warmup" || name == "-x") {
      o.warmup = parse_count(name, value(), 0);
    } else if (name == "--full" || name == "-f") {
      no_value();
      o.full = true;
    } else if (name == "--datatype" || name == "-T") {
      o.datatype = parse_datatype(value());
    } else if (name == "--ompi-algorithm") {
      o.ompi_algorithms = parse_algorithms(value());
    } else if (name == "--print-sum") {
      no_value();
      o.print_sum = true;
    } else if (name == "--describe") {
      o.describe_path = value();
      if (o.describe_path.empty()) {
        throw UsageError("--describe: expected a file name for the node's scenario");
      }
    } else if (name == "--help" || name == "-h") {
      no_value();
      o.help = true;
    } else if (name == "--version" || name == "-v") {
      no_value();
      o.version = true;
    } else {
      throw UsageError(fmt::format("unknown option '{}' (see --help)", args[i]));
    }
  }
  if (iterations_large) {
    o.iterations_large = *iterations_large;
  }
  if (o.datatype == ProbeDatatype::mpi_float && o.max_bytes < 4) {
    throw UsageError(
        fmt::format("--sizes: no size holds a whole float (4 bytes): the largest is {} "
                    "bytes",
                    o.max_bytes));
  }
  return o;
}

std::string probe_usage() {
  return R"(collsim-probe: time MPI collectives on this machine and print OSU-compatible tables.

usage: mpirun -np N collsim-probe [options]        (or: srun -n N collsim-probe [options])

  --collective LIST      allreduce (default), bcast, reduce, allgather, reduce_scatter, alltoall,
                         gather, scatter, barrier; comma-separated, or 'all'
  --sizes MIN:MAX        bytes per rank, powers of two, units B, KiB, MiB, GiB (default 4:1MiB);
                         one SIZE times that size only                      (OSU: -m)
  --iterations N         timed iterations per size (default 100; 10 above 8 KiB, as OSU times
                         fewer); setting it sets both counts                (OSU: -i)
  --iterations-large N   timed iterations above 8 KiB
  --warmup N             untimed iterations before each size (default 10)  (OSU: -x)
  --full                 add Min Latency, Max Latency and Iterations columns (OSU: -f)
  --datatype char|float  element type (default char: MPI_CHAR, OSU 7.x's default); the size
                         column is bytes either way
  --ompi-algorithm LIST  Open MPI only: force coll/tuned's algorithm, by id or name (e.g. 4 or
                         ring; 1,4 runs each in turn); ids: ompi_info --param coll tuned -l 9
  --print-sum            after each table, a '# check:' line per size with rank 0's result
                         (sum and FNV-1a hash of its bytes)
  --describe FILE        rank 0 also writes its node as a collsim scenario to FILE (hwloc, and
                         nvidia-smi topo -m and ibstat where they run), with the job's node count
  --help, --version

Latency per size: each rank's mean time per call over the timed iterations (an untimed barrier
follows each call), then the average, minimum and maximum over ranks, as OSU computes them.
Feed the output to 'collsim ingest' or 'collsim calibrate'. Exit codes: 0 success, 1 failure
while running, 2 bad usage.
)";
}

std::vector<std::uint64_t> probe_sizes(const ProbeOptions& options) {
  std::vector<std::uint64_t> out;
  for (std::uint64_t s = options.min_bytes; s <= options.max_bytes; s *= 2) {
    if (s >= datatype_size(options.datatype)) { // OSU 7.x skips sizes with no whole element
      out.push_back(s);
    }
  }
  return out;
}

std::uint32_t probe_iterations(const ProbeOptions& options, std::uint64_t bytes) {
  return bytes > kLargeMessageSize ? options.iterations_large : options.iterations;
}

std::uint32_t datatype_size(ProbeDatatype t) {
  return t == ProbeDatatype::mpi_float ? 4 : 1;
}

std::string_view datatype_option_name(ProbeDatatype t) {
  return t == ProbeDatatype::mpi_float ? "float" : "char";
}

std::string describe_options(const ProbeOptions& o) {
  std::string collectives;
  for (const core::CollectiveKind c : o.collectives) {
    collectives += collectives.empty() ? "" : ",";
    collectives += core::to_string(c);
  }
  std::string out =
      fmt::format("--collective {} --sizes {}:{} --iterations {} --iterations-large {} --warmup {} "
                  "--datatype {}",
                  collectives, o.min_bytes, o.max_bytes, o.iterations, o.iterations_large, o.warmup,
                  datatype_option_name(o.datatype));
  if (o.full) {
    out += " --full";
  }
  if (!o.ompi_algorithms.empty()) {
    out += " --ompi-algorithm ";
    for (std::size_t k = 0; k < o.ompi_algorithms.size(); ++k) {
      out += (k > 0 ? "," : "") + o.ompi_algorithms[k];
    }
  }
  if (o.print_sum) {
    out += " --print-sum";
  }
  if (!o.describe_path.empty()) {
    out += " --describe " + o.describe_path;
  }
  return out;
}

} // namespace collsim::probe
