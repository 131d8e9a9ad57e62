#pragma once
// What the window's files share (main_window.cpp and one main_window_*.cpp per tab): the
// includes, small helpers, the window's non-widget state and the background-job template.
// Private to gui/app.

#include "main_window.hpp"

#include "collsim/analysis/auto_choice.hpp"
#include "collsim/analysis/measured_logs.hpp"
#include "collsim/charts/qt_chart.hpp"
#include "collsim/core/errors.hpp"
#include "collsim/io/presets.hpp"
#include "compare_tab.hpp"
#include "explorer.hpp"
#include <QAction>
#include <QApplication>
#include <QBrush>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QFutureWatcher>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMenuBar>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollArea>
#include <QSpinBox>
#include <QSplitter>
#include <QStatusBar>
#include <QTabWidget>
#include <QTableWidget>
#include <QTimer>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrent>
#include <algorithm>
#include <atomic>
#include <cmath>
#include <fmt/format.h>
#include <map>
#include <optional>

namespace collsim::gui {

/// The largest message size the size boxes offer: 2^34 B = 16 GiB.
constexpr int kMaxSizeExponent = 34;
/// The largest rank count a timeline shows (a Gantt lane per rank stays readable).
constexpr int kMaxTimelineRanks = 16;

inline QString q(const std::string& s) {
  return QString::fromStdString(s);
}

/// A background computation's value or its error message.
template <class T>
struct Outcome {
  std::optional<T> value;
  std::string error;
};

/// Light colours for the tuning table's winners: one per algorithm, text stays readable.
inline QColor winner_color(std::size_t i) {
  static const std::array<QColor, 12> kPalette{
      QColor(174, 199, 232), QColor(255, 187, 120), QColor(152, 223, 138), QColor(255, 152, 150),
      QColor(197, 176, 213), QColor(196, 156, 148), QColor(247, 182, 210), QColor(219, 219, 141),
      QColor(158, 218, 229), QColor(204, 204, 204), QColor(140, 200, 170), QColor(230, 200, 120)};
  if (i < kPalette.size()) {
    return kPalette[i];
  }
  // Golden-angle hues beyond the palette.
  return QColor::fromHsv(static_cast<int>((i * 137) % 360), 70, 240);
}

inline void fill_size_combo(QComboBox* combo) {
  for (int e = 0; e <= kMaxSizeExponent; ++e) {
    const std::uint64_t b = std::uint64_t{1} << e;
    combo->addItem(q(core::format_bytes(core::Bytes{b})), QVariant::fromValue<qulonglong>(b));
  }
}

inline void select_data(QComboBox* combo, const QVariant& value) {
  const int i = combo->findData(value);
  if (i >= 0) {
    combo->setCurrentIndex(i);
  }
}

inline std::uint64_t combo_bytes(const QComboBox* combo) {
  return combo->currentData().toULongLong();
}

/// The window's state that is not a widget.
struct MainWindow::State {
  /// One kind of background computation: at most one runs; a request while it runs is noted
  /// and started when it ends; results of older requests than the latest are dropped.
  struct Job {
    std::uint64_t requested = 0; ///< generation of the latest request
    bool running = false;
    bool pending = false;
    std::shared_ptr<std::atomic<std::size_t>> done = std::make_shared<std::atomic<std::size_t>>(0);
    std::shared_ptr<std::atomic<std::size_t>> total = std::make_shared<std::atomic<std::size_t>>(0);
  };
  struct KnobWidget {
    analysis::WhatIfKnob knob;
    QDoubleSpinBox* spin = nullptr;
    double shown = 0.0; ///< the scenario's value as the spin box first showed it
  };

  std::shared_ptr<const algorithms::Registry> registry =
      std::make_shared<const algorithms::Registry>(algorithms::make_default_registry());
  core::Scenario scenario;
  std::vector<analysis::MeasuredPoint> measured;
  std::optional<SweepResult> sweep;
  std::optional<core::TuneTable> tuning;
  std::optional<ValidationOutput> validation;
  std::map<std::string, QString> errors;
  std::map<JobKind, Job> jobs{{JobKind::sweep, {}},
                              {JobKind::tuning, {}},
                              {JobKind::timeline, {}},
                              {JobKind::validation, {}}};
  std::vector<KnobWidget> knobs;
  analysis::WhatIfShape shape;

  Job& job(JobKind kind) { return jobs.at(kind); }
};

/// The study and what-if changes the controls describe, or the error they make.
inline std::optional<std::string> read_inputs(const MainWindow& window, core::StudySpec& study,
                                              analysis::WhatIf& what_if) {
  try {
    study = make_study(window.controls());
    what_if = window.what_if();
  } catch (const core::Error& e) {
    return std::string(e.what());
  }
  return std::nullopt;
}

/// A progress callback that stores (done, total) where the status bar's timer reads them.
inline analysis::Progress progress_into(std::shared_ptr<std::atomic<std::size_t>> done,
                                        std::shared_ptr<std::atomic<std::size_t>> total) {
  return [done = std::move(done), total = std::move(total)](std::size_t d, std::size_t t) {
    done->store(d);
    total->store(t);
  };
}

template <class T, class Work, class Show>
void MainWindow::launch(JobKind kind, std::uint64_t generation, Work work, Show show,
                        const char* source) {
  State::Job& j = s_->job(kind);
  j.running = true;
  progress_timer_->start();
  update_progress();
  using Result = std::shared_ptr<Outcome<T>>;
  auto* watcher = new QFutureWatcher<Result>(this);
  const std::string src = source;
  connect(watcher, &QFutureWatcherBase::finished, this,
          [this, watcher, kind, generation, show, src] {
            const Result r = watcher->result();
            watcher->deleteLater();
            const bool stale = generation != s_->job(kind).requested;
            if (!stale) {
              if (r->value) {
                set_error(src, {});
                try {
                  show(std::move(*r->value));
                } catch (const core::Error& e) {
                  set_error(src, q(e.what()));
                }
              } else {
                set_error(src, q(r->error));
                status_label_->setText(q(src + " failed"));
              }
            }
            finished(kind);
          });
  watcher->setFuture(QtConcurrent::run([work = std::move(work)]() -> Result {
    auto out = std::make_shared<Outcome<T>>();
    try {
      out->value.emplace(work());
    } catch (const core::Error& e) {
      out->error = e.what();
    } catch (const std::exception& e) {
      out->error = std::string("internal error: ") + e.what();
    }
    return out;
  }));
}

} // namespace collsim::gui
