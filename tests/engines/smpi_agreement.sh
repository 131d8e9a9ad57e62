#!/usr/bin/env bash
# collsim's simgrid engine against SimGrid's own MPI (SMPI): ring, recursive doubling and
# Rabenseifner allreduce at 16 and 64 ranks on the same platform (collsim exports it with
# `topology export --format simgrid`), SMPI running the matching --cfg=smpi/allreduce:lr|rdb|rab_rdb
# under the flow-model settings of bench/smpi/run_smpi.sh (no software overheads, CM02, factors 1).
# Fails when any point differs by more than MAX_ERR_PCT (default 2; the issue asks for 10, measured
# agreement is about 0.1 %).
#   smpi_agreement.sh COLLSIM SOURCE_DIR
set -euo pipefail
collsim=$1
src=$2
max_err=${MAX_ERR_PCT:-2}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export SMPI_BUILD_DIR="$work/build"
scenario="$src/tests/data/smpi_cluster.yaml"
sizes=4096,1048576,16777216
fail=0
for np in 16 64; do
  "$collsim" topology export "$scenario" --ranks "$np" --format simgrid -o "$work/p$np.xml"
  for pair in lr:ring rdb:recursive_doubling rab_rdb:rabenseifner; do
    smpi=${pair%%:*}
    ours=${pair##*:}
    bash "$src/bench/smpi/run_smpi.sh" "$work/p$np.xml" - "$np" "$smpi" "$sizes" \
      2>"$work/smpi.err" | grep -v '^#' >"$work/smpi.txt" || {
      cat "$work/smpi.err" >&2
      exit 1
    }
    "$collsim" sim --scenario "$scenario" --algorithm "$ours" --ranks "$np" --sizes "$sizes" \
      --engine simgrid --format csv --links 0 |
      awk -F, 'NR > 1 { print $5, $9 }' >"$work/ours.txt"
    if ! awk -v np="$np" -v a="$ours" -v s="$smpi" -v max="$max_err" '
      NR == FNR { smpi[$1] = $2; next }
      {
        if (!($1 in smpi)) { printf "%s %d ranks %s B: no SMPI time\n", a, np, $1; bad = 1; next }
        err = 100 * ($2 - smpi[$1]) / smpi[$1]
        printf "%-20s %3d ranks %9d B: collsim %11.3f us, smpirun (%s) %11.3f us, %+7.3f %%\n",
               a, np, $1, $2, s, smpi[$1], err
        if (err > max || err < -max) bad = 1
        n++
      }
      END { if (n != 3) bad = 1; exit bad }' "$work/smpi.txt" "$work/ours.txt"; then
      fail=1
    fi
  done
done
if [[ $fail != 0 ]]; then
  echo "FAILED: some point differs from smpirun by more than $max_err %" >&2
  exit 1
fi
echo "all points within $max_err % of smpirun"
