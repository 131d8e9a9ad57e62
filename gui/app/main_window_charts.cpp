// The Crossover, Bus bandwidth and Scaling tabs: a sweep of the study's algorithms over sizes and
// rank counts, drawn three ways, and their PNG, SVG and CSV export.

#include "main_window_internal.hpp"

namespace collsim::gui {

void MainWindow::build_chart_tabs() {
  crossover_view_ = new charts::ChartView;
  crossover_view_->setObjectName("crossoverView");
  crossover_ranks_combo_ = new QComboBox;
  crossover_ranks_combo_->setObjectName("crossoverRanksCombo");
  tabs_->addTab(chart_tab("crossover", crossover_view_, crossover_ranks_combo_), "Crossover");

  busbw_view_ = new charts::ChartView;
  busbw_view_->setObjectName("busbwView");
  busbw_ranks_combo_ = new QComboBox;
  busbw_ranks_combo_->setObjectName("busbwRanksCombo");
  tabs_->addTab(chart_tab("busbw", busbw_view_, busbw_ranks_combo_), "Bus bandwidth");

  scaling_view_ = new charts::ChartView;
  scaling_view_->setObjectName("scalingView");
  scaling_size_combo_ = new QComboBox;
  scaling_size_combo_->setObjectName("scalingSizeCombo");
  tabs_->addTab(chart_tab("scaling", scaling_view_, scaling_size_combo_), "Scaling");
  for (QComboBox* combo : {crossover_ranks_combo_, busbw_ranks_combo_, scaling_size_combo_}) {
    connect(combo, &QComboBox::currentIndexChanged, this, [this] {
      if (!filling_) {
        redraw_sweep_charts();
      }
    });
  }
}

QWidget* MainWindow::chart_tab(const QString& name, QWidget* view, QWidget* extra, bool with_csv,
                               QWidget* note) {
  auto* page = new QWidget;
  auto* layout = new QVBoxLayout(page);
  auto* row = new QHBoxLayout;
  if (extra != nullptr) {
    if (qobject_cast<QComboBox*>(extra) != nullptr) {
      row->addWidget(new QLabel(name == "scaling" ? "at size:" : "at ranks:"));
    }
    row->addWidget(extra);
  }
  row->addStretch(1);
  QStringList formats{"png", "svg"};
  if (with_csv) {
    formats << "csv";
  }
  for (const QString& f : formats) {
    auto* button = new QPushButton("Export " + f.toUpper());
    button->setObjectName(name + "Export" + f.toUpper());
    connect(button, &QPushButton::clicked, this, [this, name, f] {
      const QString path = QFileDialog::getSaveFileName(this, "Export chart", name + "." + f,
                                                        f.toUpper() + " (*." + f + ")");
      if (!path.isEmpty()) {
        export_chart(name, path);
      }
    });
    row->addWidget(button);
  }
  layout->addLayout(row);
  if (note != nullptr) {
    layout->addWidget(note);
  }
  layout->addWidget(view, 1);
  return page;
}

bool MainWindow::export_chart(const QString& tab, const QString& path) {
  QString error;
  bool ok = false;
  if (tab == "timeline") {
    if (path.endsWith(".csv", Qt::CaseInsensitive)) {
      error = "the timeline exports as PNG or SVG";
    } else {
      ok = timeline_view_->export_image(path, &error);
    }
  } else {
    charts::ChartView* view = tab == "crossover"  ? crossover_view_
                              : tab == "busbw"    ? busbw_view_
                              : tab == "scaling"  ? scaling_view_
                              : tab == "measured" ? validation_view_
                                                  : nullptr;
    if (view == nullptr) {
      error = "no chart tab '" + tab + "'";
    } else if (path.endsWith(".csv", Qt::CaseInsensitive)) {
      ok = view->export_csv(path, &error);
    } else if (path.endsWith(".png", Qt::CaseInsensitive) ||
               path.endsWith(".svg", Qt::CaseInsensitive)) {
      ok = view->export_image(path, &error);
    } else {
      error = "export as .png, .svg or .csv, got '" + path + "'";
    }
  }
  set_error("export", ok ? QString() : error);
  if (ok) {
    status_label_->setText("wrote " + path);
  }
  return ok;
}

void MainWindow::start_sweep(std::uint64_t generation) {
  core::StudySpec study;
  analysis::WhatIf w;
  if (const auto error = read_inputs(*this, study, w)) {
    set_error("controls", q(*error));
    return;
  }
  set_error("controls", {});
  status_label_->setText(q(fmt::format("sweeping {} algorithms x {} rank counts x {} sizes ({})",
                                       study.algorithms.size(), study.ranks.size(),
                                       study.sizes.size(), study.engine)));
  State::Job& j = s_->job(JobKind::sweep);
  auto done = j.done;
  auto total = j.total;
  launch<SweepResult>(
      JobKind::sweep, generation,
      [registry = s_->registry, scenario = s_->scenario, w, study, done, total] {
        const analysis::Progress progress = progress_into(done, total);
        return compute_sweep(scenario, w, study, *registry, progress);
      },
      [this](SweepResult&& r) { show_sweep(std::move(r)); }, "sweep");
}

void MainWindow::show_sweep(SweepResult&& result) {
  s_->sweep = std::move(result);
  filling_ = true;
  const auto refill_ranks = [this](QComboBox* combo) {
    const QVariant keep = combo->currentData();
    combo->clear();
    std::vector<std::uint32_t> ranks = s_->sweep->study.ranks;
    std::sort(ranks.begin(), ranks.end());
    for (std::uint32_t p : ranks) {
      combo->addItem(QString::number(p), QVariant::fromValue<uint>(p));
    }
    const int i = keep.isValid() ? combo->findData(keep) : -1;
    combo->setCurrentIndex(i >= 0 ? i : combo->count() - 1);
  };
  refill_ranks(crossover_ranks_combo_);
  refill_ranks(busbw_ranks_combo_);
  {
    const QVariant keep = scaling_size_combo_->currentData();
    scaling_size_combo_->clear();
    for (core::Bytes b : s_->sweep->study.sizes) {
      scaling_size_combo_->addItem(q(core::format_bytes(b)),
                                   QVariant::fromValue<qulonglong>(b.value));
    }
    const int i = keep.isValid() ? scaling_size_combo_->findData(keep) : -1;
    scaling_size_combo_->setCurrentIndex(i >= 0 ? i : scaling_size_combo_->count() - 1);
  }
  filling_ = false;
  redraw_sweep_charts();
  const auto& r = s_->sweep->result;
  std::string status = fmt::format(
      "{}: {} points in {:.0f} ms ({}, {} algorithms, {})", s_->sweep->scenario.name, r.rows.size(),
      s_->sweep->seconds * 1e3, core::to_string(s_->sweep->study.collective),
      s_->sweep->study.algorithms.size(), s_->sweep->study.engine);
  if (!r.skipped.empty()) {
    status += fmt::format("; {} points skipped (hover for why)", r.skipped.size());
  }
  status_label_->setText(q(status));
  std::string why;
  for (std::size_t i = 0; i < r.skipped.size() && i < 20; ++i) {
    why += (i ? "\n" : "") + r.skipped[i];
  }
  status_label_->setToolTip(q(why));
  ++sweeps_shown_;
  Q_EMIT sweep_shown();
}

void MainWindow::redraw_sweep_charts() {
  if (!s_->sweep) {
    return;
  }
  const std::uint32_t crossover_ranks = crossover_ranks_combo_->currentData().toUInt();
  const std::uint32_t busbw_ranks = busbw_ranks_combo_->currentData().toUInt();
  const core::Bytes bytes{scaling_size_combo_->currentData().toULongLong()};
  const SweepCharts c1 = sweep_charts(*s_->sweep, crossover_ranks, bytes);
  crossover_view_->set_model(c1.crossover);
  scaling_view_->set_model(c1.scaling);
  if (busbw_ranks == crossover_ranks) {
    busbw_view_->set_model(c1.busbw);
  } else {
    busbw_view_->set_model(sweep_charts(*s_->sweep, busbw_ranks, bytes).busbw);
  }
}

} // namespace collsim::gui
