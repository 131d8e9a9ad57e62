#pragma once
// One measured or simulated point, as every writer and analysis step sees it.

#include "collsim/core/collective.hpp"
#include "collsim/core/units.hpp"

#include <cstdint>
#include <string>

namespace collsim::core {

struct ResultRow {
  CollectiveKind collective = CollectiveKind::allreduce;
  std::string algorithm;
  std::string engine;
  std::uint32_t ranks = 0;
  Bytes bytes{0};          ///< S in nccl-tests' convention
  std::uint64_t count = 0; ///< elements of `type` (nccl-tests' count column)
  std::string type = "float";
  std::uint32_t root = 0;
  Seconds time;
  Bandwidth algbw;
  Bandwidth busbw;
  /// The algorithm parameters the point ran with that the user did not pin, as users write them
  /// ("channels=16,protocol=simple": a library's own choice for the point); "" when none.
  std::string params;
  /// The library stack the point ran under where one was named (`--stack`, `stack:`); "" when
  /// each algorithm ran on its own (NCCL's on the NCCL stack, the others direct).
  std::string stack;
  /// The v-variant ran (per-rank counts: alltoallv, allgatherv, ...); `bytes` is then the
  /// counts' total (alltoallv: the largest rank's send volume).
  bool varying = false;
  /// Under arrival skew: when the last rank entered the call, after the first. `time` counts
  /// from the first arrival; time - last_arrival is the time from the last. 0: all at once.
  Seconds last_arrival{0.0};
  /// How the engine timed the point where it did not run every operation of every rank, with
  /// the same result (docs/engines.md): "collapsed: 8 programs for 64 ranks", "steady state: 672
  /// of 4096 loops run, period 32"; "" when it ran in full.
  std::string method;
  /// The method extrapolates from part of the run (a steady state: exact where the run is
  /// periodic, checked on a window), rather than restating it exactly (a collapsed schedule: the
  /// same operations by symmetry). Tables note such rows; JSON and CSV carry every method.
  bool extrapolated = false;
  bool operator==(const ResultRow&) const = default;
};

/// Fills count, algbw and busbw from collective, ranks, bytes and time (4-byte float elements, as
/// nccl-tests' default; count is per rank for allgather/reduce_scatter/alltoall/gather/scatter).
ResultRow make_result_row(CollectiveKind c, std::string algorithm, std::string engine,
                          std::uint32_t ranks, Bytes bytes, Seconds time, std::uint32_t root = 0);

} // namespace collsim::core
