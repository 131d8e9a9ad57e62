// collsim-gui's window: the frame, the controls, scenarios, errors and progress, and the
// background-job machinery. Each tab's own work is in main_window_<tab>.cpp; the Compare tab is
// its own widget (compare_tab.cpp).

#include "main_window_internal.hpp"

#include "collsim/io/imported_algorithms.hpp"

namespace collsim::gui {

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

  build_chart_tabs();
  build_measured_tab(ingest);
  build_tuning_tab();
  build_timeline_tab();
  // The Compare tab runs on its own inputs (a compare file), not on the study's controls.
  compare_tab_ = new CompareTab;
  compare_tab_->setObjectName("compareTab");
  tabs_->addTab(compare_tab_, "Compare");
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
  counts_edit_ = new QLineEdit;
  counts_edit_->setObjectName("countsEdit");
  counts_edit_->setPlaceholderText("uniform (zipf:1.2, normal:0.5, one:0, file:PATH)");
  counts_edit_->setToolTip("per-rank counts: runs the collective's v-variant (alltoallv, "
                           "allgatherv, ...; docs/imbalance.md)");
  form->addRow("counts", counts_edit_);
  skew_edit_ = new QLineEdit;
  skew_edit_->setObjectName("skewEdit");
  skew_edit_->setPlaceholderText("all at once (late:1ms, uniform:100us)");
  skew_edit_->setToolTip("when the ranks enter the call (docs/imbalance.md)");
  form->addRow("skew", skew_edit_);
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
  connect(counts_edit_, &QLineEdit::textChanged, this, [this] { schedule_recompute(); });
  connect(skew_edit_, &QLineEdit::textChanged, this, [this] { schedule_recompute(); });
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
  counts_edit_->setText(q(c.counts));
  skew_edit_->setText(q(c.skew));
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
  c.counts = counts_edit_->text().trimmed().toStdString();
  c.skew = skew_edit_->text().trimmed().toStdString();
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
    // The scenario's `file:` algorithms (MSCCL XML, GOAL) join the registry it is run with.
    algorithms::Registry registry = algorithms::make_default_registry();
    io::add_file_algorithms(registry, s_->scenario);
    s_->registry = std::make_shared<const algorithms::Registry>(std::move(registry));
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

} // namespace collsim::gui
