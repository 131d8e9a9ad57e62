#pragma once
// The Qt Charts side of gui/charts: widgets the GUI embeds. Everything that names a Qt Charts
// class lives in gui/charts/ (the rest of the GUI sees ChartView and TimelineView only).

#include "collsim/charts/chart_model.hpp"

#include <QChartView>
#include <QWidget>

namespace collsim::charts {

/// A chart view that shows a ChartModel: log axes with unit labels, crossover markers with their
/// labels, the limit as a dashed line, and a tooltip with the exact values of the point under the
/// mouse.
class ChartView : public QChartView {
public:
  explicit ChartView(QWidget* parent = nullptr);
  /// Replaces what the view shows.
  void set_model(ChartModel model);
  [[nodiscard]] const ChartModel& model() const { return model_; }
  /// PNG or SVG by extension; false (with `error`) when the file cannot be written.
  bool export_image(const QString& path, QString* error = nullptr);
  /// The chart's data as CSV (chart_csv).
  bool export_csv(const QString& path, QString* error = nullptr);

private:
  ChartModel model_;
};

/// A Gantt chart of one run: one lane per rank, one bar per operation coloured by kind (send,
/// receive, receive-and-reduce, reduce, copy), time in us; hovering a bar shows the operation.
class TimelineView : public QWidget {
public:
  explicit TimelineView(QWidget* parent = nullptr);
  void set_model(TimelineModel model);
  [[nodiscard]] const TimelineModel& model() const { return model_; }
  bool export_image(const QString& path, QString* error = nullptr);
  /// Draws the chart into `painter` over `rect` (the widget and the exporters share it).
  void paint_to(QPainter& painter, const QRect& rect) const;

protected:
  void paintEvent(QPaintEvent* event) override;
  bool event(QEvent* event) override; ///< tooltips

private:
  TimelineModel model_;
};

/// Builds the QChart of a model (the caller owns it). Exposed for tests that count series and
/// read marker positions.
QChart* make_chart(const ChartModel& model);

} // namespace collsim::charts
