#!/usr/bin/env bash
# Issue 20's goal: `collsim place` with annealing on 1024 ranks in under 30 s. The pattern is the
# halo exchange of a 16 x 8 x 8 grid (64 KiB per face) on 8 nodes of nscc-aspire2a (128 cores
# each). The search (route table of 1024 x 1024 slot pairs, greedy placement, 2000 x 1024
# annealing moves on the congestion objective) is timed with the loggp confirmation (two cheap
# runs of the exchange); one run with the default SimGrid confirmation (two flow-level runs of
# 6144 concurrent messages) shows what the confirmation adds. Figures: docs/benchmarks.md
# ("Placement").
#   bench/place_speed.sh [COLLSIM]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
collsim=${1:-$root/build/release/cli/collsim}
args=(place --scenario nscc-aspire2a --pattern halo3d:16x8x8:64KiB --method anneal)
for run in 1 2 3; do
  /usr/bin/time -f "search + loggp confirmation, run $run: %e s wall, %M KB peak" \
    "$collsim" "${args[@]}" --engine loggp >/dev/null
done
/usr/bin/time -f "search + simgrid confirmation (the default): %e s wall, %M KB peak" \
  "$collsim" "${args[@]}" | grep -E "^  (block|anneal)"
