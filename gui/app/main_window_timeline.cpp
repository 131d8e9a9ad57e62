// The Timeline tab: one run of the first selected algorithm, a Gantt lane per rank.

#include "main_window_internal.hpp"

namespace collsim::gui {

void MainWindow::build_timeline_tab() {
  timeline_view_ = new charts::TimelineView;
  timeline_view_->setObjectName("timelineView");
  auto* extra = new QWidget;
  auto* row = new QHBoxLayout(extra);
  row->setContentsMargins(0, 0, 0, 0);
  timeline_ranks_spin_ = new QSpinBox;
  timeline_ranks_spin_->setObjectName("timelineRanksSpin");
  timeline_ranks_spin_->setRange(2, kMaxTimelineRanks);
  timeline_ranks_spin_->setValue(8);
  timeline_ranks_spin_->setSuffix(" ranks");
  timeline_size_combo_ = new QComboBox;
  timeline_size_combo_->setObjectName("timelineSizeCombo");
  fill_size_combo(timeline_size_combo_);
  select_data(timeline_size_combo_, QVariant::fromValue<qulonglong>(1ULL << 20));
  timeline_info_ = new QLabel;
  timeline_info_->setObjectName("timelineInfo");
  timeline_info_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
  row->addWidget(new QLabel("first selected algorithm at"));
  row->addWidget(timeline_ranks_spin_);
  row->addWidget(timeline_size_combo_);
  row->addWidget(timeline_info_, 1);
  const auto changed = [this] {
    if (!filling_) {
      timeline_dirty_ = true;
      refresh_current_tab();
    }
  };
  connect(timeline_ranks_spin_, &QSpinBox::valueChanged, this, changed);
  connect(timeline_size_combo_, &QComboBox::currentIndexChanged, this, changed);
  tabs_->addTab(chart_tab("timeline", timeline_view_, extra, false), "Timeline");
}

void MainWindow::start_timeline(std::uint64_t generation) {
  core::StudySpec study;
  analysis::WhatIf w;
  if (const auto error = read_inputs(*this, study, w)) {
    set_error("controls", q(*error));
    return;
  }
  const auto ranks = static_cast<std::uint32_t>(timeline_ranks_spin_->value());
  const core::Bytes bytes{combo_bytes(timeline_size_combo_)};
  launch<charts::TimelineModel>(
      JobKind::timeline, generation,
      [registry = s_->registry, scenario = s_->scenario, w, study, ranks, bytes] {
        return compute_timeline(analysis::apply_what_if(scenario, w), study, ranks, bytes,
                                *registry);
      },
      [this](charts::TimelineModel&& m) { show_timeline(std::move(m)); }, "timeline");
}

void MainWindow::show_timeline(charts::TimelineModel&& model) {
  timeline_info_->setText(
      q(fmt::format("{} operations, {:.2f} us", model.bars.size(), model.end_us)));
  timeline_view_->set_model(std::move(model));
  ++timelines_shown_;
}

} // namespace collsim::gui
