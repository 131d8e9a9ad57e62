#!/usr/bin/env bash
# SimGrid SMPI loads the settings `collsim tune --format smpi-cfg` writes, and applies them
# (docs/tuning.md, "What is verified"):
#  1. a sweep of every collective SMPI has names for, at 8 ranks: smpirun accepts every generated
#     --cfg=smpi/<collective>:<name> line. SMPI checks each name at start-up, for collectives the
#     program never calls too, and aborts on one it does not know (checked here with a bogus one);
#  2. an allreduce sweep between recursive doubling and ring at 4 KiB: the generated setting makes
#     smpirun's allreduce take exactly the simulated time of the algorithm it names, forced, and
#     not the other one's (SMPI is deterministic; at 8 ranks and 4 KiB rdb and lr differ by 4x),
#     and the algorithm collsim picked is the faster one in SMPI too.
#   smpi_tune_cfg.sh COLLSIM SOURCE_DIR
set -euo pipefail
collsim=$1
src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export SMPI_BUILD_DIR="$work/build"
scenario="$src/tests/data/smpi_cluster.yaml"
run_smpi() { bash "$src/bench/smpi/run_smpi.sh" "$work/p8.xml" - 8 "$@"; }
fail() {
  echo "FAIL: $*" >&2
  exit 1
}

"$collsim" topology export "$scenario" --ranks 8 --format simgrid -o "$work/p8.xml"

# 1. Every name of a full sweep is accepted.
"$collsim" tune --scenario "$scenario" --ranks 8 --sizes 8B:1MiB:x16 --format smpi-cfg \
  --collective allreduce,bcast,reduce,allgather,reduce_scatter,alltoall,gather,scatter,barrier \
  -o "$work/all.cfg"
mapfile -t all_cfg < <(grep -v '^#' "$work/all.cfg")
[[ ${#all_cfg[@]} -eq 9 ]] || fail "expected 9 settings, got: ${all_cfg[*]}"
run_smpi - 4096 "${all_cfg[@]}" >"$work/all.out" 2>"$work/all.err" ||
  fail "smpirun refused the generated settings: $(cat "$work/all.err")"
echo "smpirun accepted: ${all_cfg[*]}"
if run_smpi - 4096 --cfg=smpi/bcast:collsim_no_such_algorithm >/dev/null 2>"$work/bogus.err"; then
  fail "smpirun accepted an unknown algorithm name: acceptance proves nothing"
fi
grep -q "has no algorithm 'collsim_no_such_algorithm'" "$work/bogus.err" ||
  fail "unexpected error for an unknown name: $(cat "$work/bogus.err")"

# 2. The allreduce setting is applied.
"$collsim" tune --scenario "$scenario" --ranks 8 --sizes 4KiB --format smpi-cfg \
  --algorithms recursive_doubling,ring -o "$work/ar.cfg"
mapfile -t ar_cfg < <(grep -v '^#' "$work/ar.cfg")
[[ ${#ar_cfg[@]} -eq 1 && ${ar_cfg[0]} =~ ^--cfg=smpi/allreduce:(rdb|lr)$ ]] ||
  fail "unexpected settings: ${ar_cfg[*]}"
chosen=${BASH_REMATCH[1]}
other=rdb
[[ $chosen == rdb ]] && other=lr
time_of() { grep -v '^#' | awk '$1 == 4096 { print $2 }'; }
t_file=$(run_smpi - 4096 "${ar_cfg[@]}" | time_of)
t_chosen=$(run_smpi "$chosen" 4096 | time_of)
t_other=$(run_smpi "$other" 4096 | time_of)
echo "allreduce 8 ranks 4 KiB: with the file $t_file us, $chosen forced $t_chosen us," \
  "$other forced $t_other us"
[[ -n $t_file && $t_file == "$t_chosen" ]] || fail "the file's setting did not run $chosen"
[[ $t_file != "$t_other" ]] || fail "$chosen and $other take the same time: no proof"
awk -v a="$t_chosen" -v b="$t_other" 'BEGIN { exit !(a < b) }' ||
  fail "SMPI finds $other faster than collsim's choice $chosen"
echo "OK"
