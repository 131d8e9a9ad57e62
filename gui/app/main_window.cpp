#include "main_window.hpp"

#include "explorer.hpp"

#include "collsim/analysis/auto_choice.hpp"
#include "collsim/analysis/measured_logs.hpp"
#include "collsim/charts/qt_chart.hpp"
#include "collsim/core/errors.hpp"
#include "collsim/io/presets.hpp"

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
namespace {

/// The largest message size the size boxes offer: 2^34 B = 16 GiB.
constexpr int kMaxSizeExponent = 34;
/// The largest rank count a timeline shows (a Gantt lane per rank stays readable).
constexpr int kMaxTimelineRanks = 16;

QString q(const std::string& s) {
  return QString::fromStdString(s);
}

/// A background computation's value or its error message.
template <class T>
struct Outcome {
  std::optional<T> value;
  std::string error;
};

/// Light colours for the tuning table's winners: one per algorithm, text stays readable.
QColor winner_color(std::size_t i) {
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

void fill_size_combo(QComboBox* combo) {
  for (int e = 0; e <= kMaxSizeExponent; ++e) {
    const std::uint64_t b = std::uint64_t{1} << e;
    combo->addItem(q(core::format_bytes(core::Bytes{b})), QVariant::fromValue<qulonglong>(b));
  }
}

void select_data(QComboBox* combo, const QVariant& value) {
  const int i = combo->findData(value);
  if (i >= 0) {
    combo->setCurrentIndex(i);
  }
}

std::uint64_t combo_bytes(const QComboBox* combo) {
  return combo->currentData().toULongLong();
}

} // namespace

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

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent), s_(std::make_unique<State>()) {
  setObjectName("collsimMainWindow");
  setWindowTitle("collsim explorer");
  build_ui();
}

MainWindow::~MainWindow() = default;

const SweepResult* MainWindow::sweep() const {
  return s_->sweep ? &*s_->sweep : nullptr;
}
const core::TuneTable* MainWindow::tuning() const {
  return s_->tuning ? &*s_->tuning : nullptr;
}
const ValidationOutput* MainWindow::validation() const {
  return s_->validation ? &*s_->validation : nullptr;
}

// ---- layout ------------------------------------------------------------------------------------

void MainWindow::build_ui() {
  debounce_ = new QTimer(this);
  debounce_->setObjectName("debounceTimer");
  debounce_->setSingleShot(true);
  debounce_->setInterval(100);
  connect(debounce_, &QTimer::timeout, this, &MainWindow::recompute);
  progress_timer_ = new QTimer(this);
  progress_timer_->setInterval(100);
  connect(progress_timer_, &QTimer::timeout, this, &MainWindow::update_progress);

  auto* file_menu = menuBar()->addMenu("&File");
  QAction* open = file_menu->addAction("&Open scenario...");
  open->setShortcut(QKeySequence::Open);
  connect(open, &QAction::triggered, this, [this] {
    const QString path = QFileDialog::getOpenFileName(this, "Open scenario", QString(),
                                                      "Scenarios (*.yaml *.yml);;All files (*)");
    if (!path.isEmpty()) {
      open_scenario_file(path);
    }
  });
  QAction* ingest = file_menu->addAction("&Ingest measured logs...");
  connect(ingest, &QAction::triggered, this, [this] {
    const QStringList paths = QFileDialog::getOpenFileNames(
        this, "Measured logs (nccl-tests, OSU, IMB)", QString(), "Logs (*.txt *.log);;All (*)");
    if (!paths.isEmpty()) {
      ingest_logs(paths);
    }
  });
  file_menu->addSeparator();
  QAction* quit = file_menu->addAction("&Quit");
  quit->setShortcut(QKeySequence::Quit);
  connect(quit, &QAction::triggered, this, &QWidget::close);

  auto* splitter = new QSplitter(Qt::Horizontal, this);
  auto* scroll = new QScrollArea;
  scroll->setWidgetResizable(true);
  scroll->setWidget(build_controls());
  scroll->setMinimumWidth(350);
  splitter->addWidget(scroll);

  auto* right = new QWidget;
  auto* right_layout = new QVBoxLayout(right);
  right_layout->setContentsMargins(4, 4, 4, 4);
  error_label_ = new QLabel;
  error_label_->setObjectName("errorLabel");
  error_label_->setWordWrap(true);
  error_label_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
  error_label_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  error_label_->setStyleSheet("QLabel { background: #fde2e1; color: #8a1010; border: 1px solid "
                              "#e0a0a0; padding: 6px; }");
  error_label_->hide();
  right_layout->addWidget(error_label_);

  tabs_ = new QTabWidget;
  tabs_->setObjectName("tabs");
  right_layout->addWidget(tabs_, 1);

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

  {
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

  {
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

  {
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
  connect(tabs_, &QTabWidget::currentChanged, this, &MainWindow::refresh_current_tab);

  splitter->addWidget(right);
  splitter->setStretchFactor(1, 1);
  splitter->setSizes({360, 920});
  setCentralWidget(splitter);

  status_label_ = new QLabel("ready");
  status_label_->setObjectName("statusLabel");
  status_label_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
  progress_bar_ = new QProgressBar;
  progress_bar_->setObjectName("progressBar");
  progress_bar_->setMaximumWidth(220);
  progress_bar_->setRange(0, 1);
  progress_bar_->setValue(1);
  statusBar()->addWidget(status_label_, 1);
  statusBar()->addPermanentWidget(progress_bar_);
  resize(1280, 800);
}

QWidget* MainWindow::build_controls() {
  auto* panel = new QWidget;
  auto* layout = new QVBoxLayout(panel);

  auto* scenario_box = new QGroupBox("Scenario");
  auto* sl = new QVBoxLayout(scenario_box);
  auto* row = new QHBoxLayout;
  preset_combo_ = new QComboBox;
  preset_combo_->setObjectName("presetCombo");
  preset_combo_->addItem("(preset...)");
  for (const std::string& name : io::preset_names()) {
    preset_combo_->addItem(q(name));
  }
  connect(preset_combo_, &QComboBox::activated, this, [this](int index) {
    if (index > 0) {
      open_preset(preset_combo_->itemText(index));
    }
  });
  auto* open = new QPushButton("Open...");
  open->setObjectName("openButton");
  connect(open, &QPushButton::clicked, this, [this] {
    const QString path = QFileDialog::getOpenFileName(this, "Open scenario", QString(),
                                                      "Scenarios (*.yaml *.yml);;All files (*)");
    if (!path.isEmpty()) {
      open_scenario_file(path);
    }
  });
  row->addWidget(preset_combo_, 1);
  row->addWidget(open);
  sl->addLayout(row);
  scenario_label_ = new QLabel("no scenario");
  scenario_label_->setObjectName("scenarioLabel");
  scenario_label_->setWordWrap(true);
  sl->addWidget(scenario_label_);
  layout->addWidget(scenario_box);

  auto* study_box = new QGroupBox("Study");
  auto* form = new QFormLayout(study_box);
  collective_combo_ = new QComboBox;
  collective_combo_->setObjectName("collectiveCombo");
  for (const std::string& c : s_->registry->collectives_with_algorithms()) {
    collective_combo_->addItem(q(c));
  }
  form->addRow("collective", collective_combo_);
  algorithm_list_ = new QListWidget;
  algorithm_list_->setObjectName("algorithmList");
  algorithm_list_->setMinimumHeight(150);
  form->addRow("algorithms", algorithm_list_);
  params_edit_ = new QLineEdit;
  params_edit_->setObjectName("paramsEdit");
  params_edit_->setPlaceholderText("protocol=simple,channels=4");
  form->addRow("parameters", params_edit_);
  engine_combo_ = new QComboBox;
  engine_combo_->setObjectName("engineCombo");
  for (const std::string& e : analysis::engine_names()) {
    engine_combo_->addItem(q(e));
  }
  form->addRow("engine", engine_combo_);
  stacks_edit_ = new QLineEdit;
  stacks_edit_->setObjectName("stacksEdit");
  stacks_edit_->setPlaceholderText("openmpi-4.1,openmpi-4.1+ucc+nccl");
  stacks_edit_->setToolTip("library stacks to compare (collsim stacks lists them); empty: the "
                           "scenario's stack, else each algorithm's own");
  form->addRow("stacks", stacks_edit_);
  ranks_edit_ = new QLineEdit;
  ranks_edit_->setObjectName("ranksEdit");
  ranks_edit_->setPlaceholderText("8,16,64");
  form->addRow("ranks", ranks_edit_);
  min_size_combo_ = new QComboBox;
  min_size_combo_->setObjectName("minSizeCombo");
  fill_size_combo(min_size_combo_);
  max_size_combo_ = new QComboBox;
  max_size_combo_->setObjectName("maxSizeCombo");
  fill_size_combo(max_size_combo_);
  size_count_spin_ = new QSpinBox;
  size_count_spin_->setObjectName("sizeCountSpin");
  size_count_spin_->setRange(1, kMaxSizeExponent + 1);
  form->addRow("smallest size", min_size_combo_);
  form->addRow("largest size", max_size_combo_);
  form->addRow("sizes", size_count_spin_);
  layout->addWidget(study_box);

  connect(collective_combo_, &QComboBox::currentIndexChanged, this, [this] {
    if (filling_) {
      return;
    }
    std::vector<std::string> checked = controls().algorithms;
    fill_algorithms(core::collective_from_name(collective_combo_->currentText().toStdString()),
                    checked);
    schedule_recompute();
  });
  connect(algorithm_list_, &QListWidget::itemChanged, this, [this] { schedule_recompute(); });
  connect(params_edit_, &QLineEdit::textChanged, this, [this] { schedule_recompute(); });
  connect(engine_combo_, &QComboBox::currentIndexChanged, this, [this] { schedule_recompute(); });
  connect(stacks_edit_, &QLineEdit::textChanged, this, [this] { schedule_recompute(); });
  connect(ranks_edit_, &QLineEdit::textChanged, this, [this] { schedule_recompute(); });
  connect(min_size_combo_, &QComboBox::currentIndexChanged, this, [this] { schedule_recompute(); });
  connect(max_size_combo_, &QComboBox::currentIndexChanged, this, [this] { schedule_recompute(); });
  connect(size_count_spin_, &QSpinBox::valueChanged, this, [this] { schedule_recompute(); });

  what_if_group_ = new QGroupBox("What if");
  what_if_group_->setObjectName("whatIfGroup");
  auto* wl = new QVBoxLayout(what_if_group_);
  what_if_form_ = new QFormLayout;
  wl->addLayout(what_if_form_);
  nodes_spin_ = new QSpinBox;
  nodes_spin_->setObjectName("nodesSpin");
  nodes_spin_->setRange(0, 1 << 20);
  nodes_spin_->setSpecialValueText("as needed");
  ranks_per_node_spin_ = new QSpinBox;
  ranks_per_node_spin_->setObjectName("ranksPerNodeSpin");
  ranks_per_node_spin_->setRange(0, 1 << 16);
  auto* shape_form = new QFormLayout;
  shape_form->addRow("nodes", nodes_spin_);
  shape_form->addRow("ranks per node", ranks_per_node_spin_);
  wl->addLayout(shape_form);
  auto* reset = new QPushButton("Reset to the scenario");
  reset->setObjectName("resetWhatIfButton");
  connect(reset, &QPushButton::clicked, this, [this] {
    rebuild_what_if();
    schedule_recompute();
  });
  wl->addWidget(reset);
  connect(nodes_spin_, &QSpinBox::valueChanged, this, [this] { schedule_recompute(); });
  connect(ranks_per_node_spin_, &QSpinBox::valueChanged, this, [this] { schedule_recompute(); });
  layout->addWidget(what_if_group_);
  layout->addStretch(1);
  return panel;
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

// ---- controls ----------------------------------------------------------------------------------

void MainWindow::fill_algorithms(core::CollectiveKind collective,
                                 const std::vector<std::string>& checked) {
  const bool was_filling = filling_;
  filling_ = true;
  algorithm_list_->clear();
  // The checked algorithms first, in the study's order (the order of the series and the
  // timeline's "first selected algorithm"), then the others in registry order; with none of
  // `checked` in this collective, the first four are checked.
  std::vector<const algorithms::AlgorithmInfo*> order;
  for (const std::string& name : checked) {
    if (const auto* a = s_->registry->try_find(collective, name);
        a != nullptr && std::find(order.begin(), order.end(), a) == order.end()) {
      order.push_back(a);
    }
  }
  const std::size_t on = order.size();
  for (const auto* a : s_->registry->list(collective)) {
    if (std::find(order.begin(), order.end(), a) == order.end()) {
      order.push_back(a);
    }
  }
  // `auto` first: what the library a user of the machine calls would run (NCCL's choice on GPUs,
  // else Open MPI 4.1's fixed rules), resolved at every point.
  const bool auto_on =
      std::find(checked.begin(), checked.end(), analysis::kAutoAlgorithm) != checked.end();
  auto* library = new QListWidgetItem(q(std::string(analysis::kAutoAlgorithm)), algorithm_list_);
  library->setToolTip("what the library picks at each point: NCCL's choice on GPUs, else Open "
                      "MPI 4.1's fixed rules (the chosen algorithm is in the table's params)");
  library->setFlags(library->flags() | Qt::ItemIsUserCheckable);
  library->setCheckState(auto_on ? Qt::Checked : Qt::Unchecked);
  for (std::size_t i = 0; i < order.size(); ++i) {
    auto* item = new QListWidgetItem(q(order[i]->name), algorithm_list_);
    item->setToolTip(q(order[i]->summary));
    item->setFlags(item->flags() | Qt::ItemIsUserCheckable);
    const bool checked_now = on > 0 || auto_on ? i < on : i < 4;
    item->setCheckState(checked_now ? Qt::Checked : Qt::Unchecked);
  }
  filling_ = was_filling;
}

void MainWindow::fill_controls(const StudyControls& c) {
  filling_ = true;
  collective_combo_->setCurrentText(q(std::string(core::to_string(c.collective))));
  fill_algorithms(c.collective, c.algorithms);
  params_edit_->setText(q(c.params));
  engine_combo_->setCurrentText(q(c.engine));
  stacks_edit_->setText(q(c.stacks));
  ranks_edit_->setText(q(c.ranks));
  select_data(min_size_combo_, QVariant::fromValue<qulonglong>(c.min_bytes));
  select_data(max_size_combo_, QVariant::fromValue<qulonglong>(c.max_bytes));
  size_count_spin_->setValue(c.size_count);
  // A timeline of at most 16 ranks: the smallest rank count of the study, capped.
  if (const auto ranks = [&]() -> std::vector<std::uint32_t> {
        try {
          return parse_rank_list(c.ranks);
        } catch (const core::Error&) {
          return {};
        }
      }();
      !ranks.empty()) {
    const std::uint32_t smallest = *std::min_element(ranks.begin(), ranks.end());
    timeline_ranks_spin_->setValue(
        static_cast<int>(std::clamp<std::uint32_t>(smallest, 2, kMaxTimelineRanks)));
  }
  filling_ = false;
}

StudyControls MainWindow::controls() const {
  StudyControls c;
  c.collective = core::collective_from_name(collective_combo_->currentText().toStdString());
  c.algorithms.clear();
  for (int i = 0; i < algorithm_list_->count(); ++i) {
    const QListWidgetItem* item = algorithm_list_->item(i);
    if (item->checkState() == Qt::Checked) {
      c.algorithms.push_back(item->text().toStdString());
    }
  }
  c.params = params_edit_->text().toStdString();
  c.engine = engine_combo_->currentText().toStdString();
  c.stacks = stacks_edit_->text().toStdString();
  c.ranks = ranks_edit_->text().toStdString();
  c.min_bytes = combo_bytes(min_size_combo_);
  c.max_bytes = combo_bytes(max_size_combo_);
  c.size_count = size_count_spin_->value();
  return c;
}

void MainWindow::set_controls(const StudyControls& c) {
  fill_controls(c);
  schedule_recompute();
}

void MainWindow::rebuild_what_if() {
  filling_ = true;
  while (what_if_form_->rowCount() > 0) {
    what_if_form_->removeRow(0);
  }
  s_->knobs.clear();
  for (const analysis::WhatIfKnob& k : analysis::what_if_knobs(s_->scenario)) {
    auto* spin = new QDoubleSpinBox;
    spin->setObjectName(q("knob:" + k.path));
    spin->setToolTip(q(k.path));
    spin->setDecimals(3);
    spin->setStepType(QAbstractSpinBox::AdaptiveDecimalStepType);
    const double shown = analysis::to_display(k.unit, k.value);
    if (k.unit == analysis::FitParameter::Unit::bandwidth) {
      spin->setRange(0.001, 1e6);
    } else {
      spin->setRange(0.0, 1e6);
    }
    spin->setSuffix(q(" " + std::string(analysis::what_if_display_unit(k.unit))));
    spin->setValue(shown);
    connect(spin, &QDoubleSpinBox::valueChanged, this, [this] { schedule_recompute(); });
    what_if_form_->addRow(q(k.label), spin);
    s_->knobs.push_back({k, spin, spin->value()});
  }
  s_->shape = analysis::what_if_shape(s_->scenario);
  nodes_spin_->setEnabled(s_->shape.nodes.has_value());
  ranks_per_node_spin_->setEnabled(s_->shape.ranks_per_node.has_value());
  nodes_spin_->setValue(static_cast<int>(s_->shape.nodes.value_or(0)));
  const bool cluster = s_->scenario.topology.kind == "cluster";
  ranks_per_node_spin_->setMinimum(cluster ? 1 : 0);
  ranks_per_node_spin_->setSpecialValueText(cluster ? QString() : QString("every slot"));
  ranks_per_node_spin_->setMaximum(
      s_->shape.max_ranks_per_node > 0 ? static_cast<int>(s_->shape.max_ranks_per_node) : 1 << 16);
  ranks_per_node_spin_->setValue(static_cast<int>(s_->shape.ranks_per_node.value_or(0)));
  const QString none = "a uniform topology has no nodes";
  nodes_spin_->setToolTip(s_->shape.nodes ? "0: as many nodes as a study needs" : none);
  ranks_per_node_spin_->setToolTip(s_->shape.ranks_per_node ? "ranks placed on each node" : none);
  filling_ = false;
}

analysis::WhatIf MainWindow::what_if() const {
  analysis::WhatIf w;
  for (const State::KnobWidget& k : s_->knobs) {
    // Only values the user moved: the spin box rounds to 3 decimals, the scenario does not.
    if (k.spin->value() != k.shown) {
      w.values[k.knob.path] = analysis::from_display(k.knob.unit, k.spin->value());
    }
  }
  if (s_->shape.nodes && static_cast<std::uint32_t>(nodes_spin_->value()) != *s_->shape.nodes) {
    w.nodes = static_cast<std::uint32_t>(nodes_spin_->value());
  }
  if (s_->shape.ranks_per_node &&
      static_cast<std::uint32_t>(ranks_per_node_spin_->value()) != *s_->shape.ranks_per_node) {
    w.ranks_per_node = static_cast<std::uint32_t>(ranks_per_node_spin_->value());
  }
  return w;
}

// ---- scenarios and logs ------------------------------------------------------------------------

void MainWindow::set_scenario(const core::Scenario& scenario) {
  s_->scenario = scenario;
  set_error("scenario", {});
  scenario_label_->setText(
      q(fmt::format("<b>{}</b> ({} topology)<br><small>{}</small>", s_->scenario.name,
                    s_->scenario.topology.kind, s_->scenario.file)));
  scenario_label_->setToolTip(q(s_->scenario.description));
  setWindowTitle(q("collsim explorer: " + s_->scenario.name));
  try {
    fill_controls(default_controls(s_->scenario, *s_->registry));
    rebuild_what_if();
    check_first_study(s_->scenario, *s_->registry);
  } catch (const core::Error& e) {
    filling_ = false;
    set_error("scenario", q(e.what()));
  }
  // Results of the previous scenario are no longer this one's (recompute() makes the runs still
  // in flight stale).
  s_->sweep.reset();
  s_->tuning.reset();
  validation_dirty_ = !s_->measured.empty();
  recompute();
}

bool MainWindow::open_scenario_file(const QString& path) {
  try {
    set_scenario(load_scenario_or_preset(path.toStdString()));
    preset_combo_->setCurrentIndex(0);
    return true;
  } catch (const core::Error& e) {
    set_error("scenario", q(e.what()));
    return false;
  }
}

bool MainWindow::open_preset(const QString& name) {
  try {
    set_scenario(load_preset(name.toStdString()));
    const int i = preset_combo_->findText(name);
    preset_combo_->setCurrentIndex(std::max(0, i));
    return true;
  } catch (const core::Error& e) {
    set_error("scenario", q(e.what()));
    return false;
  }
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

// ---- exports -----------------------------------------------------------------------------------

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

// ---- errors and progress -----------------------------------------------------------------------

void MainWindow::set_error(const std::string& source, const QString& text) {
  if (text.isEmpty()) {
    s_->errors.erase(source);
  } else {
    s_->errors[source] = text;
  }
  QStringList lines;
  for (const auto& [_, message] : s_->errors) {
    lines << message;
  }
  error_label_->setText(lines.join("\n"));
  error_label_->setVisible(!lines.isEmpty());
}

QString MainWindow::error_text() const {
  return error_label_->text();
}

bool MainWindow::busy() const {
  return std::any_of(s_->jobs.begin(), s_->jobs.end(),
                     [](const auto& kv) { return kv.second.running || kv.second.pending; }) ||
         debounce_->isActive();
}

void MainWindow::update_progress() {
  std::size_t done = 0;
  std::size_t total = 0;
  bool running = false;
  for (const auto& [kind, j] : s_->jobs) {
    if (j.running) {
      running = true;
      done += j.done->load();
      total += j.total->load();
    }
  }
  if (!running) {
    progress_timer_->stop();
    progress_bar_->setRange(0, 1);
    progress_bar_->setValue(1);
    return;
  }
  if (total == 0) {
    progress_bar_->setRange(0, 0); // busy, size unknown yet
  } else {
    progress_bar_->setRange(0, static_cast<int>(std::min<std::size_t>(total, 1 << 30)));
    progress_bar_->setValue(static_cast<int>(std::min(done, total)));
  }
}

// ---- background work ---------------------------------------------------------------------------

namespace {

/// The study and what-if changes the controls describe, or the error they make.
std::optional<std::string> read_inputs(const MainWindow& window, core::StudySpec& study,
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
analysis::Progress progress_into(std::shared_ptr<std::atomic<std::size_t>> done,
                                 std::shared_ptr<std::atomic<std::size_t>> total) {
  return [done = std::move(done), total = std::move(total)](std::size_t d, std::size_t t) {
    done->store(d);
    total->store(t);
  };
}

} // namespace

void MainWindow::schedule_recompute() {
  if (!filling_) {
    debounce_->start();
  }
}

void MainWindow::recompute() {
  debounce_->stop();
  tuning_dirty_ = true;
  timeline_dirty_ = true;
  validation_dirty_ = !s_->measured.empty();
  request(JobKind::sweep);
  refresh_current_tab();
}

void MainWindow::refresh_current_tab() {
  QWidget* page = tabs_->currentWidget();
  if (page == nullptr) {
    return;
  }
  const QString title = tabs_->tabText(tabs_->currentIndex());
  if (title == "Tuning table" && tuning_dirty_) {
    request(JobKind::tuning);
  } else if (title == "Timeline" && timeline_dirty_) {
    request(JobKind::timeline);
  } else if (title == "Measured" && validation_dirty_) {
    request(JobKind::validation);
  }
}

void MainWindow::request(JobKind kind) {
  State::Job& j = s_->job(kind);
  ++j.requested;
  if (kind == JobKind::tuning) {
    tuning_dirty_ = false;
  } else if (kind == JobKind::timeline) {
    timeline_dirty_ = false;
  } else if (kind == JobKind::validation) {
    validation_dirty_ = false;
  }
  if (j.running) {
    j.pending = true;
    return;
  }
  start(kind);
}

void MainWindow::start(JobKind kind) {
  State::Job& j = s_->job(kind);
  j.pending = false;
  j.done->store(0);
  j.total->store(0);
  switch (kind) {
  case JobKind::sweep: start_sweep(j.requested); break;
  case JobKind::tuning: start_tuning(j.requested); break;
  case JobKind::timeline: start_timeline(j.requested); break;
  case JobKind::validation: start_validation(j.requested); break;
  }
}

void MainWindow::finished(JobKind kind) {
  State::Job& j = s_->job(kind);
  j.running = false;
  if (j.pending) {
    start(kind);
  }
  update_progress();
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

// ---- results -----------------------------------------------------------------------------------

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

void MainWindow::show_timeline(charts::TimelineModel&& model) {
  timeline_info_->setText(
      q(fmt::format("{} operations, {:.2f} us", model.bars.size(), model.end_us)));
  timeline_view_->set_model(std::move(model));
  ++timelines_shown_;
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
