#!/usr/bin/env bash
# Where the two engines part on NCCL's schedules (docs/engines.md, "loggp and simgrid on NCCL
# schedules"): every NCCL algorithm that runs on a preset, at 4, 8 and 16 GPUs, 256 KiB to 64 MiB
# (x4), allreduce, allgather, reduce_scatter and bcast (COLLECTIVES to choose), on loggp and on
# simgrid; prints one row per point where simgrid is more than 10 % slower or more than 2 % faster
# than loggp (the heavy property sweep's bound), then the count. About 15 minutes on 2 cores for
# all four collectives (docs/engines.md has the last count).
#
#   bash bench/engine_agreement.sh [path/to/collsim] [preset ...]
#   COLLECTIVES=bcast bash bench/engine_agreement.sh
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
collsim=${1:-$here/build/release/cli/collsim}
shift || true
presets=("$@")
if ((${#presets[@]} == 0)); then
  presets=(aws-p4d aws-p5 dgx-a100 dgx-b200 dgx-h100 dgx1-v100 gb200-nvl72 gcp-a3-mega hgx-h200
    juwels-booster oci-a100-roce pcie-gpu-node pcie3-2gpu-nop2p)
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for preset in "${presets[@]}"; do
  for collective in ${COLLECTIVES:-allreduce allgather reduce_scatter bcast}; do
    for algorithm in nccl_ring nccl_tree nvls nvls_tree pat collnet_direct collnet_chain; do
      for ranks in 4 8 16; do
        for engine in loggp simgrid; do
          # A point the preset cannot run (too few GPUs, an algorithm NCCL refuses) prints nothing.
          "$collsim" sim --scenario "$preset" --collective "$collective" --algorithm "$algorithm" \
            --ranks "$ranks" --sizes 256KiB:64MiB:x4 --engine "$engine" --format json \
            2>/dev/null >"$tmp/$engine.json" || continue
          python3 - "$tmp/$engine.json" "$preset" >>"$tmp/$engine.rows" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
for r in doc.get("results", []):
    print(f'{sys.argv[2]} {r["collective"]} {r["algorithm"]} {r["ranks"]} {r["bytes"]} {r["time_us"]}')
PY
        done
      done
    done
  done
done
python3 - "$tmp/loggp.rows" "$tmp/simgrid.rows" <<'PY'
import sys
def rows(path):
    out = {}
    for line in open(path):
        *key, t = line.split()
        out[tuple(key)] = float(t)
    return out
loggp, simgrid = rows(sys.argv[1]), rows(sys.argv[2])
both = sorted(set(loggp) & set(simgrid), key=lambda k: (k[0], k[1], k[2], int(k[3]), int(k[4])))
apart = 0
print(f'{"preset":<16} {"collective":<15} {"algorithm":<15} {"ranks":>5} {"bytes":>10} {"loggp (us)":>11} {"simgrid (us)":>12} {"simgrid/loggp":>13}')
for k in both:
    ratio = simgrid[k] / loggp[k]
    if ratio > 1.10 or ratio < 0.98:
        apart += 1
        print(f'{k[0]:<16} {k[1]:<15} {k[2]:<15} {k[3]:>5} {k[4]:>10} {loggp[k]:>11.2f} {simgrid[k]:>12.2f} {ratio:>13.3f}')
print(f'# {apart} of {len(both)} points: simgrid over 10 % slower or over 2 % faster than loggp')
PY
