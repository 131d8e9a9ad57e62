#!/usr/bin/env bash
# aws-p5 against a published nccl-tests run that no preset number was fitted to except the EFA
# efficiency's lower bound (docs/validation.md, "AWS p5 against a published run"): all_reduce_perf
# on 2 - 16 p5.48xlarge, 8 ranks an instance, 32 MiB - 8 GiB, out-of-place busbw (GB/s), in
# tests/data/published/aws_p5_all_reduce_busbw.txt with its source. Prints each point's time error
# (measured busbw / predicted - 1), then the median and p90 of |error|
# (tests/cli/published_runs_test.cpp checks docs/validation.md's row against the same numbers).
#
#   bench/validation/aws_p5_published.sh [COLLSIM] [SCENARIO]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
collsim=${1:-$root/build/release/cli/collsim}
scenario=${2:-aws-p5}
measured=$root/tests/data/published/aws_p5_all_reduce_busbw.txt
"$collsim" sim --scenario "$scenario" --algorithm auto --ranks 16,32,64,128 \
  --sizes 32MiB:8GiB:x2 --format csv 2>/dev/null | grep -v '^#' |
  MEASURED="$measured" python3 -c '
import csv, os, statistics, sys
sizes = [32 << 20 << i for i in range(9)]
measured = {}
for line in open(os.environ["MEASURED"]):
    f = line.split()
    if not f or f[0].startswith("#"):
        continue
    for size, bw in zip(sizes, f[1:]):
        measured[(int(f[0]), size)] = float(bw)
errors = []
print("%6s %10s %10s %10s %9s  %s" % ("ranks", "size (B)", "measured", "predicted", "error", "NCCL choice"))
for row in csv.DictReader(sys.stdin):
    key = (int(row["ranks"]), int(row["bytes"]))
    if key not in measured:
        continue
    predicted = float(row["busbw_GBps"])
    error = 100.0 * (measured[key] / predicted - 1.0)
    errors.append(abs(error))
    print("%6d %10d %10.1f %10.1f %+8.1f %%  %s" % (key[0], key[1], measured[key], predicted, error, row["params"]))
if not errors:
    sys.exit("no point of the published run was predicted")
errors.sort()
print("# %d points: median |error| %.1f %%, p90 %.1f %%" % (len(errors), statistics.median(errors), errors[int(0.9 * len(errors))]))
'
