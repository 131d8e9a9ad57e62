// The Tuning table tab: the fastest algorithm per size and rank count, coloured by winner, exported
// in the formats real libraries load.

#include "main_window_internal.hpp"

namespace collsim::gui {

void MainWindow::build_tuning_tab() {
  auto* page = new QWidget;
  auto* layout = new QVBoxLayout(page);
  auto* row = new QHBoxLayout;
  tuning_format_combo_ = new QComboBox;
  tuning_format_combo_->setObjectName("tuningFormatCombo");
  for (const std::string& f : tuning_formats()) {
    tuning_format_combo_->addItem(q(f));
  }
  tuning_format_combo_->setToolTip(
      "The format to export; a library's file limits the candidates to its algorithms");
  connect(tuning_format_combo_, &QComboBox::currentIndexChanged, this, [this] {
    tuning_dirty_ = true;
    refresh_current_tab();
  });
  auto* tune = new QPushButton("Tune");
  tune->setObjectName("tuneButton");
  connect(tune, &QPushButton::clicked, this, [this] { request(JobKind::tuning); });
  auto* exp = new QPushButton("Export...");
  exp->setObjectName("exportTuningButton");
  connect(exp, &QPushButton::clicked, this, [this] {
    const std::string format = tuning_format_combo_->currentText().toStdString();
    const QString path = QFileDialog::getSaveFileName(this, "Export tuning table",
                                                      q("tuning" + tuning_file_suffix(format)));
    if (!path.isEmpty()) {
      export_tuning(path);
    }
  });
  row->addWidget(new QLabel("format:"));
  row->addWidget(tuning_format_combo_);
  row->addWidget(tune);
  row->addWidget(exp);
  row->addStretch(1);
  tuning_info_ = new QLabel;
  tuning_info_->setObjectName("tuningInfo");
  tuning_info_->setWordWrap(true);
  tuning_table_ = new QTableWidget;
  tuning_table_->setObjectName("tuningTable");
  tuning_table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  layout->addLayout(row);
  layout->addWidget(tuning_info_);
  layout->addWidget(tuning_table_, 1);
  tabs_->addTab(page, "Tuning table");
}

bool MainWindow::export_tuning(const QString& path) {
  if (!s_->tuning) {
    set_error("export", "no tuning table to export yet: press Tune first");
    return false;
  }
  try {
    const std::string text =
        format_tuning(*s_->tuning, tuning_format_combo_->currentText().toStdString());
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate)) {
      set_error("export", QString("cannot write '%1': %2").arg(path, file.errorString()));
      return false;
    }
    file.write(text.data(), static_cast<qint64>(text.size()));
    set_error("export", {});
    status_label_->setText("wrote " + path);
    return true;
  } catch (const core::Error& e) {
    set_error("export", q(e.what()));
    return false;
  }
}

void MainWindow::start_tuning(std::uint64_t generation) {
  core::StudySpec study;
  analysis::WhatIf w;
  if (const auto error = read_inputs(*this, study, w)) {
    set_error("controls", q(*error));
    return;
  }
  const std::string format = tuning_format_combo_->currentText().toStdString();
  tuning_info_->setText(
      q(fmt::format("tuning {} over {} rank counts and {} sizes...",
                    core::to_string(study.collective), study.ranks.size(), study.sizes.size())));
  State::Job& j = s_->job(JobKind::tuning);
  auto done = j.done;
  auto total = j.total;
  launch<core::TuneTable>(
      JobKind::tuning, generation,
      [registry = s_->registry, scenario = s_->scenario, w, study, format, done, total] {
        const analysis::Progress progress = progress_into(done, total);
        return compute_tuning(analysis::apply_what_if(scenario, w), study, format, *registry,
                              progress);
      },
      [this](core::TuneTable&& t) { show_tuning(std::move(t)); }, "tuning");
}

void MainWindow::show_tuning(core::TuneTable&& table) {
  s_->tuning = std::move(table);
  const core::TuneTable& t = *s_->tuning;
  tuning_table_->clear();
  tuning_table_->clearSpans();
  tuning_table_->setRowCount(static_cast<int>(t.sizes.size()));
  tuning_table_->setColumnCount(static_cast<int>(t.blocks.size()));
  QStringList rows;
  for (core::Bytes b : t.sizes) {
    rows << q(core::format_bytes(b));
  }
  tuning_table_->setVerticalHeaderLabels(rows);
  QStringList columns;
  std::map<std::string, std::size_t> colour_of;
  for (std::size_t c = 0; c < t.blocks.size(); ++c) {
    const core::TuneBlock& block = t.blocks[c];
    columns << QString("%1 ranks").arg(block.ranks);
    for (const core::TuneRange& range : block.ranges) {
      const auto first = std::lower_bound(t.sizes.begin(), t.sizes.end(), range.from);
      const auto last = std::lower_bound(t.sizes.begin(), t.sizes.end(), range.to);
      if (first == t.sizes.end() || last == t.sizes.end()) {
        continue;
      }
      const int r0 = static_cast<int>(first - t.sizes.begin());
      const int r1 = static_cast<int>(last - t.sizes.begin());
      const std::string label = core::label(range.winner);
      const std::size_t colour = colour_of.emplace(label, colour_of.size()).first->second;
      auto* item = new QTableWidgetItem(q(
          range.margin_pct > 0 ? fmt::format("{}  (+{:.0f} %)", label, range.margin_pct) : label));
      item->setBackground(QBrush(winner_color(colour)));
      item->setData(Qt::UserRole, q(label));
      std::string tip = fmt::format("{} to {}: {}", core::format_bytes(range.from),
                                    core::format_bytes(range.to), label);
      if (range.runner_up) {
        tip += fmt::format("\nrunner-up: {}, {:.1f} % slower at the closest point",
                           core::label(*range.runner_up), range.margin_pct);
      }
      if (!range.library_default.empty()) {
        tip += fmt::format("\n{} default: {} (regret {:.1f} %)", t.default_model,
                           fmt::join(range.library_default, ", "), range.regret_pct);
      }
      item->setToolTip(q(tip));
      tuning_table_->setItem(r0, static_cast<int>(c), item);
      if (r1 > r0) {
        tuning_table_->setSpan(r0, static_cast<int>(c), r1 - r0 + 1, 1);
      }
    }
  }
  tuning_table_->setHorizontalHeaderLabels(columns);
  tuning_table_->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
  std::string info =
      fmt::format("{} on {} ({}): the fastest algorithm per size range; the "
                  "margin is over the runner-up at the range's closest point",
                  t.blocks.empty() ? std::string("no block")
                                   : std::string(core::to_string(t.blocks.front().collective)),
                  t.scenario, t.engine);
  if (!t.skipped.empty()) {
    info += fmt::format("; {} candidate points refused", t.skipped.size());
  }
  tuning_info_->setText(q(info));
  ++tunings_shown_;
}

} // namespace collsim::gui
