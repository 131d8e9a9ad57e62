#!/usr/bin/env bash
# aws-p5 against a published nccl-tests run that no preset number was fitted to except the EFA
# efficiency's lower bound (docs/validation.md, "AWS p5 against a published run"): all_reduce_perf
# on 2 - 16 p5.48xlarge, 8 ranks an instance, 32 MiB - 8 GiB, out-of-place busbw (GB/s), from
# https://github.com/crazyguitar/aws-gpu-communication-benchmark/blob/4fdb5a4fab8b2e173e2c7e87d9faddd9f54ddfea/data/nccl_all_reduce.csv
# (its k8s/nccl_all_reduce_perf.yaml: NCCL_BUFFSIZE 8388608, NCCL_P2P_NET_CHUNKSIZE 524288,
# aws-ofi-nccl's tuner). Prints each point's time error (measured busbw / predicted - 1), then the
# median and p90 of |error|.
#
#   bench/validation/aws_p5_published.sh [COLLSIM] [SCENARIO]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
collsim=${1:-$root/build/release/cli/collsim}
scenario=${2:-aws-p5}
# ranks: busbw at 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192 MiB
measured='16 147.32 207.00 305.13 364.46 395.99 435.14 445.05 465.81 477.71
32 95.38 152.41 229.48 273.34 278.41 280.30 347.57 354.45 356.99
64 86.74 103.85 156.33 232.09 272.62 274.47 278.15 351.32 355.36
128 74.85 92.39 129.20 148.11 223.80 269.23 270.91 306.15 356.27'
"$collsim" sim --scenario "$scenario" --algorithm auto --ranks 16,32,64,128 \
  --sizes 32MiB:8GiB:x2 --format csv 2>/dev/null | grep -v '^#' |
  MEASURED="$measured" python3 -c '
import csv, os, statistics, sys
sizes = [32 << 20 << i for i in range(9)]
measured = {}
for line in os.environ["MEASURED"].splitlines():
    f = line.split()
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
