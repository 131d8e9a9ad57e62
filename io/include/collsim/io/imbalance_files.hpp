#pragma once
// The files a counts or skew spec names (core/imbalance.hpp): weights (`file:`), an MoE router
// histogram (`moe:`), a process graph's edge list (`graph:`) and arrival times (`file:` skew).
// Plain text: numbers separated by blanks, one row per line; `#` starts a comment; blank lines
// are skipped. Errors are core::ScenarioError at the file's line and column.

#include "collsim/core/errors.hpp"
#include "collsim/core/imbalance.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace collsim::io {

/// The numbers of each non-empty line. `graph`: every line is "SRC DST [WEIGHT]" (two whole
/// ranks and an optional weight >= 0). Otherwise every number is a weight >= 0.
std::vector<std::vector<double>> parse_count_rows(std::string_view text, std::string_view file,
                                                  bool graph);

/// Arrival times, one per rank in rank order, each a duration ("1ms", "250 us", "0.5 s") or a
/// plain number of seconds, separated by blanks or lines.
std::vector<core::Seconds> parse_arrival_times(std::string_view text, std::string_view file);

/// Reads the file `spec.path` names (relative to the directory of `named_in`, the file that named
/// it, when that is not empty) into spec.rows; nothing for kinds without a file. A file that
/// cannot be read is an error at `at` (where the spec was written) when that is set, else a
/// UsageError naming the path.
void load_counts_data(core::CountsSpec& spec, const std::string& named_in,
                      const core::SourcePos& at = {});
/// The same for a skew spec's file (spec.times).
void load_skew_data(core::SkewSpec& spec, const std::string& named_in,
                    const core::SourcePos& at = {});

} // namespace collsim::io
