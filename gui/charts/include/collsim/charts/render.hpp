#pragma once
// Charts to files without a display: `collsim plot`, `collsim run --plots`. Qt-free interface;
// the implementation draws with Qt Charts on Qt's offscreen platform.

#include "collsim/charts/chart_model.hpp"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace collsim::charts {

struct ImageSize {
  int width = 1000; ///< pixels (PNG) or SVG user units
  int height = 600;
};

/// What a file name asks for, by its extension (case-insensitive): ".png", ".svg", ".csv" (chart
/// data), or none of them.
enum class ChartFile : std::uint8_t { png, svg, csv, unknown };
ChartFile chart_file_of(const std::string& path);

/// Writes `chart` to `path`: PNG or SVG by the file's extension (.png, .svg); UsageError for
/// another extension, IoError when the file cannot be written. Starts a QApplication on the
/// offscreen platform when the process has none (QT_QPA_PLATFORM, when set, is respected).
void save_chart(const ChartModel& chart, const std::string& path, ImageSize size = {});

/// The image formats of a `--plot-format` value: "png", "svg", or a comma list of them;
/// UnknownNameError for anything else.
std::vector<std::string> plot_formats(const std::string& format);

/// Writes each (file stem, chart) into `dir` (created if missing) with the extensions of `format`
/// ("png", "svg", or "png,svg"). Returns the paths written.
std::vector<std::string> save_charts(const std::vector<std::pair<std::string, ChartModel>>& charts,
                                     const std::string& dir, const std::string& format,
                                     ImageSize size = {});

/// Writes the charts of one study into `dir` (created if missing) as `study<N>-crossover`,
/// `study<N>-busbw` and, when the study has more than one rank count, `study<N>-scaling`, with the
/// extension of `format` ("png", "svg", or both: "png,svg"). Returns the paths written.
std::vector<std::string> save_study_charts(const StudyTables& tables, std::size_t index,
                                           const std::string& dir, const std::string& format,
                                           ImageSize size = {});

/// Writes a Gantt chart of one run, PNG or SVG by extension.
void save_timeline(const TimelineModel& timeline, const std::string& path, ImageSize size = {});

} // namespace collsim::charts
