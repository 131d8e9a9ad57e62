#!/usr/bin/env bash
# Issue 19's goal: `collsim compare` of 3 scenarios on a 100-call workload in under 5 s. The
# workload has 100 phases of one call each (allreduce, allgather and reduce_scatter from 4 KiB to
# 256 MiB, on the world, node and across-nodes groups), so every call is predicted on its own;
# the machines are 4 x DGX A100, 4 x DGX H100 and 2 x DGX B200. Figures: docs/benchmarks.md
# ("Workloads").
#   bench/compare_speed.sh [COLLSIM]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
collsim=${1:-$root/build/release/cli/collsim}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
{
  echo "name: hundred-calls"
  echo "compute: 100 ms"
  echo "phases:"
  collectives=(allreduce allgather reduce_scatter)
  groups=(world node across_nodes)
  for i in $(seq 0 99); do
    c=${collectives[$((i % 3))]}
    g=${groups[$(((i / 3) % 3))]}
    kib=$((4 << (i % 17)))
    echo "  - {name: call$i, collective: $c, bytes: $kib KiB, group: $g, overlap: 0.5}"
  done
} >"$tmp/w.yaml"
for run in 1 2 3; do
  /usr/bin/time -f "run $run: %e s wall, %M KB peak" "$collsim" compare --workload "$tmp/w.yaml" \
    --scenarios dgx-a100:4,dgx-h100:4,dgx-b200:2 >/dev/null
done
