#!/usr/bin/env bash
# Issue 23's scale targets for collapsed schedules (docs/engines.md, "Collapsed schedules"):
# ring and nccl_ring allreduce of 1 GiB at 131072 ranks on `textbook` (a full mesh) and on a
# three-level fat tree of DGX H100 nodes (bench/scale/dgx-h100-16k.yaml), recursive doubling at
# 2^24 ranks; each run's wall time and peak resident memory. Figures: docs/benchmarks.md.
#
#   bash bench/collapse_scale.sh [path/to/collsim]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
collsim=${1:-$here/build/release/cli/collsim}
run() {
  local label=$1
  shift
  echo "== $label"
  /usr/bin/time -f "wall %e s, peak RSS %M KB" "$collsim" sim --threads 1 --format csv "$@" 2>&1 |
    grep -v '^#' || true
}
run "ring, 131072 ranks, 1 GiB, textbook" --scenario textbook --algorithm ring --ranks 131072 --sizes 1GiB
run "nccl_ring, 131072 ranks, 1 GiB, textbook" --scenario textbook --algorithm nccl_ring --ranks 131072 --sizes 1GiB
run "recursive_doubling, 2^24 ranks, 1 MiB, textbook" --scenario textbook --algorithm recursive_doubling --ranks 16777216 --sizes 1MiB
run "ring, 131072 ranks, 1 GiB, fat tree" --scenario "$here/bench/scale/dgx-h100-16k.yaml" --algorithm ring --ranks 131072 --sizes 1GiB
run "nccl_ring, 131072 ranks, 1 GiB, fat tree" --scenario "$here/bench/scale/dgx-h100-16k.yaml" --algorithm nccl_ring --ranks 131072 --sizes 1GiB
run "recursive_doubling, 131072 ranks, 1 MiB, fat tree" --scenario "$here/bench/scale/dgx-h100-16k.yaml" --algorithm recursive_doubling --ranks 131072 --sizes 1MiB
