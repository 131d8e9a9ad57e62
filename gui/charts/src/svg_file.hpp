#pragma once
// Internal to gui/charts: an SVG file drawn by a painter callback (chart and timeline exports).

#include <QPainter>
#include <QSize>
#include <QString>
#include <QSvgGenerator>

namespace collsim::charts::detail {

/// Writes an SVG of `size` (viewBox 0 0 width height) to `path`, drawn by `paint`; false when
/// the file cannot be written.
template <class Paint>
bool write_svg(const QString& path, QSize size, const QString& title, Paint paint) {
  QSvgGenerator svg;
  svg.setFileName(path);
  svg.setSize(size);
  svg.setViewBox(QRect(QPoint(0, 0), size));
  svg.setTitle(title);
  QPainter painter;
  if (!painter.begin(&svg)) {
    return false;
  }
  paint(painter);
  return painter.end();
}

} // namespace collsim::charts::detail
