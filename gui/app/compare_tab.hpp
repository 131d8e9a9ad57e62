#pragma once
// The Compare tab (issue 19; docs/workload-format.md, "Comparing machines" and "Variants"): one
// workload's step on the machines of a compare file, as `collsim compare --file` prints it, with a
// bar per machine of its compute and its exposed communication. The work runs in the background
// (QtConcurrent); a run started while one is going waits for it.

#include <QString>
#include <QWidget>

#include <memory>

class QLabel;
class QLineEdit;
class QPushButton;
class QSpinBox;
class QTableWidget;

namespace collsim::charts {
class ChartView;
}

namespace collsim::gui {

struct CompareOutput;

class CompareTab : public QWidget {
  Q_OBJECT

public:
  explicit CompareTab(QWidget* parent = nullptr);
  ~CompareTab() override;

  /// Runs the comparison of `path` (a compare file); the result shows when it is done.
  void run_file(const QString& path);
  /// True while a comparison runs.
  [[nodiscard]] bool busy() const;
  /// The last error, empty when the last run succeeded.
  [[nodiscard]] QString error_text() const;

private:
  void start();
  void show_output(const CompareOutput& out);

  QLineEdit* file_edit_ = nullptr;
  QSpinBox* steps_spin_ = nullptr;
  QPushButton* run_button_ = nullptr;
  QLabel* status_label_ = nullptr;
  QTableWidget* table_ = nullptr;
  charts::ChartView* chart_view_ = nullptr;
  bool running_ = false;
  QString error_;
};

} // namespace collsim::gui
