#!/usr/bin/env bash
# Writes the accuracy: section (docs/health-check.md) of each preset that has a shared log of its
# machine class: `collsim validate --format accuracy` of the uncalibrated preset on those logs,
# placed before the preset's studies: key (replacing an older section). Run it after a model
# change; tests/cli/check_command_test.cpp recomputes every section and fails when one is stale.
#
#   bench/validation/preset_accuracy.sh [COLLSIM]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
collsim=${1:-$root/build/release/cli/collsim}
logs=tests/data/logs
cd "$root"

# preset -> the shared logs of its class (the same pairs as shared_logs.sh, plus ucc#981).
pairs=(
  "dgx-a100 a100sxm4_80gb_1x8_allreduce_128M_nccl-tests-2.19.4.txt deepops_4x8_dgxa100_hdr_ib_allreduce_nccl-tests.txt"
  "dgx-h100 bitdeer_1x8_h100_sxm_allreduce_nccl-tests.txt"
  "oci-a100-roce oci_2x8_a100_40gb_roce_allreduce_nccl-tests.txt"
  "aws-p4d aws_2x_p4de_a100_efa_allreduce_nccl-tests.txt"
  "dgx-b200 lambda_2x8_b200_ib_allreduce_nccl-tests.txt"
  "gcp-a3-mega gcp_a3mega_2x8_h100_tcpxo_allgather_nccl-tests.txt"
  "pcie3-2gpu-nop2p autodl_1x2_rtx2080ti_pcie_nop2p_nccl-tests_multi.txt"
  "cpu-hdr100-epyc ucc981_4x128_cpu_hdr100_osu_allreduce_hcoll.txt"
)
for line in "${pairs[@]}"; do
  read -r preset rest <<<"$line"
  args=()
  for log in $rest; do
    args+=(--log "$logs/$log")
  done
  echo "collsim validate --scenario $preset ${args[*]} --format accuracy" >&2
  section=$("$collsim" validate --scenario "$preset" "${args[@]}" --format accuracy 2>/dev/null)
  python3 - "scenarios/$preset.yaml" "$section" <<'PY'
import sys
path, section = sys.argv[1], sys.argv[2].rstrip("\n") + "\n"
lines = open(path).read().splitlines(keepends=True)
out, skip = [], False
for l in lines:
    if l.startswith("accuracy:"):
        skip = True
        continue
    if skip and (l.startswith("  ") or l.strip() == ""):
        continue
    skip = False
    if l.startswith("studies:"):
        out.append(section)
    out.append(l)
open(path, "w").write("".join(out))
PY
done
