// ChartModel drawn with Qt Charts (qt_chart.hpp). Sizes and rank counts are drawn on a log2 scale
// by plotting log2(x) on a linear axis labelled by a category axis ("1 KiB", "1 MiB"): Qt's
// QLogValueAxis labels with printf formats only, which would print 1.04858e+06 for 1 MiB.

#include "collsim/charts/qt_chart.hpp"

#include "svg_file.hpp"

#include <QBarCategoryAxis>
#include <QBarSeries>
#include <QBarSet>
#include <QCategoryAxis>
#include <QFile>
#include <QGraphicsLayout>
#include <QGraphicsSimpleTextItem>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QPainter>
#include <QScatterSeries>
#include <QStackedBarSeries>
#include <QToolTip>
#include <QValueAxis>
#include <algorithm>
#include <array>
#include <cmath>
#include <fmt/format.h>
#include <limits>

namespace collsim::charts {
namespace {

/// Which model element a series draws; tests and the hover handler read it back.
constexpr const char* kRole = "collsim_role";
constexpr const char* kIndex = "collsim_index";

/// Series colours (the Tableau 10 palette): fixed, so that PNG, SVG and the window agree and an
/// algorithm keeps its colour across the tabs.
QColor palette_color(std::size_t i) {
  static const std::array<QRgb, 10> colors{0x1f77b4, 0xff7f0e, 0x2ca02c, 0xd62728, 0x9467bd,
                                           0x8c564b, 0xe377c2, 0x7f7f7f, 0xbcbd22, 0x17becf};
  return QColor::fromRgb(colors[i % colors.size()]);
}

bool log2_axis(const Axis& a) {
  return a.log && (a.unit == AxisUnit::bytes || a.unit == AxisUnit::ranks);
}

double to_plot(const Axis& a, double v) {
  return log2_axis(a) ? std::log2(v) : v;
}
double from_plot(const Axis& a, double v) {
  return log2_axis(a) ? std::exp2(v) : v;
}

struct Range {
  double lo = std::numeric_limits<double>::infinity();
  double hi = -std::numeric_limits<double>::infinity();
  void add(double v) {
    if (std::isfinite(v)) {
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
  }
  [[nodiscard]] bool empty() const { return lo > hi; }
};

std::string axis_tick_label(AxisUnit unit, double value) {
  if (unit == AxisUnit::bytes) {
    return size_label(value);
  }
  return fmt::format("{}", static_cast<std::uint64_t>(std::llround(value)));
}

/// A log2 x axis: a category axis with a label at every power of two (every k-th when there
/// are more than 12).
QAbstractAxis* make_log2_axis(const Axis& a, Range r) {
  auto* axis = new QCategoryAxis;
  const double lo = std::floor(r.lo);
  const double hi = std::max(std::ceil(r.hi), lo + 1.0);
  const int span = static_cast<int>(hi - lo);
  const int step = std::max(1, (span + 11) / 12);
  axis->setMin(lo);
  axis->setMax(hi);
  axis->setStartValue(lo);
  axis->setLabelsPosition(QCategoryAxis::AxisLabelsPositionOnValue);
  for (int e = static_cast<int>(lo); e <= static_cast<int>(hi); e += step) {
    axis->append(QString::fromStdString(axis_tick_label(a.unit, std::exp2(e))), e);
  }
  axis->setTitleText(QString::fromStdString(a.title));
  axis->setGridLineVisible(true);
  return axis;
}

QAbstractAxis* make_y_axis(const Axis& a, Range r) {
  if (a.log) {
    auto* axis = new QLogValueAxis;
    axis->setBase(10.0);
    const double lo = r.empty() || r.lo <= 0 ? 1.0 : std::pow(10.0, std::floor(std::log10(r.lo)));
    // Whole numbers print as 1000000, not 1e+06; below 1 (0.1 us) "%g" keeps the digits.
    axis->setLabelFormat(lo < 1.0 ? "%g" : "%.0f");
    double hi = r.empty() || r.hi <= 0 ? 10.0 : std::pow(10.0, std::ceil(std::log10(r.hi)));
    if (hi <= lo) {
      hi = lo * 10.0;
    }
    axis->setRange(lo, hi);
    axis->setMinorTickCount(8);
    axis->setTitleText(QString::fromStdString(a.title));
    return axis;
  }
  auto* axis = new QValueAxis;
  const double hi = r.empty() || r.hi <= 0 ? 1.0 : r.hi * 1.08;
  axis->setRange(0.0, hi);
  axis->applyNiceNumbers();
  axis->setLabelFormat("%g");
  axis->setTitleText(QString::fromStdString(a.title));
  return axis;
}

void attach(QChart* chart, QAbstractSeries* s, QAbstractAxis* x, QAbstractAxis* y) {
  chart->addSeries(s);
  s->attachAxis(x);
  s->attachAxis(y);
}

/// Shows the exact values of the model point nearest to `plotted` (hover tooltips).
void show_hover(const ChartModel& model, const QXYSeries* series, QPointF plotted) {
  const QString role = series->property(kRole).toString();
  const int index = series->property(kIndex).toInt();
  std::string text;
  if (role == "level") {
    text = model.levels.at(static_cast<std::size_t>(index)).name;
  } else if (role == "crossovers") {
    double best = std::numeric_limits<double>::infinity();
    for (const Marker& m : model.markers) {
      const double d = std::abs(to_plot(model.x, m.at.x) - plotted.x());
      if (d < best) {
        best = d;
        text = "crossover at " + m.label;
      }
    }
  } else {
    const Series& s = model.series.at(static_cast<std::size_t>(index));
    const double x = from_plot(model.x, plotted.x());
    const Point* nearest = nullptr;
    for (const Point& p : s.points) {
      if (nearest == nullptr || std::abs(p.x - x) < std::abs(nearest->x - x)) {
        nearest = &p;
      }
    }
    if (nearest != nullptr) {
      text = point_label(model, s.name, *nearest);
    }
  }
  QToolTip::showText(QCursor::pos(), QString::fromStdString(text));
}

/// Places the crossover labels next to their markers; called again whenever the plot area moves.
void place_marker_labels(QChart* chart, QXYSeries* markers,
                         const std::vector<QGraphicsSimpleTextItem*>& labels) {
  for (std::size_t i = 0; i < labels.size(); ++i) {
    const QPointF at = chart->mapToPosition(markers->at(static_cast<int>(i)), markers);
    // Alternate above and below so that neighbouring crossovers do not overwrite each other.
    const double dy = (i % 2 == 0) ? -22.0 : 8.0;
    labels[i]->setPos(at.x() + 6.0, at.y() + dy);
  }
}

/// A breakdown chart's bars: one QBarSet per layer (stacked) or per bar of a group (side by
/// side), the categories on a bar axis.
void add_bars(QChart* chart, const ChartModel& model) {
  QAbstractBarSeries* series =
      model.stacked ? static_cast<QAbstractBarSeries*>(new QStackedBarSeries) : new QBarSeries;
  Range yr;
  std::vector<double> totals(model.categories.size(), 0.0);
  for (std::size_t i = 0; i < model.bar_sets.size(); ++i) {
    const BarSet& b = model.bar_sets[i];
    auto* set = new QBarSet(QString::fromStdString(b.name));
    set->setColor(palette_color(i));
    set->setBorderColor(palette_color(i).darker(130));
    for (std::size_t c = 0; c < model.categories.size(); ++c) {
      const double v = c < b.values.size() ? b.values[c] : 0.0;
      *set << v;
      totals[c] = model.stacked ? totals[c] + v : std::max(totals[c], v);
    }
    series->append(set);
  }
  for (const double t : totals) {
    yr.add(t);
  }
  chart->addSeries(series);
  auto* x = new QBarCategoryAxis;
  for (const std::string& c : model.categories) {
    x->append(QString::fromStdString(c));
  }
  x->setTitleText(QString::fromStdString(model.x.title));
  QAbstractAxis* y = make_y_axis(model.y, yr);
  chart->addAxis(x, Qt::AlignBottom);
  chart->addAxis(y, Qt::AlignLeft);
  series->attachAxis(x);
  series->attachAxis(y);
}

} // namespace

QChart* make_chart(const ChartModel& model) {
  auto* chart = new QChart;
  // Rich text for the two-line title; the texts are escaped ("< 1 MiB" is not a tag).
  chart->setTitle(QString("<b>%1</b><br><small>%2</small>")
                      .arg(QString::fromStdString(model.title).toHtmlEscaped(),
                           QString::fromStdString(model.subtitle).toHtmlEscaped()));
  chart->legend()->setAlignment(Qt::AlignBottom);
  chart->setAnimationOptions(QChart::NoAnimation);
  chart->setBackgroundRoundness(0.0);
  chart->layout()->setContentsMargins(0, 0, 0, 0);
  if (model.kind == ChartKind::breakdown) {
    add_bars(chart, model);
    return chart;
  }

  Range xr;
  Range yr;
  for (const Series& s : model.series) {
    for (const Point& p : s.points) {
      if (!log2_axis(model.x) || p.x > 0) {
        xr.add(to_plot(model.x, p.x));
      }
      if (!model.y.log || p.y > 0) {
        yr.add(p.y);
      }
    }
  }
  for (const Level& l : model.levels) {
    yr.add(l.y);
  }
  if (xr.empty()) {
    xr.add(0.0);
    xr.add(1.0);
  }
  QAbstractAxis* x = log2_axis(model.x) ? make_log2_axis(model.x, xr) : make_y_axis(model.x, xr);
  QAbstractAxis* y = make_y_axis(model.y, yr);
  chart->addAxis(x, Qt::AlignBottom);
  chart->addAxis(y, Qt::AlignLeft);

  for (std::size_t i = 0; i < model.series.size(); ++i) {
    const Series& s = model.series[i];
    QXYSeries* qs = nullptr;
    // Validation charts pair a measured and a predicted series per group: one colour per pair.
    const QColor color = palette_color(model.kind == ChartKind::validation ? i / 2 : i);
    if (s.scatter) {
      // Measured points: open circles over the prediction's line of the same colour.
      auto* scatter = new QScatterSeries;
      scatter->setMarkerSize(11.0);
      scatter->setColor(Qt::white);
      QPen border(color.darker(130));
      border.setWidthF(2.0);
      scatter->setPen(border);
      qs = scatter;
    } else {
      auto* line = new QLineSeries;
      line->setPointsVisible(true);
      QPen pen(color);
      pen.setWidthF(2.0);
      line->setPen(pen);
      line->setColor(color);
      qs = line;
    }
    qs->setName(QString::fromStdString(s.name));
    qs->setProperty(kRole, s.scatter ? "measured" : "series");
    qs->setProperty(kIndex, static_cast<int>(i));
    for (const Point& p : s.points) {
      if ((log2_axis(model.x) && p.x <= 0) || (model.y.log && p.y <= 0)) {
        continue; // a log axis has no place for 0
      }
      qs->append(to_plot(model.x, p.x), p.y);
    }
    attach(chart, qs, x, y);
  }
  for (std::size_t i = 0; i < model.levels.size(); ++i) {
    auto* line = new QLineSeries;
    line->setName(QString::fromStdString(model.levels[i].name));
    line->setProperty(kRole, "level");
    line->setProperty(kIndex, static_cast<int>(i));
    QPen pen(QColor(180, 30, 30));
    pen.setStyle(Qt::DashLine);
    pen.setWidthF(2.0);
    line->setPen(pen);
    line->append(xr.lo, model.levels[i].y);
    line->append(xr.hi, model.levels[i].y);
    attach(chart, line, x, y);
  }
  if (!model.markers.empty()) {
    auto* markers = new QScatterSeries;
    markers->setName("crossovers");
    markers->setProperty(kRole, "crossovers");
    markers->setMarkerShape(QScatterSeries::MarkerShapeRectangle);
    markers->setMarkerSize(13.0);
    markers->setColor(QColor(20, 20, 20));
    markers->setBorderColor(QColor(255, 255, 255));
    std::vector<QGraphicsSimpleTextItem*> labels;
    for (const Marker& m : model.markers) {
      markers->append(to_plot(model.x, m.at.x), m.at.y);
      auto* label = new QGraphicsSimpleTextItem(QString::fromStdString(m.label), chart);
      QFont font = label->font();
      font.setPointSizeF(font.pointSizeF() * 0.85);
      label->setFont(font);
      label->setZValue(20.0);
      labels.push_back(label);
    }
    attach(chart, markers, x, y);
    QObject::connect(chart, &QChart::plotAreaChanged, chart,
                     [chart, markers, labels] { place_marker_labels(chart, markers, labels); });
  }
  return chart;
}

ChartView::ChartView(QWidget* parent) : QChartView(parent) {
  setRenderHint(QPainter::Antialiasing);
  setMinimumSize(480, 320);
}

void ChartView::set_model(ChartModel model) {
  model_ = std::move(model);
  QChart* chart = make_chart(model_);
  for (QAbstractSeries* s : chart->series()) {
    if (auto* bars = qobject_cast<QStackedBarSeries*>(s)) {
      connect(bars, &QStackedBarSeries::hovered, this, [this](bool state, int index, QBarSet* set) {
        if (!state) {
          QToolTip::hideText();
          return;
        }
        const auto c = static_cast<std::size_t>(index);
        QToolTip::showText(QCursor::pos(),
                           QString::fromStdString(
                               fmt::format("{}: {} {:.3f} {}", model_.categories.at(c),
                                           set->label().toStdString(), set->at(index),
                                           model_.y.unit == AxisUnit::milliseconds ? "ms" : "us")));
      });
    }
    if (auto* xy = qobject_cast<QXYSeries*>(s)) {
      connect(xy, &QXYSeries::hovered, this, [this, xy](const QPointF& p, bool state) {
        if (state) {
          show_hover(model_, xy, p);
        } else {
          QToolTip::hideText();
        }
      });
    }
  }
  QChart* old = this->chart();
  setChart(chart);
  // QChartView::setChart does not delete the previous chart: it belongs to the caller.
  delete old;
}

bool ChartView::export_image(const QString& path, QString* error) {
  const bool ok = path.endsWith(".svg", Qt::CaseInsensitive)
                      ? detail::write_svg(path, size(), QString::fromStdString(model_.title),
                                          [this](QPainter& painter) { render(&painter); })
                      : grab().save(path, "PNG");
  if (!ok && error != nullptr) {
    *error = QString("cannot write '%1'").arg(path);
  }
  return ok;
}

bool ChartView::export_csv(const QString& path, QString* error) {
  QFile file(path);
  if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate)) {
    if (error != nullptr) {
      *error = QString("cannot write '%1': %2").arg(path, file.errorString());
    }
    return false;
  }
  const std::string csv = chart_csv(model_);
  file.write(csv.data(), static_cast<qint64>(csv.size()));
  return true;
}

} // namespace collsim::charts
