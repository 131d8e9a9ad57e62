#pragma once
// collsim-probe's command line: which collectives, which sizes, how many iterations, which Open MPI
// algorithm to force. Parsed before MPI_Init (forcing an algorithm needs an environment variable
// set before the library reads its parameters), so this file knows nothing about MPI.

#include "collsim/core/collective.hpp"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace collsim::probe {

/// The element type the collectives run on. OSU 7.x defaults to MPI_CHAR and so do we.
enum class ProbeDatatype : std::uint8_t { mpi_char, mpi_float };

/// Sizes above this are "large" and use the large iteration count (OSU's LARGE_MESSAGE_SIZE).
inline constexpr std::uint64_t kLargeMessageSize = 8192;
/// The largest size per rank collsim-probe accepts (1 GiB): element counts stay within an int.
inline constexpr std::uint64_t kMaxProbeSize = std::uint64_t{1} << 30;

/// Everything the command line says; defaults are the documented ones.
struct ProbeOptions {
  std::vector<core::CollectiveKind> collectives{core::CollectiveKind::allreduce};
  std::uint64_t min_bytes = 4;         ///< smallest size per rank, bytes (a power of two)
  std::uint64_t max_bytes = 1 << 20;   ///< largest size per rank, bytes (a power of two)
  std::uint32_t iterations = 100;      ///< timed iterations for sizes up to kLargeMessageSize
  std::uint32_t iterations_large = 10; ///< timed iterations above kLargeMessageSize
  std::uint32_t warmup = 10;           ///< untimed iterations before each size, every size
  bool full = false;                   ///< OSU -f: min, max and iterations columns
  ProbeDatatype datatype = ProbeDatatype::mpi_char;
  /// --ompi-algorithm: coll/tuned algorithm ids or names, each run in turn; empty = not forced.
  std::vector<std::string> ompi_algorithms;
  bool print_sum = false; ///< print a '# check:' line per size (rank 0's result, sum and hash)
  /// --describe FILE: rank 0 writes its node as a collsim scenario there (empty: not asked).
  std::string describe_path;
  bool help = false;
  bool version = false;

  bool operator==(const ProbeOptions&) const = default;
};

/// Parses the arguments after the program name; throws core::UsageError or
/// core::UnknownNameError with a one-line message naming the option.
ProbeOptions parse_probe_options(std::span<const std::string> args);

/// The --help text.
std::string probe_usage();

/// "1.0", printed in the header and by --version.
std::string_view probe_version();

/// The sizes to time, bytes per rank: powers of two from min_bytes to max_bytes.
std::vector<std::uint64_t> probe_sizes(const ProbeOptions& options);

/// Timed iterations at `bytes` (OSU: fewer above 8 KiB).
std::uint32_t probe_iterations(const ProbeOptions& options, std::uint64_t bytes);

/// Size in bytes of one element of the datatype.
std::uint32_t datatype_size(ProbeDatatype t);

/// "char" or "float", as --datatype spells it.
std::string_view datatype_option_name(ProbeDatatype t);

/// The options as a command line that reproduces the run ("--collective allreduce --sizes ...").
std::string describe_options(const ProbeOptions& options);

} // namespace collsim::probe
