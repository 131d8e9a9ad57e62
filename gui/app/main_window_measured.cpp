// The Measured tab: measured logs (nccl-tests, OSU, IMB) ingested and validated against collsim's
// prediction with the library's own choice (auto).

#include "main_window_internal.hpp"

namespace collsim::gui {

void MainWindow::build_measured_tab(QAction* ingest) {
  validation_view_ = new charts::ChartView;
  validation_view_->setObjectName("validationView");
  auto* extra = new QWidget;
  auto* row = new QHBoxLayout(extra);
  row->setContentsMargins(0, 0, 0, 0);
  auto* button = new QPushButton("Ingest logs...");
  button->setObjectName("ingestButton");
  button->setToolTip("Read nccl-tests, OSU or IMB logs and compare them with collsim's "
                     "prediction (algorithm: auto, the library's own choice)");
  connect(button, &QPushButton::clicked, ingest, &QAction::trigger);
  validation_summary_ = new QLabel("no measured logs yet");
  validation_summary_->setObjectName("validationSummary");
  validation_summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  validation_summary_->setWordWrap(true); // long file names wrap, the window keeps its width
  row->addWidget(button);
  tabs_->addTab(chart_tab("measured", validation_view_, extra, true, validation_summary_),
                "Measured");
}

void MainWindow::ingest_logs(const QStringList& paths) {
  std::vector<std::string> files;
  for (const QString& p : paths) {
    files.push_back(p.toStdString());
  }
  try {
    analysis::MeasuredLogs logs = analysis::read_measured_logs(files);
    if (logs.points.empty()) {
      set_error("validation", q(fmt::format("{}: no measurement collsim has a model for",
                                            fmt::join(files, ", "))));
      return;
    }
    s_->measured = std::move(logs.points);
    measured_files_ = paths;
    set_error("validation", {});
    validation_dirty_ = true;
    tabs_->setCurrentIndex(3);
    request(JobKind::validation);
  } catch (const core::Error& e) {
    set_error("validation", q(e.what()));
  }
}

void MainWindow::start_validation(std::uint64_t generation) {
  if (s_->measured.empty()) {
    return;
  }
  analysis::WhatIf w;
  try {
    w = what_if();
  } catch (const core::Error& e) {
    set_error("controls", q(e.what()));
    return;
  }
  const std::string engine = engine_combo_->currentText().toStdString();
  validation_summary_->setText("validating...");
  launch<ValidationOutput>(
      JobKind::validation, generation,
      [registry = s_->registry, scenario = s_->scenario, w, points = s_->measured, engine] {
        return compute_validation(analysis::apply_what_if(scenario, w), points, engine, *registry);
      },
      [this](ValidationOutput&& v) { show_validation(std::move(v)); }, "validation");
}

void MainWindow::show_validation(ValidationOutput&& output) {
  s_->validation = std::move(output);
  validation_view_->set_model(s_->validation->chart);
  QStringList names;
  for (const QString& f : measured_files_) {
    names << QFileInfo(f).fileName();
  }
  validation_summary_->setText(q(s_->validation->summary) + " (" + names.join(", ") + ")");
  validation_summary_->setToolTip(q(s_->validation->chart.subtitle));
  ++validations_shown_;
}

} // namespace collsim::gui
