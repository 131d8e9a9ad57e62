#!/bin/sh
# collsim-gui on an Xvfb screen of 1280x800: --screenshot grabs the screen once the first sweep's
# charts show; the picture must be 1280x800 and not blank (gui_window_test.cpp's
# --check-screenshot). Usage: screenshot_test.sh COLLSIM_GUI GUI_TESTS OUT.png
gui=$1
checker=$2
out=$3
if ! command -v xvfb-run >/dev/null 2>&1; then
  echo "SKIP: xvfb-run is not installed (Debian: apt-get install xvfb xauth)"
  exit 77
fi
rm -f "$out"
# No QT_QPA_PLATFORM: the program runs on xcb, against the X server xvfb-run starts.
env -u QT_QPA_PLATFORM xvfb-run -a -s "-screen 0 1280x800x24" "$gui" --preset dgx-a100 \
  --screenshot "$out"
rc=$?
if [ "$rc" -ne 0 ]; then
  echo "FAIL: collsim-gui --screenshot exited with $rc"
  exit 1
fi
QT_QPA_PLATFORM=offscreen "$checker" --check-screenshot "$out" 1280 800
