// collsim-gui [SCENARIO] [--preset NAME] [--screenshot FILE] [--help]
//
// Exit codes: 0 normally (and after a screenshot), 1 when --screenshot got no result within 60 s
// or could not write the file, 2 for bad command-line input (one line on stderr).

#include "command_line.hpp"
#include "explorer.hpp"
#include "main_window.hpp"

#include "collsim/core/errors.hpp"

#include <QApplication>
#include <QGuiApplication>
#include <QPixmap>
#include <QScreen>
#include <QTimer>
#include <cstdio>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

namespace {

/// How long --screenshot waits for the first sweep.
constexpr int kScreenshotTimeoutMs = 60'000;
/// Time for the window to paint the charts after the result arrived.
constexpr int kSettleMs = 500;

} // namespace

int main(int argc, char** argv) {
  using namespace collsim;
  // Everything about the command line is checked before a display is needed.
  std::vector<std::string> args(argv + 1, argv + argc);
  gui::GuiOptions options;
  core::Scenario scenario;
  try {
    options = gui::parse_command_line(args);
    if (options.help) {
      std::cout << gui::usage_text();
      return 0;
    }
    scenario = options.preset.empty() ? gui::load_scenario_or_preset(options.scenario)
                                      : gui::load_preset(options.preset);
  } catch (const core::Error& e) {
    std::cerr << "collsim-gui: " << e.what() << "\n";
    return 2;
  }

  QApplication app(argc, argv);
  QApplication::setApplicationName("collsim-gui");
  gui::MainWindow window;
  if (!options.screenshot.empty()) {
    // Fill the screen, so the grab shows the window and nothing else (Xvfb has no window
    // manager to maximise it).
    if (QScreen* screen = QGuiApplication::primaryScreen()) {
      window.setGeometry(screen->geometry());
    }
    const QString path = QString::fromStdString(options.screenshot);
    QObject::connect(&window, &gui::MainWindow::sweep_shown, &app, [&app, path] {
      QTimer::singleShot(kSettleMs, &app, [&app, path] {
        QScreen* screen = QGuiApplication::primaryScreen();
        const QPixmap shot = screen != nullptr ? screen->grabWindow(0) : QPixmap();
        if (shot.isNull() || !shot.save(path, "PNG")) {
          std::cerr << "collsim-gui: cannot write the screenshot '" << path.toStdString() << "'\n";
          app.exit(1);
          return;
        }
        app.exit(0);
      });
    });
    QTimer::singleShot(kScreenshotTimeoutMs, &app, [&app, &window] {
      std::cerr << "collsim-gui: no result within 60 s for --screenshot";
      if (const QString e = window.error_text(); !e.isEmpty()) {
        std::cerr << ": " << e.toStdString();
      }
      std::cerr << "\n";
      app.exit(1);
    });
  }
  window.show();
  window.set_scenario(std::move(scenario));
  return QApplication::exec();
}
