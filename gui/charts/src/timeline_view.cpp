// The Gantt chart of one run (qt_chart.hpp, TimelineView). Drawn with QPainter: Qt Charts has no
// bar-per-interval series, and a run of 16 ranks has thousands of operations, which would be
// thousands of QLineSeries.

#include "collsim/charts/qt_chart.hpp"

#include "svg_file.hpp"

#include <QEvent>
#include <QHelpEvent>
#include <QPainter>
#include <QToolTip>
#include <algorithm>
#include <array>
#include <cmath>
#include <fmt/format.h>

namespace collsim::charts {
namespace {

struct Layout {
  QRectF plot; ///< where the lanes are
  double lane = 0.0;
  double end_us = 1.0;
};

constexpr double kLeft = 70.0;
constexpr double kTop = 46.0;
constexpr double kBottom = 44.0;
constexpr double kRight = 20.0;

Layout layout_of(const TimelineModel& m, const QRect& rect) {
  Layout l;
  l.plot =
      QRectF(rect.left() + kLeft, rect.top() + kTop, std::max(10.0, rect.width() - kLeft - kRight),
             std::max(10.0, rect.height() - kTop - kBottom));
  l.lane = l.plot.height() / std::max<std::uint32_t>(1, m.ranks);
  l.end_us = m.end_us > 0.0 ? m.end_us : 1.0;
  return l;
}

QColor kind_color(core::OpKind k) {
  switch (k) {
  case core::OpKind::send: return {31, 119, 180};
  case core::OpKind::recv: return {255, 127, 14};
  case core::OpKind::recv_reduce: return {214, 39, 40};
  case core::OpKind::reduce: return {44, 160, 44};
  case core::OpKind::copy: return {148, 103, 189};
  case core::OpKind::calc: return {127, 127, 127};
  }
  return Qt::gray;
}

QRectF bar_rect(const Layout& l, const TimelineBar& b) {
  const double x0 = l.plot.left() + l.plot.width() * b.start_us / l.end_us;
  const double x1 = l.plot.left() + l.plot.width() * b.end_us / l.end_us;
  // Sends and receives of a rank overlap in time: sends in the upper half of the lane.
  const bool upper = b.kind == core::OpKind::send;
  const double top = l.plot.top() + l.lane * b.rank + (upper ? 0.08 : 0.5) * l.lane;
  return {x0, top, std::max(1.0, x1 - x0), 0.42 * l.lane};
}

/// A "nice" tick step (1, 2 or 5 times a power of ten) for about `ticks` ticks over `span`.
double nice_step(double span, int ticks) {
  const double raw = span / std::max(1, ticks);
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  for (double f : {1.0, 2.0, 5.0, 10.0}) {
    if (raw <= f * mag) {
      return f * mag;
    }
  }
  return 10.0 * mag;
}

} // namespace

TimelineView::TimelineView(QWidget* parent) : QWidget(parent) {
  setMinimumSize(480, 240);
  setAttribute(Qt::WA_OpaquePaintEvent);
}

void TimelineView::set_model(TimelineModel model) {
  model_ = std::move(model);
  update();
}

void TimelineView::paint_to(QPainter& p, const QRect& rect) const {
  p.fillRect(rect, Qt::white);
  p.setRenderHint(QPainter::Antialiasing, false);
  const Layout l = layout_of(model_, rect);
  QFont title_font = p.font();
  title_font.setBold(true);
  p.setFont(title_font);
  p.setPen(Qt::black);
  p.drawText(QRectF(rect.left(), rect.top() + 4, rect.width(), 20), Qt::AlignHCenter,
             QString::fromStdString(model_.title));
  p.setFont(font());
  // Legend of operation kinds.
  const std::array kinds{core::OpKind::send,   core::OpKind::recv, core::OpKind::recv_reduce,
                         core::OpKind::reduce, core::OpKind::copy, core::OpKind::calc};
  double lx = l.plot.left();
  for (core::OpKind k : kinds) {
    p.fillRect(QRectF(lx, rect.top() + 27, 12, 10), kind_color(k));
    const QString name = QString::fromStdString(std::string(core::to_string(k)));
    p.drawText(QPointF(lx + 16, rect.top() + 37), name);
    lx += 24 + p.fontMetrics().horizontalAdvance(name);
  }
  // Lanes and bars.
  for (std::uint32_t r = 0; r < model_.ranks; ++r) {
    const QRectF lane(l.plot.left(), l.plot.top() + l.lane * r, l.plot.width(), l.lane);
    if (r % 2 == 1) {
      p.fillRect(lane, QColor(245, 245, 245));
    }
    if (l.lane >= 9.0 || r % static_cast<std::uint32_t>(std::ceil(9.0 / l.lane)) == 0) {
      p.drawText(QRectF(rect.left(), lane.top(), kLeft - 6, std::max(l.lane, 12.0)),
                 Qt::AlignRight | Qt::AlignVCenter, QString("rank %1").arg(r));
    }
  }
  // A white edge separates back-to-back operations (a ring's receives follow one another).
  p.setPen(QPen(Qt::white, 1.0));
  for (const TimelineBar& b : model_.bars) {
    p.setBrush(kind_color(b.kind));
    p.drawRect(bar_rect(l, b));
  }
  p.setBrush(Qt::NoBrush);
  // Time axis in us.
  p.setPen(Qt::black);
  p.drawRect(l.plot);
  const double step = nice_step(l.end_us, 8);
  for (double t = 0.0; t <= l.end_us * 1.0001; t += step) {
    const double x = l.plot.left() + l.plot.width() * t / l.end_us;
    p.drawLine(QPointF(x, l.plot.bottom()), QPointF(x, l.plot.bottom() + 4));
    p.drawText(QRectF(x - 40, l.plot.bottom() + 5, 80, 14), Qt::AlignHCenter,
               QString::fromStdString(fmt::format("{:g}", t)));
  }
  p.drawText(
      QRectF(l.plot.left(), l.plot.bottom() + 22, l.plot.width(), 16), Qt::AlignHCenter,
      QString::fromStdString(fmt::format("time (us); run ends at {:.3f} us", model_.end_us)));
}

void TimelineView::paintEvent(QPaintEvent* /*event*/) {
  QPainter p(this);
  paint_to(p, rect());
}

bool TimelineView::event(QEvent* e) {
  if (e->type() == QEvent::ToolTip) {
    const auto* help = static_cast<QHelpEvent*>(e);
    const Layout l = layout_of(model_, rect());
    for (const TimelineBar& b : model_.bars) {
      if (bar_rect(l, b).adjusted(-1, 0, 1, 0).contains(help->pos())) {
        QToolTip::showText(help->globalPos(),
                           QString::fromStdString(fmt::format("rank {}: {}", b.rank, b.label)));
        return true;
      }
    }
    QToolTip::hideText();
    e->ignore();
    return true;
  }
  return QWidget::event(e);
}

bool TimelineView::export_image(const QString& path, QString* error) {
  const QRect area(QPoint(0, 0), size());
  bool ok = false;
  if (path.endsWith(".svg", Qt::CaseInsensitive)) {
    ok = detail::write_svg(path, area.size(), QString::fromStdString(model_.title),
                           [&](QPainter& painter) { paint_to(painter, area); });
  } else {
    QImage image(area.size(), QImage::Format_ARGB32);
    {
      QPainter painter(&image);
      paint_to(painter, area);
    }
    ok = image.save(path, "PNG");
  }
  if (!ok && error != nullptr) {
    *error = QString("cannot write '%1'").arg(path);
  }
  return ok;
}

} // namespace collsim::charts
