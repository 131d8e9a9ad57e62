#!/bin/sh
# collsim-gui's bad command-line input: exit code 2 and exactly one line on stderr, checked before
# any display is opened (DISPLAY and WAYLAND_DISPLAY are unset). Usage: command_line_test.sh GUI
gui=$1
status=0
unset DISPLAY WAYLAND_DISPLAY
bad_yaml=$(mktemp "${TMPDIR:-/tmp}/collsim-gui-bad-XXXXXX.yaml")
printf 'name: bad\ntopology:\n  kind: uniform\n  bandwidth: 10\nstudies: []\n' >"$bad_yaml"

# expect ARGS... : exit code 2, one stderr line starting with "collsim-gui: ", nothing on stdout.
expect() {
  err=$("$gui" "$@" 2>&1 >/dev/null)
  rc=$?
  lines=$(printf '%s\n' "$err" | wc -l)
  case "$err" in
  "collsim-gui: "*) prefix=ok ;;
  *) prefix=bad ;;
  esac
  if [ "$rc" -ne 2 ] || [ "$lines" -ne 1 ] || [ "$prefix" != ok ]; then
    echo "FAIL: collsim-gui $* -> exit $rc, stderr ($lines lines): $err"
    status=1
  else
    echo "ok: collsim-gui $* -> $err"
  fi
}

expect --no-such-option
expect --preset
expect --preset no-such-preset
expect no-such-file-or-preset
expect textbook --preset dgx-a100
expect "$bad_yaml"

# The bad file's message points at the value: file:line:column.
err=$("$gui" "$bad_yaml" 2>&1 >/dev/null)
case "$err" in
*"$bad_yaml:4:"*) echo "ok: the message names $bad_yaml:4" ;;
*)
  echo "FAIL: expected $bad_yaml:4:... in: $err"
  status=1
  ;;
esac

# --help: usage on stdout, exit 0.
out=$("$gui" --help)
rc=$?
case "$out" in
"Usage: collsim-gui "*) [ "$rc" -eq 0 ] || status=1 ;;
*)
  echo "FAIL: --help printed: $out"
  status=1
  ;;
esac
rm -f "$bad_yaml"
exit $status
