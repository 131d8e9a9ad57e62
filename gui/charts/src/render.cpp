// Charts to PNG and SVG files without a display (render.hpp).

#include "collsim/charts/render.hpp"

#include "collsim/charts/qt_chart.hpp"
#include "collsim/core/errors.hpp"

#include <QApplication>
#include <QtGlobal>
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fmt/format.h>
#include <set>

namespace collsim::charts {
namespace {

/// Qt draws text and widgets only inside a QApplication. `collsim plot` has none, so the first
/// chart starts one on the offscreen platform (no display needed); the GUI and tests bring their
/// own. Deliberately never destroyed: Qt's own globals must outlive it, and the process ends soon
/// after a plot.
void ensure_application() {
  if (QApplication::instance() != nullptr) {
    return;
  }
  static int argc = 1;
  static char name[] = "collsim";
  static char* argv[] = {name, nullptr};
  if (std::getenv("QT_QPA_PLATFORM") == nullptr) {
    qputenv("QT_QPA_PLATFORM", "offscreen");
  }
  // Without a desktop session Qt warns that XDG_RUNTIME_DIR is unset; a chart written to a file
  // needs no runtime directory, so that one line would only be noise on collsim's stderr.
  static const QtMessageHandler previous = qInstallMessageHandler(
      [](QtMsgType type, const QMessageLogContext& context, const QString& message) {
        if (message.startsWith("QStandardPaths: XDG_RUNTIME_DIR not set")) {
          return;
        }
        if (previous != nullptr) {
          previous(type, context, message);
        }
      });
  new QApplication(argc, argv); // NOLINT(cppcoreguidelines-owning-memory): see above
}

void check_image_path(const std::string& path) {
  const ChartFile f = chart_file_of(path);
  if (f != ChartFile::png && f != ChartFile::svg) {
    throw core::UsageError(fmt::format(
        "cannot tell the image format of '{}': the file name must end in .png or .svg", path));
  }
}

void check_size(ImageSize size) {
  if (size.width < 100 || size.height < 100 || size.width > 20000 || size.height > 20000) {
    throw core::UsageError(fmt::format(
        "image size {}x{} is out of range: width and height must be 100 to 20000 pixels",
        size.width, size.height));
  }
}

/// Draws `model` in a View of `size` offscreen and writes it to `path` (PNG or SVG).
template <class View, class Model>
void save_view(const Model& model, const std::string& path, ImageSize size) {
  check_image_path(path);
  check_size(size);
  ensure_application();
  View view;
  view.resize(size.width, size.height);
  view.set_model(model);
  QString error;
  if (!view.export_image(QString::fromStdString(path), &error)) {
    throw core::UsageError(error.toStdString());
  }
}

} // namespace

ChartFile chart_file_of(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  for (char& c : ext) {
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  if (ext == ".png") {
    return ChartFile::png;
  }
  if (ext == ".svg") {
    return ChartFile::svg;
  }
  return ext == ".csv" ? ChartFile::csv : ChartFile::unknown;
}

void save_chart(const ChartModel& chart, const std::string& path, ImageSize size) {
  save_view<ChartView>(chart, path, size);
}

std::vector<std::string> plot_formats(const std::string& format) {
  std::vector<std::string> formats;
  for (std::size_t start = 0; start <= format.size();) {
    const std::size_t comma = std::min(format.find(',', start), format.size());
    formats.push_back(format.substr(start, comma - start));
    if (formats.back() != "png" && formats.back() != "svg") {
      throw core::UnknownNameError("plot format", formats.back(), {"png", "svg", "png,svg"});
    }
    start = comma + 1;
  }
  return formats;
}

std::vector<std::string> save_charts(const std::vector<std::pair<std::string, ChartModel>>& charts,
                                     const std::string& dir, const std::string& format,
                                     ImageSize size) {
  const std::vector<std::string> formats = plot_formats(format);
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    throw core::UsageError(fmt::format("cannot create directory '{}': {}", dir, ec.message()));
  }
  std::vector<std::string> written;
  for (const auto& [stem, chart] : charts) {
    for (const std::string& f : formats) {
      const std::string path = (std::filesystem::path(dir) / (stem + "." + f)).string();
      save_chart(chart, path, size);
      written.push_back(path);
    }
  }
  return written;
}

std::vector<std::string> save_study_charts(const StudyTables& tables, std::size_t index,
                                           const std::string& dir, const std::string& format,
                                           ImageSize size) {
  std::set<std::uint32_t> ranks;
  for (const auto& r : tables.rows) {
    ranks.insert(r.ranks);
  }
  const std::string stem = fmt::format("study{}-", index + 1);
  std::vector<std::pair<std::string, ChartModel>> charts{
      {stem + "crossover", crossover_chart(tables)}, {stem + "busbw", busbw_chart(tables)}};
  if (ranks.size() > 1) {
    charts.emplace_back(stem + "scaling", scaling_chart(tables));
  }
  return save_charts(charts, dir, format, size);
}

void save_timeline(const TimelineModel& timeline, const std::string& path, ImageSize size) {
  save_view<TimelineView>(timeline, path, size);
}

} // namespace collsim::charts
