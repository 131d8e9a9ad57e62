#!/usr/bin/env bash
# Uncalibrated CPU-log validation under named MPI stacks (docs/validation.md, "CPU logs under
# the MPI stacks", issue 18's CPU target): each shared CPU log with the preset of its machine
# class, under each stack given, with the median and p90 |error| per log and stack.
#
#   bench/validation/cpu_logs.sh [COLLSIM] [LOG_DIR]
#   STACKS="openmpi-4.1 mpich-4" bench/validation/cpu_logs.sh
#
# The aws_hpc7g log holds four osu_allreduce runs (4, 8, 16, 32 nodes of 16 ranks) without a
# launch line collsim reads: each section is validated on its own with --ranks and --nodes from
# its file name (all_reduce-NODES-RANKS-1.out). The ucc#981 log states its ranks and runs under
# the stack its launch command shows unless STACKS names others. The Azure IMB log (Intel MPI
# 2018, which has no stack) states its ranks and runs under each stack of STACKS. COLLSIM defaults to
# build/release/cli/collsim, LOG_DIR to tests/data/logs. Needs python3 (json module only).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
collsim=${1:-$root/build/release/cli/collsim}
logs=${2:-$root/tests/data/logs}
stacks=${STACKS:-openmpi-4.1 mpich-4 openmpi-5.0}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# One file per aws_hpc7g section: the header lines, then the section.
hpc7g="$logs/aws_hpc7g_cpu_efa_osu_allreduce_4-32nodes.txt"
awk -v dir="$tmp" '
  /^===== FILE: .*all_reduce-[0-9]+-[0-9]+-1\.out/ {
    match($0, /all_reduce-[0-9]+-[0-9]+/); split(substr($0, RSTART, RLENGTH), f, "-");
    out = dir "/hpc7g-" f[2] "-" f[3] ".txt"; next }
  /^===== FILE:/ { out = ""; next }
  out != "" { print > out }' "$hpc7g"

i=0
for stack in $stacks; do
  for section in "$tmp"/hpc7g-*.txt; do
    base=$(basename "$section" .txt)
    nodes=$(echo "$base" | cut -d- -f2)
    ranks=$(echo "$base" | cut -d- -f3)
    i=$((i + 1))
    echo "collsim validate --scenario aws-hpc7g --stack $stack --ranks $ranks --nodes $nodes --log $base" >&2
    "$collsim" validate --scenario aws-hpc7g --stack "$stack" --ranks "$ranks" --nodes "$nodes" \
      --log "$section" --format json >"$tmp/$i.json" 2>"$tmp/$i.err" || rm -f "$tmp/$i.json"
    echo "aws_hpc7g $stack" >"$tmp/$i.label"
  done
  i=$((i + 1))
  echo "collsim validate --scenario cpu-hdr100-epyc --stack $stack --log ucc981" >&2
  "$collsim" validate --scenario cpu-hdr100-epyc --stack "$stack" \
    --log "$logs/ucc981_4x128_cpu_hdr100_osu_allreduce_hcoll.txt" --format json \
    >"$tmp/$i.json" 2>"$tmp/$i.err" || rm -f "$tmp/$i.json"
  echo "ucc981 $stack" >"$tmp/$i.label"
  i=$((i + 1))
  echo "collsim validate --scenario azure-hc44rs --stack $stack --log azure" >&2
  "$collsim" validate --scenario azure-hc44rs --stack "$stack" \
    --log "$logs/azure_32x44_cpu_ib_imb_allreduce_1408ranks.txt" --format json \
    >"$tmp/$i.json" 2>"$tmp/$i.err" || rm -f "$tmp/$i.json"
  echo "azure_imb $stack" >"$tmp/$i.label"
done
i=$((i + 1))
echo "collsim validate --scenario cpu-hdr100-epyc --log ucc981 (stack from the log)" >&2
"$collsim" validate --scenario cpu-hdr100-epyc \
  --log "$logs/ucc981_4x128_cpu_hdr100_osu_allreduce_hcoll.txt" --format json \
  >"$tmp/$i.json" 2>"$tmp/$i.err" || rm -f "$tmp/$i.json"
echo "ucc981 hpcx(log)" >"$tmp/$i.label"

python3 - "$tmp" <<'PY'
import json, os, sys
tmp = sys.argv[1]
groups = {}
for name in os.listdir(tmp):
    if not name.endswith(".json"):
        continue
    label = open(os.path.join(tmp, name[:-5] + ".label")).read().strip()
    rows = json.load(open(os.path.join(tmp, name)))["rows"]
    groups.setdefault(label, []).extend(abs(r["error_pct"]) for r in rows)
def stats(v):
    v = sorted(v)
    med = v[(len(v) + 1) // 2 - 1]
    p90 = v[min(len(v) - 1, max(0, -(-9 * len(v) // 10) - 1))]
    return f"{med:.1f} %", f"{p90:.1f} %"
print("| log | stack | rows | median abs error | p90 abs error |")
print("|---|---|---|---|---|")
for label in sorted(groups):
    log, stack = label.split(" ")
    med, p90 = stats(groups[label])
    print(f"| `{log}` | `{stack}` | {len(groups[label])} | {med} | {p90} |")
PY
