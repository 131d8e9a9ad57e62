#pragma once
// Measured collective logs: the text that nccl-tests, OSU micro-benchmarks (5.x to 7.x) and
// IMB-MPI1 print, as users paste it (shell prompts, `0: ` srun prefixes, interleaved warnings,
// markdown fences, truncated tables). The parsers turn it into plain values with source lines;
// formats are described in docs/logs.md and ../shared/reference/formats.md.

#include "collsim/core/collective.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace collsim::io {

/// The program family a log comes from.
enum class LogFormat : std::uint8_t { nccl_tests, osu, imb };

/// "nccl-tests", "osu" or "imb".
std::string_view to_string(LogFormat format);

/// One measured point: one message size of one run (nccl-tests rows give two, out-of-place and
/// in-place). Times in microseconds, bandwidths in GB/s (10^9 B/s).
struct Measurement {
  /// What was timed: a collective ("allreduce", "bcast", ... as core::to_string spells them),
  /// a variant without a collsim collective ("allgatherv", "alltoallv"), or a point-to-point test
  /// ("latency", "bw", "bibw" from OSU; "sendrecv" from nccl-tests; "pingpong" from IMB).
  std::string operation;
  /// The collective when `operation` is one of the nine collsim models.
  std::optional<core::CollectiveKind> collective;
  /// nccl-tests' size column (max(send, recv) bytes of one rank); OSU's and IMB's message size.
  std::uint64_t bytes = 0;
  /// Elements per call: nccl-tests' count column; bytes / type size for OSU and IMB.
  std::uint64_t count = 0;
  std::string type;        ///< element type as the tool names it: "float", "MPI_CHAR", "MPI_FLOAT"
  std::string redop;       ///< "sum", ... or "none"
  std::int64_t root = -1;  ///< root rank; -1 when the operation has none or it rotates (IMB)
  std::uint32_t ranks = 0; ///< ranks taking part; 0 when the log does not tell
  bool in_place = false;   ///< nccl-tests' in-place column group
  double time_us = 0.0;    ///< average time per call; 0 for bandwidth tests (osu_bw, bibw)
  std::optional<double> min_time_us;       ///< OSU -f "Min Latency", IMB t_min
  std::optional<double> max_time_us;       ///< OSU -f "Max Latency", IMB t_max
  std::optional<std::uint64_t> iterations; ///< OSU -f "Iterations", IMB #repetitions
  double algbw_GBps = 0.0; ///< nccl-tests algbw; OSU/IMB bandwidth (MB/s / 1000); else 0
  double busbw_GBps = 0.0; ///< nccl-tests busbw; else 0
  std::string file;        ///< the log file
  std::size_t line = 0;    ///< 1-based line of the row
  std::uint32_t run = 0;   ///< index into ParsedLog::runs

  bool operator==(const Measurement&) const = default;
};

/// An NCCL environment variable a log shows its run set, where the log shows it: `export
/// NCCL_ALGO=Ring`, `NCCL_PROTO=LL128 ./all_reduce_perf ...`, mpirun's `-x NCCL_ALGO=Ring`,
/// Hydra's `-genv NCCL_ALGO Ring`, srun's `--export=ALL,NCCL_ALGO=Ring`, or NCCL_DEBUG=INFO's
/// "NCCL_ALGO set by environment to Ring".
struct EnvSetting {
  std::string name;  ///< "NCCL_ALGO"
  std::string value; ///< "Ring", without quotes
  std::size_t line = 0;
  std::size_t column = 0; ///< 1-based, of the name
  bool operator==(const EnvSetting&) const = default;
};

/// What a log says about one run (one table: one benchmark invocation, one datatype).
struct LogInfo {
  LogFormat format = LogFormat::nccl_tests;
  /// The program or benchmark: "all_reduce_perf", "OSU MPI-CUDA Reduce Latency Test",
  /// "IMB-MPI1 Allreduce"; empty when the log does not name it (nccl-tests tables pasted alone).
  std::string benchmark;
  std::string operation; ///< as in Measurement
  std::optional<core::CollectiveKind> collective;
  /// How the operation was found: "program name", "benchmark header" or, for nccl-tests tables
  /// without a program name, "columns" (size, count, redop and root; see docs/logs.md).
  std::string operation_source;
  std::string tool_version;      ///< "2.19.4" (nccl-tests), "7.3" (OSU), "2021.3" (IMB)
  std::string nccl_version;      ///< "2.19.3", from nccl-library= or a "NCCL version" line
  std::string mpi_version;       ///< IMB's "MPI Version" line, collsim-probe's "MPI library" line
  std::string datatype;          ///< "float", "MPI_CHAR", ...
  std::string accelerator;       ///< "cuda", "rocm", ... for OSU -d; empty for host buffers
  std::string buffers;           ///< OSU point-to-point buffer placement, e.g. "D D"
  std::vector<std::string> gpus; ///< distinct GPU models of the nccl-tests device list
  /// GPUs one thread drives (nccl-tests' nGpus, `-g`): above 1, the thread launches each GPU's
  /// kernel in turn for every call; 0 when the log does not say.
  std::uint32_t gpus_per_thread = 0;
  std::uint32_t nodes = 0; ///< distinct hosts; 0 when unknown
  /// Where `nodes` comes from: "device list", "launch command", "collsim-probe header", "--nodes"
  /// (LogShape), or "" (unknown).
  std::string nodes_source;
  std::uint32_t ranks = 0; ///< 0 when unknown
  /// Where `ranks` comes from: "device list", "size / (count x type size)", "busbw / algbw",
  /// "launch command", "#processes", "point-to-point" (OSU pt2pt tests use 2), "collsim-probe
  /// header", "--ranks" (LogShape), or "" (unknown).
  std::string ranks_source;
  std::string command; ///< the launch command line seen before the run, if any (80 characters)
  /// The same command whole (printable, up to 4096 characters): what the model reads from it
  /// (the stack: coll/hcoll or coll/ucc enabled, UCC's variables).
  std::string command_line;
  /// NCCL_ variables the run set (nccl-tests logs), in the order the log shows them: variables
  /// exported earlier in the file, then those of the run's own command and NCCL's INFO lines.
  /// A later setting of a name wins.
  std::vector<EnvSetting> env;
  /// Open MPI MCA parameters the run's launch command sets (`--mca NAME VALUE`, `-x
  /// OMPI_MCA_NAME=VALUE`, ...), names without OMPI_MCA_, in the command's order: a later
  /// setting of a name wins. They steer Open MPI's own choice for the run (coll/tuned's forced
  /// algorithms, docs/library-defaults.md).
  std::vector<EnvSetting> mca;
  bool out_of_place = false; ///< the run has out-of-place measurements
  bool in_place = false;     ///< ... and in-place ones (nccl-tests)
  std::size_t line = 0;      ///< first line of the run (its banner or column header)
  std::size_t rows = 0;      ///< data rows (lines) read

  bool operator==(const LogInfo&) const = default;
};

/// A line that was skipped or looks wrong; the log was still read.
struct LogWarning {
  std::size_t line = 0; ///< 1-based
  std::string text;
  bool operator==(const LogWarning&) const = default;
};

struct ParsedLog {
  std::string file;
  LogFormat format = LogFormat::nccl_tests;
  std::vector<LogInfo> runs;
  std::vector<Measurement> measurements; ///< in file order
  std::vector<LogWarning> warnings;      ///< in line order
  bool operator==(const ParsedLog&) const = default;
};

/// Detects the format of `text` and reads every run. `file` names the log in positions and in
/// Measurement::file. Throws core::LogParseError ("file:line:column: error: ...") when the text
/// is empty, binary, of no known format, or has no data row.
ParsedLog parse_log(std::string_view text, std::string file);

/// Reads the file at `path` and parses it; throws core::LogParseError when it cannot be read.
ParsedLog load_log(const std::string& path);

/// Rank and node counts given by the user (`--ranks N`, `--nodes M`) for logs that do not state
/// them (OSU tables without a launch command, nccl-tests tables pasted without a device list).
struct LogShape {
  std::optional<std::uint32_t> ranks; ///< >= 1
  std::optional<std::uint32_t> nodes; ///< >= 1
  bool operator==(const LogShape&) const = default;
};

/// Applies `shape` to every run of `log`: a given count replaces the log's own (ranks_source
/// "--ranks", nodes_source "--nodes"; measurements follow), a warning names the log's value where
/// it differed, and the "rank count is unknown" warning of a run that now has one is dropped.
/// Throws core::UsageError when a run's ranks do not divide evenly over its nodes (ranks per node
/// = ranks / nodes) or it has more nodes than ranks, and a count came from `shape`.
void apply_log_shape(ParsedLog& log, const LogShape& shape);

/// "file:line: warning: text", the form the CLI prints.
std::string format_warning(const ParsedLog& log, const LogWarning& warning);

} // namespace collsim::io
