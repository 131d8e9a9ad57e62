#!/usr/bin/env bash
# OSU point-to-point logs (osu_latency, osu_bw) predicted uncalibrated with the preset of their
# machine class, under each stack given (docs/validation.md, "OSU point-to-point logs"): the
# median and p90 |error| per log, benchmark and stack, below and from 1 MiB.
#
#   bench/validation/pt2pt_logs.sh [COLLSIM] [LOG_DIR]
#   STACKS="direct openmpi-4.1" bench/validation/pt2pt_logs.sh
#
# EESSI's osu_bw runs two A100s joined by 4 NVLinks in one node (juwels-booster's board pairs).
# The aws_hpc7g log's osu_latency and osu_bw sections ran on two instances, one rank each (its
# README: flux run -N 2 --ntasks 2): validated with --ranks 2 --nodes 2 on aws-hpc7g. COLLSIM
# defaults to build/release/cli/collsim, LOG_DIR to tests/data/logs. Needs python3 (json only).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
collsim=${1:-$root/build/release/cli/collsim}
logs=${2:-$root/tests/data/logs}
stacks=${STACKS:-direct openmpi-4.1}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
awk -v dir="$tmp" '
  /^===== FILE: .*osu_latency-1\.out/ { out = dir "/hpc7g-latency.txt"; next }
  /^===== FILE: .*osu_bw-1\.out/ { out = dir "/hpc7g-bw.txt"; next }
  /^===== FILE:/ { out = ""; next }
  out != "" { print > out }' "$logs/aws_hpc7g_cpu_efa_osu_allreduce_4-32nodes.txt"

i=0
for stack in $stacks; do
  flag=(--stack "$stack")
  [ "$stack" = direct ] && flag=()
  i=$((i + 1))
  "$collsim" validate --scenario juwels-booster "${flag[@]}" --format json \
    --log "$logs/eessi_a100_nvlink_osu_bw_cuda_DD.txt" >"$tmp/$i.json"
  echo "eessi (A100 NV4, device buffers) $stack" >"$tmp/$i.label"
  i=$((i + 1))
  "$collsim" validate --scenario aws-hpc7g "${flag[@]}" --ranks 2 --nodes 2 --format json \
    --log "$tmp/hpc7g-latency.txt" --log "$tmp/hpc7g-bw.txt" >"$tmp/$i.json" 2>/dev/null
  echo "aws_hpc7g (EFA, 2 instances) $stack" >"$tmp/$i.label"
done

python3 - "$tmp" "$i" <<'PY'
import json, sys
tmp, n = sys.argv[1], int(sys.argv[2])
def stats(errs):
    if not errs:
        return "-"
    a = sorted(abs(e) for e in errs)
    med = a[(len(a) - 1) // 2]  # the lower middle, as collsim's summaries
    p90 = a[min(len(a) - 1, int(0.9 * (len(a) - 1) + 0.5))]
    return f"{med:.1f} % ({p90:.1f} %)"
print("| log | stack | benchmark | rows | < 1 MiB | >= 1 MiB |")
print("|---|---|---|---|---|---|")
for k in range(1, n + 1):
    label = open(f"{tmp}/{k}.label").read().split()
    stack = label[-1]
    name = " ".join(label[:-1])
    rows = json.load(open(f"{tmp}/{k}.json"))["rows"]
    for bench in ("osu_latency", "osu_bw"):
        r = [x for x in rows if x["collective"] == bench]
        if not r:
            continue
        small = [x["error_pct"] for x in r if x["bytes"] < 1 << 20]
        large = [x["error_pct"] for x in r if x["bytes"] >= 1 << 20]
        print(f"| {name} | `{stack}` | {bench} | {len(r)} | {stats(small)} | {stats(large)} |")
PY
