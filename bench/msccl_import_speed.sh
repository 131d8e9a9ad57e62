#!/usr/bin/env bash
# Issue 22's speed goal: an imported 64-GPU MSCCL allreduce (tests/data/msccl/lyd_ring_gpu64_ch8.xml,
# a ring on 8 channels, 8,064 steps) at 1 GiB, read, cut into the runtime's 2 MiB tiles (8 loop
# iterations), given NCCL's Simple protocol and simulated on loggp on 8 x DGX H100 in under 1 s
# (whole command, one thread). Figures: docs/benchmarks.md ("MSCCL XML import").
#   bench/msccl_import_speed.sh [COLLSIM]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
collsim=${1:-$root/build/release/cli/collsim}
cd "$root"
for file in tests/data/msccl/lyd_ring_gpu64_ch8.xml; do
  /usr/bin/time -f "$(basename "$file") loggp: %e s wall, %M KB peak" "$collsim" sim \
    --scenario dgx-h100 --algorithm "file:$file" --ranks 64 --sizes 1GiB --engine loggp \
    --threads 1 --format csv
done
