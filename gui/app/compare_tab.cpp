// The Compare tab: a compare file's machines (scenarios and variants of them) running one
// workload, in the table `collsim compare` prints and a stacked bar chart of each machine's step:
// its compute and the communication the compute does not hide.

#include "compare_tab.hpp"

#include "collsim/algorithms/registry.hpp"
#include "collsim/analysis/compare.hpp"
#include "collsim/charts/qt_chart.hpp"
#include "collsim/core/errors.hpp"
#include "collsim/io/compare_loader.hpp"
#include "collsim/io/workload_loader.hpp"

#include <QFileDialog>
#include <QFutureWatcher>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QTableWidget>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrent>

#include <fmt/format.h>

#include <map>

namespace collsim::gui {

struct CompareOutput {
  std::vector<analysis::CompareRow> rows;
  std::uint64_t steps = 1000;
  std::string error;
};

namespace {

/// Loads the compare file and its workloads and times every machine (no Qt: runs in a worker).
CompareOutput compute(const std::string& path, int steps_override) {
  CompareOutput out;
  try {
    const io::CompareSpec spec = io::load_compare(path);
    out.steps = steps_override > 0 ? static_cast<std::uint64_t>(steps_override) : spec.steps;
    std::map<std::string, core::Workload> workloads;
    std::vector<analysis::CompareEntry> entries;
    for (const io::CompareMachine& m : spec.machines) {
      const std::string& w = m.workload.empty() ? spec.workload : m.workload;
      if (w.empty()) {
        throw core::UsageError(fmt::format(
            "{}: variant '{}' names no workload: give the file a 'workload:'", path, m.label));
      }
      if (!workloads.contains(w)) {
        workloads.emplace(w, io::load_workload(w));
      }
    }
    for (const io::CompareMachine& m : spec.machines) {
      analysis::CompareEntry e;
      e.label = m.label;
      e.scenario = m.scenario;
      e.nodes = m.nodes != 0 ? m.nodes : spec.nodes;
      e.workload = &workloads.at(m.workload.empty() ? spec.workload : m.workload);
      e.own_workload = !m.workload.empty();
      e.price = m.price;
      entries.push_back(std::move(e));
    }
    const algorithms::Registry registry = algorithms::make_default_registry();
    out.rows = analysis::compare_machines(entries, registry, "loggp", 0);
  } catch (const core::Error& e) {
    out.error = e.what();
  }
  return out;
}

QTableWidgetItem* number(double v, int decimals) {
  auto* item = new QTableWidgetItem(QString::number(v, 'f', decimals));
  item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
  return item;
}

} // namespace

CompareTab::CompareTab(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  auto* row = new QHBoxLayout;
  row->addWidget(new QLabel("Compare file:"));
  file_edit_ = new QLineEdit;
  file_edit_->setObjectName("compareFileEdit");
  file_edit_->setPlaceholderText("workloads/hdr-vs-ndr.yaml");
  row->addWidget(file_edit_, 1);
  auto* browse = new QPushButton("Browse...");
  row->addWidget(browse);
  row->addWidget(new QLabel("Steps:"));
  steps_spin_ = new QSpinBox;
  steps_spin_->setObjectName("compareStepsSpin");
  steps_spin_->setRange(0, 1 << 30);
  steps_spin_->setSpecialValueText("file's");
  steps_spin_->setValue(0);
  row->addWidget(steps_spin_);
  run_button_ = new QPushButton("Compare");
  run_button_->setObjectName("compareRunButton");
  row->addWidget(run_button_);
  layout->addLayout(row);
  status_label_ = new QLabel(
      "A compare file lists the machines (scenarios, or variants of one) and the workload "
      "(docs/workload-format.md).");
  status_label_->setObjectName("compareStatus");
  status_label_->setWordWrap(true);
  layout->addWidget(status_label_);

  table_ = new QTableWidget(0, 9);
  table_->setObjectName("compareTable");
  table_->setHorizontalHeaderLabels({"machine", "ranks", "step (ms)", "comm. (ms)", "exposed (ms)",
                                     "exposed (%)", "time (h)", "cost", "most communication"});
  table_->horizontalHeader()->setStretchLastSection(true);
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  layout->addWidget(table_, 1);

  chart_view_ = new charts::ChartView;
  chart_view_->setObjectName("compareChart");
  chart_view_->setMinimumHeight(220);
  layout->addWidget(chart_view_, 1);

  connect(browse, &QPushButton::clicked, this, [this] {
    const QString path = QFileDialog::getOpenFileName(this, "Compare file", QString(),
                                                      "YAML (*.yaml *.yml);;All (*)");
    if (!path.isEmpty()) {
      file_edit_->setText(path);
    }
  });
  connect(run_button_, &QPushButton::clicked, this, &CompareTab::start);
}

CompareTab::~CompareTab() = default;

void CompareTab::run_file(const QString& path) {
  file_edit_->setText(path);
  start();
}

bool CompareTab::busy() const {
  return running_;
}

QString CompareTab::error_text() const {
  return error_;
}

void CompareTab::start() {
  if (running_) {
    return;
  }
  const std::string path = file_edit_->text().toStdString();
  const int steps = steps_spin_->value();
  running_ = true;
  run_button_->setEnabled(false);
  status_label_->setText(QString("Comparing %1 ...").arg(file_edit_->text()));
  auto* watcher = new QFutureWatcher<CompareOutput>(this);
  connect(watcher, &QFutureWatcher<CompareOutput>::finished, this, [this, watcher] {
    const CompareOutput out = watcher->result();
    watcher->deleteLater();
    running_ = false;
    run_button_->setEnabled(true);
    show_output(out);
  });
  watcher->setFuture(QtConcurrent::run([path, steps] { return compute(path, steps); }));
}

void CompareTab::show_output(const CompareOutput& out) {
  error_ = QString::fromStdString(out.error);
  if (!out.error.empty()) {
    status_label_->setText(error_);
    status_label_->setStyleSheet("QLabel { color: #8a1010; }");
    return;
  }
  status_label_->setStyleSheet(QString());
  status_label_->setText(
      QString("%1 machines, %2 steps priced; cost = time x nodes x price per node-hour")
          .arg(out.rows.size())
          .arg(out.steps));
  table_->setRowCount(static_cast<int>(out.rows.size()));
  for (std::size_t i = 0; i < out.rows.size(); ++i) {
    const analysis::CompareRow& r = out.rows[i];
    const int row = static_cast<int>(i);
    const double step_ms = r.timing.step.value * 1e3;
    table_->setItem(row, 0, new QTableWidgetItem(QString::fromStdString(r.label)));
    table_->setItem(row, 1, number(r.job.nodes * r.job.ranks_per_node, 0));
    table_->setItem(row, 2, number(step_ms, 3));
    table_->setItem(row, 3, number(r.timing.communication.value * 1e3, 3));
    table_->setItem(row, 4, number(r.timing.exposed.value * 1e3, 3));
    table_->setItem(row, 5,
                    number(step_ms > 0 ? 100.0 * r.timing.exposed.value * 1e3 / step_ms : 0.0, 1));
    table_->setItem(row, 6, number(r.hours(out.steps), 2));
    const auto cost = r.cost(out.steps);
    table_->setItem(row, 7, cost ? number(*cost, 2) : new QTableWidgetItem("-"));
    table_->setItem(row, 8, new QTableWidgetItem(QString::fromStdString(r.dominant)));
  }
  table_->resizeColumnsToContents();
  // The chart `collsim compare --plots` writes.
  chart_view_->set_model(charts::compare_chart(
      out.rows, "One step per machine",
      out.rows.empty() ? std::string{} : "workload " + out.rows.front().workload));
}

} // namespace collsim::gui
