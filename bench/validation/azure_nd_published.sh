#!/usr/bin/env bash
# Single-node NVLS against Azure's published busbw tables (docs/validation.md, "Azure ND H100 v5
# and H200 v5"): tests/data/published/azure_nd_{h100v5,h200v5}_allreduce_nvls_busbw.txt, one VM of
# 8 GPUs, NCCL_ALGO=NVLS, in-place busbw, each file with its source. collsim runs the preset of
# the class at the table's NCCL release with NCCL_ALGO=NVLS from 1 MiB (below it the tables'
# single-process launches, `-g 8`, bound the time: docs/validation.md, "single-thread runs").
# Prints each point's time error (measured busbw / predicted - 1), then per table and pooled the
# median and p90 of |error| (tests/cli/published_runs_test.cpp checks the docs' rows).
#
#   bench/validation/azure_nd_published.sh [COLLSIM]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
collsim=${1:-$root/build/release/cli/collsim}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# table | preset | NCCL release
tables=(
  "azure_nd_h100v5_allreduce_nvls_busbw.txt|dgx-h100|2.18.5"
  "azure_nd_h200v5_allreduce_nvls_busbw.txt|hgx-h200|2.20.5"
)
for t in "${tables[@]}"; do
  IFS='|' read -r table preset release <<<"$t"
  printf 'name: %s-nvls\nbase: %s\nnccl:\n  version: %s\n  env: {NCCL_ALGO: NVLS}\n' \
    "$preset" "$preset" "$release" >"$tmp/$preset.yaml"
  "$collsim" sim --scenario "$tmp/$preset.yaml" --algorithm auto --ranks 8 --sizes 1MiB:8GiB:x2 \
    --format csv 2>/dev/null | grep -v '^#' >"$tmp/$preset.csv"
  echo "$root/tests/data/published/$table|$tmp/$preset.csv|$table" >>"$tmp/list"
done
python3 - "$tmp/list" <<'PY'
import csv, statistics, sys
def stats(v):
    v = sorted(v)
    return statistics.median(v), v[min(len(v) - 1, int(0.9 * len(v)))]
pooled = []
for line in open(sys.argv[1]):
    table, predicted_csv, name = line.strip().split("|")
    measured = {}
    for l in open(table):
        f = l.split()
        if f and not f[0].startswith("#"):
            measured[int(f[1])] = float(f[2])
    errors = []
    print("# %s" % name)
    print("%12s %10s %10s %9s  %s" % ("size (B)", "measured", "predicted", "error", "NCCL choice"))
    for row in csv.DictReader(open(predicted_csv)):
        size = int(row["bytes"])
        if size not in measured:
            continue
        error = 100.0 * (measured[size] / float(row["busbw_GBps"]) - 1.0)
        errors.append(abs(error))
        print("%12d %10.2f %10.2f %+8.1f %%  %s" % (size, measured[size], float(row["busbw_GBps"]), error, row["params"]))
    if not errors:
        sys.exit("no point of %s was predicted" % name)
    med, p90 = stats(errors)
    print("# %s: %d points from 1 MiB, median |error| %.1f %%, p90 %.1f %%" % (name, len(errors), med, p90))
    pooled += errors
med, p90 = stats(pooled)
print("# pooled: %d points, median |error| %.1f %%, p90 %.1f %%" % (len(pooled), med, p90))
PY
