#!/usr/bin/env bash
# run_smpi.sh PLATFORM.xml HOSTFILE NP ALGO SIZES [extra args...]
#
# Runs SimGrid SMPI's own MPI_Allreduce (allreduce_bench.c) on PLATFORM.xml with NP ranks and the
# SMPI allreduce algorithm ALGO (--cfg=smpi/allreduce:ALGO; '-' keeps SMPI's default selector),
# at SIZES (comma-separated bytes per rank), under settings that make SMPI a pure flow model: the
# CM02 max-min model with every correction factor at 1 and no software overhead (README.md).
# Prints the program's output on stdout ('#' header, then "bytes time_us" lines); SimGrid's
# warnings and errors go to stderr, its informational messages are suppressed.
#
#   HOSTFILE  a file with one host per line, or '-' to use p0..p(NP-1) (make_cluster_platform.sh)
#   extra     --cfg=...  and --log=... go to smpirun (after ours, so they override them);
#             anything else goes to the program (--iters N, --warmup N, --start aligned|barrier).
#
# Environment:
#   SMPI_BUILD_DIR  where the program is compiled (once: reused while newer than its sources);
#                   default: a temporary directory removed on exit.
#   SMPI_PROGRAM    allreduce_bench (default) or pingpong (then ALGO is ignored; use '-').
#   SMPI_LOG        log settings, space-separated, default root.thresh:warning (root.thresh:error
#                   for less; add smpi_colls.thresh:info to see algorithm fallbacks, one line
#                   per rank and call).
#   SMPICC, SMPIRUN the tools (default: smpicc, smpirun from PATH).
#   SMPI_TIME_FILE  if set, smpirun runs under `/usr/bin/time -v -o SMPI_TIME_FILE` (wall time, peak
#                   memory; Debian package "time").
#
# Exit status: 0 on success; 2 on bad arguments; otherwise non-zero when compiling or the
# simulation failed or the program printed fewer result lines than sizes.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

usage() {
  awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}" >&2
  exit 2
}

[[ $# -ge 5 ]] || usage
platform=$1 hostfile=$2 np=$3 algo=$4 sizes=$5
shift 5

[[ -r "$platform" ]] || { echo "run_smpi.sh: cannot read platform '$platform'" >&2; exit 2; }
[[ "$np" =~ ^[1-9][0-9]*$ ]] || { echo "run_smpi.sh: NP must be a positive integer, got '$np'" >&2; exit 2; }
[[ "$sizes" =~ ^[0-9]+(,[0-9]+)*$ ]] || { echo "run_smpi.sh: SIZES must be comma-separated byte counts, got '$sizes'" >&2; exit 2; }
[[ "$algo" =~ ^[-A-Za-z0-9_]+$ ]] || { echo "run_smpi.sh: bad ALGO '$algo'" >&2; exit 2; }

program=${SMPI_PROGRAM:-allreduce_bench}
case "$program" in
  allreduce_bench | pingpong) ;;
  *) echo "run_smpi.sh: SMPI_PROGRAM must be allreduce_bench or pingpong, got '$program'" >&2; exit 2 ;;
esac
smpicc=${SMPICC:-smpicc}
smpirun=${SMPIRUN:-smpirun}

# Split the extra arguments: SimGrid options vs. program options.
sim_extra=()
prog_extra=()
for arg in "$@"; do
  case "$arg" in
    --cfg=* | --log=*) sim_extra+=("$arg") ;;
    *) prog_extra+=("$arg") ;;
  esac
done

tmp_dir=""
cleanup() { if [[ -n "$tmp_dir" ]]; then rm -rf "$tmp_dir"; fi; }
trap cleanup EXIT
if [[ -n "${SMPI_BUILD_DIR:-}" ]]; then
  build_dir=$SMPI_BUILD_DIR
  mkdir -p "$build_dir"
else
  tmp_dir="$(mktemp -d "${TMPDIR:-/tmp}/collsim-smpi.XXXXXX")"
  build_dir=$tmp_dir
fi
build_dir="$(cd "$build_dir" && pwd)"

# Compile once. Several runs may share SMPI_BUILD_DIR: build into a temporary name, then rename.
exe="$build_dir/$program"
src="$here/$program.c"
if [[ ! -x "$exe" || "$src" -nt "$exe" || "$here/bench_common.h" -nt "$exe" ]]; then
  "$smpicc" -O2 -Wall -o "$exe.tmp.$$" "$src" >&2 || { echo "run_smpi.sh: compiling $src failed" >&2; rm -f "$exe.tmp.$$"; exit 1; }
  mv -f "$exe.tmp.$$" "$exe"
fi

# The hostfile: as given, or p0..p(NP-1).
if [[ "$hostfile" == "-" ]]; then
  hostfile="$build_dir/hostfile.$np"
  "$here/make_cluster_platform.sh" --hostfile "$np" > "$hostfile.tmp.$$"
  mv -f "$hostfile.tmp.$$" "$hostfile"
fi
[[ -r "$hostfile" ]] || { echo "run_smpi.sh: cannot read hostfile '$hostfile'" >&2; exit 2; }
platform="$(cd "$(dirname "$platform")" && pwd)/$(basename "$platform")"
hostfile="$(cd "$(dirname "$hostfile")" && pwd)/$(basename "$hostfile")"

# The zero-overhead flow-model settings. README.md explains each one and how it was verified.
flow_cfg=(
  # Network: plain CM02 max-min flow model, every correction off.
  --cfg=network/model:CM02           # instead of smpirun's default SMPI model (piecewise factors)
  --cfg=network/latency-factor:1     # CM02's default, stated explicitly
  --cfg=network/bandwidth-factor:1   # CM02's default, stated explicitly
  --cfg=network/weight-S:0           # no RTT-unfairness term in the sharing weights
  --cfg=network/crosstraffic:0       # no 5% reverse-path (ACK) load on the links of the way back
  --cfg=network/TCP-gamma:0          # no TCP window bound gamma/(2 L) on a flow's rate
  --cfg=network/loopback-lat:0       # messages to oneself: instantaneous (SMPI copies them anyway)
  --cfg=surf/precision:1e-9          # smpirun's default (simulated-time resolution, seconds)
  --cfg=maxmin/precision:1e-5        # SimGrid's default (sharing-solver resolution)
  # SMPI: no software overheads.
  --cfg=smpi/simulate-computation:no # the host CPU time between MPI calls is not injected
  --cfg=smpi/host-speed:1Gf          # only used to convert benchmarked CPU time (off above)
  --cfg=smpi/cpu-threshold:-1        # and discard any benchmarked computation anyway
  --cfg=smpi/os:0:0:0                # MPI_Send overhead: 0 s + 0 s/byte from size 0
  --cfg=smpi/ois:0:0:0               # MPI_Isend overhead
  --cfg=smpi/or:0:0:0                # MPI_Recv overhead
  --cfg=smpi/wtime:0                 # MPI_Wtime injects 10 ns by default
  --cfg=smpi/test:0                  # MPI_Test injects 100 us by default
  --cfg=smpi/iprobe:0                # MPI_Iprobe injects 100 us by default
  --cfg=smpi/init:0                  # MPI_Init injects nothing by default, stated explicitly
  --cfg=smpi/async-small-thresh:0    # no eager mailbox: a transfer starts when both sides posted
  --cfg=smpi/send-is-detached-thresh:0 # MPI_Send returns when its transfer is done, as a flow
  --cfg=smpi/shared-malloc:global    # SMPI_SHARED_MALLOC: one physical copy, payload copies skipped
  --cfg=smpi/shared-malloc-blocksize:67108864 # 64 MiB blocks: 1024 ranks x 2 GiB stay under vm.max_map_count
  --cfg=smpi/privatization:no        # no per-rank copies of globals (the programs have none)
)
# smpi/shared-malloc-blocksize: SimGrid maps the shared file once per block, so a buffer of S bytes
# costs S/blocksize memory mappings; the default 1 MiB makes 1024 ranks x 2 x 1 GiB exceed Linux's
# default vm.max_map_count (65530).
algo_cfg=()
if [[ "$program" == allreduce_bench && "$algo" != "-" ]]; then
  algo_cfg=(--cfg=smpi/allreduce:"$algo")
fi
log_cfg=()
for setting in ${SMPI_LOG:-root.thresh:warning}; do log_cfg+=(--log="$setting"); done

# smpirun creates its temporary files in the current directory: run it from the build directory.
# Its own arguments first, then the program and its arguments; smpirun takes every --cfg/--log
# out of the program's arguments, later ones overriding earlier ones.
out="$build_dir/out.$$"
set +e
timer=()
if [[ -n "${SMPI_TIME_FILE:-}" ]]; then
  time_file=$SMPI_TIME_FILE
  [[ "$time_file" == /* ]] || time_file="$PWD/$time_file"
  timer=(/usr/bin/time -v -o "$time_file")
fi
# In the background, so that a TERM or INT (e.g. from `timeout`) reaches smpirun, which passes it
# on to the simulation; otherwise the simulation would outlive this script. (An INT is passed on
# as a TERM: background jobs of a non-interactive shell ignore INT.)
(cd "$build_dir" && exec ${timer[@]+"${timer[@]}"} "$smpirun" -np "$np" -platform "$platform" -hostfile "$hostfile" \
  "$exe" --sizes "$sizes" ${prog_extra[@]+"${prog_extra[@]}"} \
  "${flow_cfg[@]}" ${algo_cfg[@]+"${algo_cfg[@]}"} "${log_cfg[@]}" ${sim_extra[@]+"${sim_extra[@]}"}) > "$out" &
run_pid=$!
trap 'pkill -TERM -P "$run_pid" 2>/dev/null; kill -TERM "$run_pid" 2>/dev/null; wait "$run_pid"; rm -f "$out"; cleanup; exit 143' TERM
trap 'pkill -TERM -P "$run_pid" 2>/dev/null; kill -TERM "$run_pid" 2>/dev/null; wait "$run_pid"; rm -f "$out"; cleanup; exit 130' INT
wait "$run_pid"
status=$?
trap - TERM INT
set -e
# smpirun echoes its command line on stdout when the simulation fails: keep stdout for results.
if [[ $status -ne 0 ]]; then
  cat "$out" >&2
  rm -f "$out"
  echo "run_smpi.sh: smpirun failed (exit status $status)" >&2
  exit "$status"
fi
cat "$out"
expected=$(tr ',' '\n' <<< "$sizes" | grep -c .)
got=$(grep -c -v '^#' "$out" || true)
rm -f "$out"
if [[ "$got" -ne "$expected" ]]; then
  echo "run_smpi.sh: expected $expected result lines, got $got" >&2
  exit 1
fi
