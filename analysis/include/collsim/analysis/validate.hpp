#pragma once
// Validation: collsim's predictions against measured times (issue 6; docs/validation.md). The
// measured points come from logs (io::parse_log), converted by the caller into MeasuredPoint, so
// that analysis does not depend on the log formats.

#include "collsim/algorithms/registry.hpp"
#include "collsim/analysis/simulate.hpp"
#include "collsim/core/errors.hpp"
#include "collsim/core/scenario.hpp"

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

namespace collsim::analysis {

/// Which library ran a measurement: it decides the algorithms `auto` considers.
enum class Library : std::uint8_t {
  unknown, ///< every algorithm collsim has
  nccl,    ///< nccl-tests: NCCL's algorithms
  mpi      ///< OSU, IMB, collsim-probe: MPI algorithms (those that are not NCCL's)
};

/// OSU's point-to-point benchmarks between two ranks (MeasuredPoint::pt2pt; osu_pt2pt.hpp times
/// their iterations).
enum class Pt2pt : std::uint8_t {
  none,    ///< a collective
  latency, ///< osu_latency: a ping-pong, half its round trip
  bw,      ///< osu_bw: a window of messages one way, then a 4-byte reply
  bibw     ///< osu_bibw: a window of messages each way at once
};

/// One measured time of a collective, in collsim's conventions (bytes: nccl-tests' S), or of one
/// of OSU's point-to-point benchmarks (`pt2pt`): then `bytes` is one message and `time` the time
/// per message OSU's figure says (osu_latency's latency; the message size over osu_bw's or
/// osu_bibw's bandwidth), `collective` bcast (data moved, nothing reduced) and `ranks` 2.
struct MeasuredPoint {
  Library library = Library::unknown;
  core::CollectiveKind collective = core::CollectiveKind::allreduce;
  Pt2pt pt2pt = Pt2pt::none;
  /// osu_bw's and osu_bibw's messages in flight per iteration (window_size: 64, or `-W`).
  std::uint32_t window = 64;
  std::uint32_t ranks = 0;
  core::Bytes bytes{0};
  core::Seconds time;
  bool in_place = false;
  /// Bytes per element of the measured data type (MPI_CHAR 1, float 4); 0 when unknown. Open
  /// MPI's choice depends on element counts in places.
  std::uint32_t element_bytes = 0;
  /// The MPI library the log names (IMB's "MPI Version", collsim-probe's "MPI library"), if any,
  /// with " (coll/hcoll enabled)" or " (coll/ucc enabled)" when the launch command enables them
  /// (their collectives then run instead of coll/tuned's).
  std::string mpi_library;
  std::string file; ///< where it was measured, for reports
  std::size_t line = 0;
  /// NCCL environment variables the log shows its run set (io::LogInfo::env; a later setting of
  /// a name wins), and where each is written. They constrain NCCL's choice for the point on top
  /// of the scenario's `nccl.env`.
  std::map<std::string, std::string> nccl_env;
  std::map<std::string, core::SourcePos> nccl_env_pos;
  /// Open MPI MCA parameters the log's launch command sets (io::LogInfo::mca; names without
  /// OMPI_MCA_, a later setting wins), and where each is written. On top of the scenario's
  /// `mpi.env` they steer Open MPI's choice for the point (coll/tuned's forced algorithms).
  std::map<std::string, std::string> mca;
  std::map<std::string, core::SourcePos> mca_pos;
  /// The NCCL release the log shows its run used (io::LogInfo::nccl_version, "2.19.3"), "" when
  /// it shows none: its tuning model makes NCCL's choice for the point (NcclSpec::version).
  std::string nccl_version;
  /// The library stack the log shows the run used (docs/stacks.md; measured_logs.cpp reads it
  /// from the launch command and the MPI library line), "" when it shows none collsim has; and
  /// where its buffers lived: "device" for OSU's -d cuda, "host" for MPI benchmarks without it
  /// (OSU's default, IMB's only), "" for NCCL's (the scenario's).
  std::string stack;
  std::string buffers;
  /// GPUs one thread of the benchmark drove (io::LogInfo::gpus_per_thread; 0: not said).
  std::uint32_t gpus_per_thread = 0;
};

struct ValidationRow {
  MeasuredPoint measured;
  std::string algorithm;        ///< the algorithm whose prediction is compared
  algorithms::RawParams params; ///< its parameters, when a library's choice sets them
  /// How the algorithm was chosen: the library model and its rule ("Open MPI 4.1 ...: p < 8,
  /// commutative: m >= 8 KiB -> 6"), "fastest of ...", or "named".
  std::string chosen_by;
  core::Seconds predicted;
  double error_pct = 0.0; ///< 100 (predicted - measured) / measured
  /// The measuring library's own closed-form estimate of the point, where it has one (NCCL's
  /// cost model: ncclTopoGetAlgoTime of the entry NCCL picks); -1 otherwise.
  double library_estimate_us = -1.0;
  double library_error_pct = 0.0; ///< 100 (estimate - measured) / measured, when there is one
};

/// Median and 90th percentile of |error| over a set of rows, and the extremes of each sign: the
/// most a measured run was slower than predicted (the largest -error, 0 if none was) and faster
/// (the largest +error).
struct ErrorStats {
  std::size_t points = 0;
  double median_abs_err_pct = 0.0;
  double p90_abs_err_pct = 0.0;
  double max_slower_pct = 0.0;
  double max_faster_pct = 0.0;
};

struct ValidationSummary {
  ErrorStats all;
  ErrorStats below_1MiB; ///< bytes < 1 MiB
  ErrorStats from_1MiB;  ///< bytes >= 1 MiB
};

struct ValidationResult {
  std::vector<ValidationRow> rows;  ///< in the order of the measured points
  std::vector<std::string> skipped; ///< "file:line: why"
  ValidationSummary summary;
  /// The library's own estimate over the rows that have one (library_estimate_us >= 0): NCCL's
  /// closed form against the same measurements (points 0 when no row has one).
  ValidationSummary library;
};

struct ValidateOptions {
  /// An algorithm name or alias; "fastest": the fastest of all collsim's algorithms; "auto": what
  /// the measuring library picks by default where collsim models that library (NCCL's choice for
  /// NCCL points, Open MPI 4.1's fixed rules for MPI points that do not name another MPI), else
  /// the fastest of the library's algorithms (NCCL's, or the MPI ones).
  std::string algorithm = "auto";
  EngineChoice engine;
  unsigned threads = 0; ///< 0: all cores
  /// Where the points run (analysis/executor.hpp); null: `threads` threads of this process.
  const Executor* executor = nullptr;
};

/// What the point measured: the collective's name, or "osu_latency", "osu_bw", "osu_bibw".
std::string_view operation_name(const MeasuredPoint& p);

/// True when `algo` is one of NCCL's (it has an "nccl:" alias).
bool is_nccl_algorithm(const algorithms::AlgorithmInfo& algo);

/// Predicts every measured point on the scenario's topology and compares. The engine runs with
/// the scenario's NCCL corrections (core::NcclSpec). Points the scenario
/// cannot run (more ranks than the machine has, no algorithm for the point) are skipped with the
/// reason; an unknown algorithm name is an UnknownNameError.
ValidationResult validate(const core::Scenario& scenario, std::span<const MeasuredPoint> points,
                          const algorithms::Registry& registry, const ValidateOptions& options);

/// The statistics of a set of rows (exposed for tests and calibration).
ValidationSummary summarize(const std::vector<ValidationRow>& rows);
/// The same statistics of the library's own estimates, over the rows that have one.
ValidationSummary summarize_library(const std::vector<ValidationRow>& rows);

} // namespace collsim::analysis
