#!/usr/bin/env bash
# The sanitizer and fuzzing stage of CI (docs/testing.md, "Sanitizers and fuzzing"); .ci/run runs it
# after `scripts/bootstrap.sh test`.
#
#   scripts/hardening.sh [--fuzz-seconds N]
#
# Installs clang-14 if missing, configures the `sanitizers` preset (clang-14, AddressSanitizer and
# UndefinedBehaviorSanitizer on every target, libFuzzer's coverage) in build/sanitizers, builds
# only the core, io, algorithms and engines suites and the fuzz harnesses, runs those suites and
# the seed and regression replays under the sanitizers, then each fuzz harness for N seconds
# (default 30, two at a time). Any sanitizer report, test failure or fuzz finding fails it.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$root/build/sanitizers
jobs=${COLLSIM_JOBS:-$(nproc)}
fuzz_seconds=30
while (($# > 0)); do
  case "$1" in
  --fuzz-seconds) fuzz_seconds=$2; shift 2 ;;
  *) echo "usage: $0 [--fuzz-seconds N]" >&2; exit 2 ;;
  esac
done

# shellcheck source=scripts/install_missing.sh
source "$root/scripts/install_missing.sh"
# clang-14 with its runtime libraries (libFuzzer and the sanitizers: libclang-rt-14-dev).
install_missing clang-14 libclang-rt-14-dev

# As in bootstrap.sh, clones share ccache's entries; the sanitizer build has debug information,
# whose working directory ccache would otherwise hash too.
export CCACHE_BASEDIR="$root" CCACHE_NOHASHDIR=1
start=$SECONDS
if [ ! -f "$build/CMakeCache.txt" ]; then
  launcher=()
  if command -v ccache >/dev/null 2>&1; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
  (cd "$root" && cmake --preset sanitizers "${launcher[@]}" > /dev/null)
fi
# The build preset names the targets: the suites below, the replay driver and the fuzzers.
(cd "$root" && cmake --build --preset sanitizers -j "$jobs")
suites=(collsim_core_tests collsim_io_tests collsim_algorithms_tests collsim_engines_tests)
echo "hardening: sanitizer build took $((SECONDS - start)) s" >&2

# Leaks are findings too; halt on the first UBSan report with a stack.
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export LSAN_OPTIONS="suppressions=$root/tests/fuzz/lsan.supp"
start=$SECONDS
regex="^($(IFS='|'; echo "${suites[*]}")):|^fuzz replay: "
# The registry-wide conformance sweep (every algorithm at 1..40, 64, 96, 100 and 128 ranks, a
# minute in Release) runs past its 10-minute limit under AddressSanitizer on 2 cores; every
# algorithm's own tests and the v-collective sweep still run here.
ctest --test-dir "$build" --output-on-failure -j "$jobs" -LE heavy -R "$regex" \
  -E "every registered algorithm implements its collective on 1..40"
echo "hardening: sanitizer suites took $((SECONDS - start)) s" >&2

start=$SECONDS
# A fixed seed: the same build fuzzes the same inputs, so a red CI run is repeatable.
"$root/scripts/fuzz.sh" --seconds "$fuzz_seconds" --jobs "$jobs" --seed 1
echo "hardening: fuzzing took $((SECONDS - start)) s" >&2
