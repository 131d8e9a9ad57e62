#pragma once
// Result writers: an nccl-tests-like table for people, CSV and JSON for tools. All three take the
// same rows and print times in microseconds and bandwidths in GB/s (10^9 B/s). Collectives without
// a root print root -1, as nccl-tests does.

#include "collsim/core/result.hpp"

#include <span>
#include <string>
#include <utility>
#include <vector>

namespace collsim::io {

/// nccl-tests-style table: a header comment block, then one group per (collective, algorithm,
/// engine, ranks) in order of first appearance, each introduced by a "# collective ..." line.
/// Columns: size (B), count, type, redop, root, time (us), algbw (GB/s), busbw (GB/s).
std::string format_table(std::span<const core::ResultRow> rows);

/// CSV with the header
/// collective,algorithm,engine,ranks,bytes,count,type,root,time_us,algbw_GBps,busbw_GBps
/// and shortest round-trip doubles; fields with commas or quotes are quoted (RFC 4180).
std::string format_csv(std::span<const core::ResultRow> rows);

/// Extra top-level members of the JSON document, in this order before "results".
struct JsonExtras {
  /// key -> plain string value (e.g. {"scenario", "textbook"}).
  std::vector<std::pair<std::string, std::string>> string_fields;
  /// key -> JSON text produced elsewhere (e.g. {"crossovers", "[...]"}), embedded as a value.
  std::vector<std::pair<std::string, std::string>> raw_fields;
};

/// One JSON object {..extras.., "results": [{collective, algorithm, engine, ranks, bytes, count,
/// type, root, time_us, algbw_GBps, busbw_GBps}, ...]}, indented by 2, ending in a newline.
/// Throws core::InternalError when a raw field is not valid JSON or a key is used twice
/// (both are bugs of the caller, not of the user's input).
std::string format_json(std::span<const core::ResultRow> rows, const JsonExtras& extras = {});

} // namespace collsim::io
