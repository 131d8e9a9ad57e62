#!/usr/bin/env bash
# Issue 23's target for NCCL chunk pipelines (docs/engines.md, "Steady state"): every NCCL
# allreduce algorithm at NCCL's own channels and protocol on 16 GPUs (two DGX H100), on simgrid,
# at 64 MiB and at 8 GiB; each run's wall time and peak resident memory, with the links' report
# that `collsim sim --engine simgrid` prints by default. Figures: docs/benchmarks.md.
#
#   bash bench/steady_state.sh [path/to/collsim]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
collsim=${1:-$here/build/release/cli/collsim}
for algorithm in nccl_ring nccl_tree nvls_tree; do
  for size in 64MiB 8GiB; do
    echo "== $algorithm, 16 GPUs, $size, simgrid"
    /usr/bin/time -f "wall %e s, peak RSS %M KB" "$collsim" sim --threads 1 --format csv \
      --scenario dgx-h100 --engine simgrid --algorithm "$algorithm" --ranks 16 --sizes "$size" 2>&1 |
      grep -v '^#' || true
  done
done
