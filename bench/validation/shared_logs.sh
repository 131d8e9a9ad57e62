#!/usr/bin/env bash
# Cross-machine validation: predicts every shared NCCL log with the uncalibrated preset of its
# machine class (what a new user would pick) and prints one table per log, one pooled over all
# logs and the median of the logs' medians (every machine class weighed alike, where the pooled
# row leans on the logs with most rows): collsim's median and p90 |error| below and from 1 MiB,
# beside NCCL's own closed-form
# estimate (which exists only for the rows NCCL's model covers: no alltoall, no 1-rank runs) and
# collsim on those same rows (docs/validation.md, "Uncalibrated presets on the shared logs").
#
#   bench/validation/shared_logs.sh [COLLSIM] [LOG_DIR]
#   MARKDOWN=1 bench/validation/shared_logs.sh     # the table of docs/validation.md
#
# COLLSIM defaults to build/release/cli/collsim, LOG_DIR to tests/data/logs (copies of the shared
# logs with their provenance README). Needs python3 for the pooling (json module only).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
collsim=${1:-$root/build/release/cli/collsim}
logs=${2:-$root/tests/data/logs}

# log file -> preset of its machine class (sources of each preset in its file header).
pairs=(
  "a100sxm4_80gb_1x8_allreduce_128M_nccl-tests-2.19.4.txt dgx-a100"
  "bitdeer_1x8_h100_sxm_allreduce_nccl-tests.txt dgx-h100"
  "deepops_4x8_dgxa100_hdr_ib_allreduce_nccl-tests.txt dgx-a100"
  "oci_2x8_a100_40gb_roce_allreduce_nccl-tests.txt ${OCI_PRESET:-oci-a100-roce}"
  "aws_2x_p4de_a100_efa_allreduce_nccl-tests.txt ${P4D_PRESET:-aws-p4d}"
  "lambda_2x8_b200_ib_allreduce_nccl-tests.txt ${B200_PRESET:-dgx-b200}"
  "gcp_a3mega_2x8_h100_tcpxo_allgather_nccl-tests.txt ${A3_PRESET:-gcp-a3-mega}"
  "autodl_1x2_rtx2080ti_pcie_nop2p_nccl-tests_multi.txt ${PCIE_PRESET:-pcie3-2gpu-nop2p}"
)

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
i=0
for pair in "${pairs[@]}"; do
  read -r log preset <<<"$pair"
  i=$((i + 1))
  echo "collsim validate --scenario $preset --log $log" >&2
  if ! "$collsim" validate --scenario "$preset" --log "$logs/$log" --format json \
    >"$tmp/$i.json" 2>"$tmp/$i.err"; then
    echo "  failed: $(head -1 "$tmp/$i.err")" >&2
    rm -f "$tmp/$i.json"
  fi
done

python3 - "$tmp" "${MARKDOWN:-0}" <<'PY'
import json, os, sys
tmp = sys.argv[1]
markdown = sys.argv[2] == "1"
def stats(v):
    if not v:
        return "      -           -     "
    v = sorted(v)
    med = v[(len(v) + 1) // 2 - 1]
    p90 = v[min(len(v) - 1, max(0, -(-9 * len(v) // 10) - 1))]
    return f"{med:6.1f} % ({p90:6.1f} %)"
pool = {"sb": [], "sf": [], "nb": [], "nf": [], "cb": [], "cf": []}
# Each log's median, so that the last row weighs every machine class alike (the pooled row
# leans on the logs with most rows).
per_log = {"sb": [], "sf": [], "nb": [], "nf": [], "cb": [], "cf": []}
def middle(v):
    if not v:
        return "-"
    v = sorted(v)
    return f"{v[(len(v) + 1) // 2 - 1]:.1f} %"
if markdown:
    print("| log | preset | rows | collsim < 1 MiB | collsim >= 1 MiB | NCCL's estimate < 1 MiB | NCCL's estimate >= 1 MiB | collsim on NCCL's rows < 1 MiB | collsim on NCCL's rows >= 1 MiB |")
    print("|---|---|---|---|---|---|---|---|---|")
else:
  print(f"{'log':<52} {'scenario':<14} {'rows':>4}  {'collsim < 1 MiB':>18}  {'collsim >= 1 MiB':>18}  {'NCCL < 1 MiB':>18}  {'NCCL >= 1 MiB':>18}  {'same rows < 1 MiB':>18}  {'same rows >= 1 MiB':>18}")
for name in sorted(os.listdir(tmp), key=lambda n: int(n.split('.')[0]) if n[0].isdigit() else 0):
    if not name.endswith(".json"):
        continue
    d = json.load(open(os.path.join(tmp, name)))
    rows = d["rows"]
    if not rows:
        continue
    log = os.path.basename(rows[0]["file"])
    s = {"sb": [], "sf": [], "nb": [], "nf": [], "cb": [], "cf": []}
    for r in rows:
        big = r["bytes"] >= 1 << 20
        s["sf" if big else "sb"].append(abs(r["error_pct"]))
        if "library_error_pct" in r:
            s["nf" if big else "nb"].append(abs(r["library_error_pct"]))
            s["cf" if big else "cb"].append(abs(r["error_pct"]))
    for k in s:
        pool[k] += s[k]
        if s[k]:
            per_log[k].append(sorted(s[k])[(len(s[k]) + 1) // 2 - 1])
    if markdown:
        cells = [stats(s[k]).strip() for k in ("sb", "sf", "nb", "nf", "cb", "cf")]
        cells = ["-" if c.startswith("-") else c for c in cells]
        print(f"| `{log}` | `{d['scenario']}` | {len(rows)} | " + " | ".join(cells) + " |")
        continue
    print(f"{log[:52]:<52} {d['scenario']:<14} {len(rows):>4}  {stats(s['sb']):>18}  {stats(s['sf']):>18}  {stats(s['nb']):>18}  {stats(s['nf']):>18}  {stats(s['cb']):>18}  {stats(s['cf']):>18}")
if markdown:
    cells = [stats(pool[k]).strip() for k in ("sb", "sf", "nb", "nf", "cb", "cf")]
    print("| pooled | | " + str(len(pool["sb"]) + len(pool["sf"])) + " | " + " | ".join(cells) + " |")
    cells = [middle(per_log[k]) for k in ("sb", "sf", "nb", "nf", "cb", "cf")]
    print("| median of the logs' medians | | | " + " | ".join(cells) + " |")
    sys.exit(0)
print(f"{'pooled':<52} {'':<14} {len(pool['sb']) + len(pool['sf']):>4}  {stats(pool['sb']):>18}  {stats(pool['sf']):>18}  {stats(pool['nb']):>18}  {stats(pool['nf']):>18}  {stats(pool['cb']):>18}  {stats(pool['cf']):>18}")
print(f"{'median of the logs medians':<52} {'':<14} {'':>4}  " + "  ".join(f"{middle(per_log[k]):>18}" for k in ("sb", "sf", "nb", "nf", "cb", "cf")))
PY
