#!/usr/bin/env bash
# Runs collsim's libFuzzer harnesses (tests/fuzz, docs/testing.md "Fuzzing").
#
#   scripts/fuzz.sh [--seconds N | --runs N] [--jobs J] [--seed S] [--timeout T]
#                   [--flags "-OPT=V ..."] [TARGET...]
#
# Needs the `sanitizers` build (scripts/hardening.sh makes it, or: cmake --preset sanitizers &&
# cmake --build build/sanitizers --target collsim_fuzzers). Each target runs for N seconds (default
# 30) or N executions on its seeds plus the corpus it grew before (build/sanitizers/fuzz/corpus),
# J targets at a time (default: the cores), from libFuzzer's random seed S (default: a new one each
# run; CI fixes it, so a run is repeatable). An input running longer than T seconds (default 10) is
# a finding; libFuzzer measures wall-clock time, so a long run at low priority beside builds wants
# more (an input starved of the CPU for 13 s once looked like a hang; alone it took 32 ms).
# --flags passes more libFuzzer options to every target (e.g. "-entropic=0 -max_len=2048" for the
# log reader, whose rate libFuzzer's own bookkeeping bounds; docs/testing.md).
# Prints one row per target, the executions and what was found; a finding (crash, leak, sanitizer
# report, exception outside collsim's errors, time-out or memory over 2 GB) leaves its input under
# build/sanitizers/fuzz/findings/ and makes the exit status 1. A finding becomes a regression:
# copy the input to tests/fuzz/regressions/TARGET/. A harness stopped early (`pkill -INT -f
# collsim_fuzz_TARGET`) reads "interrupted, no finding" (exit status 1): its executions count.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${COLLSIM_SANITIZER_DIR:-$root/build/sanitizers}
list="$build/tests/fuzz/fuzzers.txt"
limit=(-max_total_time=30)
jobs=$(nproc)
seed=()
timeout=10
extra=()
targets=()
while (($# > 0)); do
  case "$1" in
  --seconds) limit=(-max_total_time="$2"); shift 2 ;;
  --runs) limit=(-runs="$2"); shift 2 ;;
  --jobs) jobs=$2; shift 2 ;;
  --seed) seed=(-seed="$2"); shift 2 ;;
  --timeout) timeout=$2; shift 2 ;;
  --flags) read -r -a extra <<<"$2"; shift 2 ;;
  -h | --help) sed -n 2,21p "$0"; exit 0 ;;
  -*) echo "fuzz.sh: unknown option $1 (--help)" >&2; exit 2 ;;
  *) targets+=("$1"); shift ;;
  esac
done
if [ ! -f "$list" ]; then
  echo "fuzz.sh: $list is missing: build the sanitizers preset first (scripts/hardening.sh)" >&2
  exit 2
fi

out="$build/fuzz"
# Leaks inside other projects' libraries that collsim cannot free (each explained in the file).
export LSAN_OPTIONS="suppressions=$root/tests/fuzz/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
# The allocator settings OSS-Fuzz and ClusterFuzz fuzz with (oss-fuzz
# infra/base-images/base-runner/Dockerfile): a 10 MB quarantine of freed memory instead of ASan's
# 256 MB, which still catches a use after free within one input, and freed pages given back
# every 0.5 s. Recycling the large quarantine was most of the time of the harnesses that allocate
# much (hwloc's XML import: lstopo runs 2x faster). The caller's ASAN_OPTIONS come after and win.
export ASAN_OPTIONS="quarantine_size_mb=10:allocator_release_to_os_interval_ms=500${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
mkdir -p "$out/corpus" "$out/findings" "$out/logs" "$out/work"

# One target: its line of fuzzers.txt is "name binary dict seed...".
run_target() {
  local name=$1 binary=$2 dict=$3
  shift 3
  local args=("${limit[@]}" "${seed[@]}" -timeout="$timeout" -rss_limit_mb=2048 -print_final_stats=1
    -artifact_prefix="$out/findings/$name-" "${extra[@]}")
  if [ "$dict" != none ]; then args+=(-dict="$dict"); fi
  mkdir -p "$out/corpus/$name" "$out/work/$name"
  # libFuzzer reads corpora from directories only: the seeds (files and directories) are copied
  # into one, numbered where two have the same name.
  local seeds="$out/seeds/$name" s
  rm -rf "$seeds" && mkdir -p "$seeds"
  for s in "$@"; do
    find "$s" -type f -exec cp --backup=numbered -t "$seeds" {} +
  done
  # The scratch directory is the working directory: a scenario naming relative files finds none.
  (cd "$out/work/$name" && "$binary" "${args[@]}" "$out/corpus/$name" "$seeds") \
    > "$out/logs/$name.log" 2>&1
}

selected=()
while read -r name rest; do
  if ((${#targets[@]} == 0)) || [[ " ${targets[*]} " == *" $name "* ]]; then
    selected+=("$name $rest")
  fi
done < "$list"
if ((${#selected[@]} == 0)); then
  echo "fuzz.sh: no such target: ${targets[*]} (targets: $(cut -d' ' -f1 "$list" | tr '\n' ' '))" >&2
  exit 2
fi

echo "fuzzing ${#selected[@]} target(s), ${limit[*]#-}, $jobs at a time; logs in $out/logs" >&2
pids=()
names=()
status=0
for line in "${selected[@]}"; do
  # shellcheck disable=SC2086
  run_target $line &
  pids+=($!)
  names+=("${line%% *}")
  while (($(jobs -rp | wc -l) >= jobs)); do wait -n || true; done
done
failed=()
for i in "${!pids[@]}"; do
  if ! wait "${pids[$i]}"; then failed+=("${names[$i]}"); fi
done

printf '%-16s %14s %10s %8s  %s\n' target executions exec/s corpus result
for name in "${names[@]}"; do
  log="$out/logs/$name.log"
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  secs=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log" | tail -1)
  corpus=$(find "$out/corpus/$name" -type f | wc -l)
  rate="-"
  if [ -n "$execs" ] && [ -n "$secs" ] && [ "$secs" -gt 0 ]; then rate=$((execs / secs)); fi
  result=ok
  if [[ " ${failed[*]} " == *" $name "* ]]; then
    finding=$(grep -m1 -E 'ERROR: |SUMMARY: |fuzz [a-z_]+: ' "$log" || true)
    if [ -z "$finding" ] && grep -q 'libFuzzer: run interrupted' "$log"; then
      # Stopped by a signal (SIGINT, SIGTERM): the executions so far count, nothing was found.
      result="interrupted, no finding"
    else
      result="FINDING: ${finding:-see log}"
    fi
    status=1
  fi
  printf '%-16s %14s %10s %8s  %s\n' "$name" "${execs:--}" "$rate" "$corpus" "$result"
done
exit $status
