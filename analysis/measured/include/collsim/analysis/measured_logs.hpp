#pragma once
// Measured logs as validation input: io::parse_log's measurements converted into
// analysis::MeasuredPoint. A target of its own (collsim::measured) above io and analysis, so that
// analysis stays free of the log formats (validate.hpp) while `collsim validate`, `collsim
// calibrate`, `collsim plot --kind validation` and the GUI's log overlay read logs the same way.

#include "collsim/analysis/validate.hpp"
#include "collsim/io/logs.hpp"

#include <optional>
#include <string>
#include <vector>

namespace collsim::analysis {

/// A log's measurement in collsim's conventions, or nothing when collsim has no model for it.
std::optional<MeasuredPoint> to_measured_point(const io::ParsedLog& log, const io::Measurement& m);

struct MeasuredLogs {
  std::vector<MeasuredPoint> points;
  std::vector<std::string> warnings; ///< the parsers' warnings, formatted "file:line: warning: ..."
  std::vector<std::string> ignored;  ///< "file:line: <operation> has no collsim model"
};

/// The measured points of some logs: out-of-place rows where a run has both (in-place rows time
/// the same operation again), with `shape` (--ranks, --nodes) applied to every log
/// (io::apply_log_shape). Throws LogParseError (file:line:column) for a log that cannot be read,
/// UsageError for a shape that does not fit a log.
MeasuredLogs read_measured_logs(const std::vector<std::string>& paths,
                                const io::LogShape& shape = {});

} // namespace collsim::analysis
