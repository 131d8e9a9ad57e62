#!/usr/bin/env bash
# Issue 17's speed goal: nccl_ring at NCCL's own channel count (32 on 8 x DGX H100), 64 GPUs,
# 1 GiB, generated, lowered by the NCCL stack and simulated on loggp in under 1 s (whole command,
# one thread). Figures: docs/benchmarks.md ("NCCL stack").
#   bench/nccl_ring_speed.sh [COLLSIM]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
collsim=${1:-$root/build/release/cli/collsim}
for engine in loggp simgrid; do
  /usr/bin/time -f "$engine: %e s wall, %M KB peak" "$collsim" sim --scenario dgx-h100 \
    --algorithm nccl_ring --ranks 64 --sizes 1GiB --engine "$engine" --threads 1 --format csv
done
