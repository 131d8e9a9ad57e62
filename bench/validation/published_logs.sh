#!/usr/bin/env bash
# Out-of-sample validation: predicts every published nccl-tests log kept in tests/data/published
# (runs that no preset number was fitted to; each file names its source) with the uncalibrated
# preset of its machine class and prints, per log, collsim's median and p90 |error| below and from
# 1 MiB beside NCCL's own closed-form estimate on the same rows (docs/validation.md, the sections
# "... against a published run", "DGX H100, one node, a full sweep" and "DGX A100, one node: two more
# published sweeps").
#
#   bench/validation/published_logs.sh [COLLSIM] [LOG_DIR]
#
# COLLSIM defaults to build/release/cli/collsim, LOG_DIR to tests/data/published. The AWS p5 run
# is a busbw table, not an nccl-tests log: bench/validation/aws_p5_published.sh checks it. Needs
# python3 (json module only).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
collsim=${1:-$root/build/release/cli/collsim}
logs=${2:-$root/tests/data/published}

# log file | preset | what the log does not say (its device list is elided in two of them).
runs=(
  "nvidia_dgxc_1x8_h100_allreduce_nccl-tests.txt|dgx-h100|"
  "azure_ndv5_2x8_h100_allreduce_nccl-tests.txt|dgx-h100|--ranks 16 --nodes 2"
  "coreweave_gb200_nvl72_allreduce_nccl-tests.txt|gb200-nvl72|--ranks 72 --nodes 1"
  "galvatron_1x8_a100_40gb_allreduce_nccl-tests.txt|dgx-a100|"
  "meta_gcm_1x8_a100_80gb_allreduce_nccl-tests.txt|dgx-a100|"
  "oci_2x8_a100_roce_10g_tutorial_nccl-tests.txt|oci-a100-roce|"
)

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
i=0
for run in "${runs[@]}"; do
  IFS='|' read -r log preset extra <<<"$run"
  i=$((i + 1))
  echo "collsim validate --scenario $preset $extra --log $log" >&2
  # shellcheck disable=SC2086 # $extra is a list of flags
  if ! "$collsim" validate --scenario "$preset" $extra --log "$logs/$log" --format json \
    >"$tmp/$i.json" 2>"$tmp/$i.err"; then
    echo "  failed: $(head -1 "$tmp/$i.err")" >&2
    rm -f "$tmp/$i.json"
  fi
done

python3 - "$tmp" <<'PY'
import json, os, sys
tmp = sys.argv[1]
def cell(s):
    if not s or s.get("points", 0) == 0:
        return f"{'-':>18}"
    return f"{s['median_abs_err_pct']:6.1f} % ({s['p90_abs_err_pct']:6.1f} %)"
print(f"{'log':<50} {'scenario':<13} {'rows':>4}  {'collsim < 1 MiB':>18}  {'collsim >= 1 MiB':>18}  {'NCCL < 1 MiB':>18}  {'NCCL >= 1 MiB':>18}")
for name in sorted(os.listdir(tmp), key=lambda n: int(n.split('.')[0]) if n[0].isdigit() else 0):
    if not name.endswith(".json"):
        continue
    d = json.load(open(os.path.join(tmp, name)))
    rows = d["rows"]
    if not rows:
        continue
    s = d["summary"]
    lib = s.get("library_estimate", {})
    print(f"{os.path.basename(rows[0]['file']):<50} {d['scenario']:<13} {len(rows):>4}  "
          f"{cell(s.get('below_1MiB'))}  {cell(s.get('from_1MiB'))}  "
          f"{cell(lib.get('below_1MiB'))}  {cell(lib.get('from_1MiB'))}")
PY
