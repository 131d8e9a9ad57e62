#pragma once
// collsim-gui's window: controls on the left (scenario, study, what-if), charts in tabs on the
// right, an error banner above them and progress in the status bar. The window is thin: every
// computation is a function of explorer.hpp, run in the background (QtConcurrent) with a
// generation counter so that a result computed from old inputs is dropped, and one run per kind
// at a time (a change while one runs starts the next as soon as it ends).

#include <QMainWindow>
#include <QString>
#include <QStringList>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

class QAction;
class QComboBox;
class QDoubleSpinBox;
class QFormLayout;
class QGroupBox;
class QLabel;
class QLineEdit;
class QListWidget;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QTabWidget;
class QTableWidget;
class QTimer;

// Forward declarations only: moc reads this header, and collsim's C++20 headers are more than
// its parser takes (the window's state is in main_window.cpp).
namespace collsim::core {
enum class CollectiveKind : std::uint8_t;
struct Scenario;
struct TuneTable;
} // namespace collsim::core
namespace collsim::analysis {
struct WhatIf;
} // namespace collsim::analysis
namespace collsim::charts {
class ChartView;
class TimelineView;
struct TimelineModel;
} // namespace collsim::charts

namespace collsim::gui {

class CompareTab;
struct StudyControls;
struct SweepResult;
struct ValidationOutput;

class MainWindow : public QMainWindow {
  Q_OBJECT

public:
  explicit MainWindow(QWidget* parent = nullptr);
  ~MainWindow() override;

  /// Shows `scenario`: the controls take its first study's values, the what-if knobs its link
  /// levels, and a sweep starts.
  void set_scenario(const core::Scenario& scenario);
  /// Loads a scenario file; on an error the banner shows it (file:line:column) and the current
  /// scenario stays. Returns whether it loaded.
  bool open_scenario_file(const QString& path);
  /// Loads a preset (errors as open_scenario_file).
  bool open_preset(const QString& name);
  /// Reads measured logs (nccl-tests, OSU, IMB) and validates the scenario against them.
  void ingest_logs(const QStringList& paths);
  /// Writes the tuning table in the format chosen in the Tuning tab.
  bool export_tuning(const QString& path);
  /// Writes a chart tab ("crossover", "busbw", "scaling", "measured", "timeline") as PNG, SVG (by
  /// extension) or CSV (.csv; not for the timeline).
  bool export_chart(const QString& tab, const QString& path);

  /// The study and what-if changes the controls describe now.
  [[nodiscard]] StudyControls controls() const;
  [[nodiscard]] analysis::WhatIf what_if() const;
  /// Sets the study controls (as a user would; a sweep follows after the debounce).
  void set_controls(const StudyControls& controls);

  /// The last sweep shown (nullptr before the first).
  [[nodiscard]] const SweepResult* sweep() const;
  [[nodiscard]] const core::TuneTable* tuning() const;
  [[nodiscard]] const ValidationOutput* validation() const;
  /// How many results of each kind were shown so far (tests wait on them).
  [[nodiscard]] std::uint64_t sweeps_shown() const { return sweeps_shown_; }
  [[nodiscard]] std::uint64_t tunings_shown() const { return tunings_shown_; }
  [[nodiscard]] std::uint64_t timelines_shown() const { return timelines_shown_; }
  [[nodiscard]] std::uint64_t validations_shown() const { return validations_shown_; }
  /// The error banner's text (empty when there is no error).
  [[nodiscard]] QString error_text() const;
  /// Whether any background computation is running or waiting.
  [[nodiscard]] bool busy() const;

Q_SIGNALS:
  /// A sweep's charts were drawn.
  void sweep_shown();

private:
  enum class JobKind { sweep, tuning, timeline, validation };
  struct State; ///< scenario, results, jobs (main_window.cpp)

  void build_ui();
  QWidget* build_controls();
  // One per tab, in main_window_<tab>.cpp: each builds its page and adds it to tabs_.
  void build_chart_tabs();
  void build_measured_tab(QAction* ingest);
  void build_tuning_tab();
  void build_timeline_tab();
  /// A chart tab: `extra` left of the export buttons, `note` on a line of its own below them.
  QWidget* chart_tab(const QString& name, QWidget* view, QWidget* extra, bool with_csv = true,
                     QWidget* note = nullptr);
  void fill_controls(const StudyControls& c);
  void fill_algorithms(core::CollectiveKind collective, const std::vector<std::string>& checked);
  void rebuild_what_if();
  void schedule_recompute();
  void recompute();
  void refresh_current_tab();
  void set_error(const std::string& source, const QString& text);
  void update_progress();

  void request(JobKind kind);
  void start(JobKind kind);
  void start_sweep(std::uint64_t generation);
  void start_tuning(std::uint64_t generation);
  void start_timeline(std::uint64_t generation);
  void start_validation(std::uint64_t generation);
  /// Runs `work` in the background and calls `show` (in the GUI thread) with its value, or puts
  /// its error in the banner under `source`, unless a newer request of `kind` came meanwhile.
  template <class T, class Work, class Show>
  void launch(JobKind kind, std::uint64_t generation, Work work, Show show, const char* source);
  void finished(JobKind kind);

  void show_sweep(SweepResult&& result);
  void redraw_sweep_charts();
  void show_tuning(core::TuneTable&& table);
  void show_timeline(charts::TimelineModel&& model);
  void show_validation(ValidationOutput&& output);

  std::unique_ptr<State> s_;
  QStringList measured_files_;
  bool filling_ = false; ///< controls being set by code: no recompute per widget
  bool tuning_dirty_ = true;
  bool timeline_dirty_ = true;
  bool validation_dirty_ = false;
  std::uint64_t sweeps_shown_ = 0;
  std::uint64_t tunings_shown_ = 0;
  std::uint64_t timelines_shown_ = 0;
  std::uint64_t validations_shown_ = 0;

  // Widgets.
  QComboBox* preset_combo_ = nullptr;
  QLabel* scenario_label_ = nullptr;
  QComboBox* collective_combo_ = nullptr;
  QListWidget* algorithm_list_ = nullptr;
  QLineEdit* params_edit_ = nullptr;
  QLineEdit* stacks_edit_ = nullptr;
  QComboBox* engine_combo_ = nullptr;
  QLineEdit* ranks_edit_ = nullptr;
  QLineEdit* counts_edit_ = nullptr; ///< a v-collective's counts ("zipf:1.2"; docs/imbalance.md)
  QLineEdit* skew_edit_ = nullptr;   ///< the ranks' arrival skew ("late:1ms")
  QComboBox* min_size_combo_ = nullptr;
  QComboBox* max_size_combo_ = nullptr;
  QSpinBox* size_count_spin_ = nullptr;
  QGroupBox* what_if_group_ = nullptr;
  QFormLayout* what_if_form_ = nullptr;
  QSpinBox* nodes_spin_ = nullptr;
  QSpinBox* ranks_per_node_spin_ = nullptr;

  QLabel* error_label_ = nullptr;
  QTabWidget* tabs_ = nullptr;
  charts::ChartView* crossover_view_ = nullptr;
  charts::ChartView* busbw_view_ = nullptr;
  charts::ChartView* scaling_view_ = nullptr;
  charts::ChartView* validation_view_ = nullptr;
  charts::TimelineView* timeline_view_ = nullptr;
  CompareTab* compare_tab_ = nullptr;
  QComboBox* crossover_ranks_combo_ = nullptr;
  QComboBox* busbw_ranks_combo_ = nullptr;
  QComboBox* scaling_size_combo_ = nullptr;
  QLabel* validation_summary_ = nullptr;
  QComboBox* tuning_format_combo_ = nullptr;
  QTableWidget* tuning_table_ = nullptr;
  QLabel* tuning_info_ = nullptr;
  QSpinBox* timeline_ranks_spin_ = nullptr;
  QComboBox* timeline_size_combo_ = nullptr;
  QLabel* timeline_info_ = nullptr;
  QLabel* status_label_ = nullptr;
  QProgressBar* progress_bar_ = nullptr;
  QTimer* debounce_ = nullptr;
  QTimer* progress_timer_ = nullptr;
};

} // namespace collsim::gui
