#!/usr/bin/env bash
# verify_flow_model.sh [BW_Bps [LAT_s]]
#
# Checks that run_smpi.sh's settings make SMPI a pure flow model (README.md, "Verification"):
# on make_cluster_platform.sh's crossbar (every route = up<i> + dn<j>, so route latency L = 2 LAT
# and bottleneck bandwidth B = BW), for m = 8 B, 64 KiB, 1 MiB, 64 MiB:
#   pingpong, one way and exchange (2 ranks)  L + m/B
#   allreduce rdb (2 and 4 ranks)             lg p (L + m/B)
#   allreduce lr (2 and 4 ranks)              2 (p-1) (L + m/(p B))   (ring reduce-scatter + allgather)
#     with fewer floats than ranks lr falls back to SMPI's default allreduce, a linear reduce to
#     rank 0 then a binomial bcast: (1 + lg p) L + (p - 1 + lg p) m/B, the p-1 messages into
#     rank 0 sharing its down link
#   allreduce rab_rdb, rab (2 and 4 ranks)    2 lg p L + 2 (p-1)/p m/B  (halving, then doubling)
#     (not checked with fewer floats than ranks: the blocks are then uneven, some empty)
# and prints measured vs expected. SMPI adds a 16-byte envelope to every message
# (smpi_request.cpp: payload_size = size + 16); the 'expected+16B' column includes it. The run
# fails if a measurement differs from that by more than 1e-6 (relative), or from the pure formula
# by more than 0.1 %. Defaults: BW 12.5e9 B/s (100 Gb/s), LAT 1e-6 s.
# Uses SMPI_BUILD_DIR like run_smpi.sh (default: a temporary directory).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
bw=${1:-12.5e9}
lat=${2:-1e-6}
sizes=8,65536,1048576,67108864

tmp_dir="$(mktemp -d "${TMPDIR:-/tmp}/collsim-smpi-verify.XXXXXX")"
trap 'rm -rf "$tmp_dir"' EXIT
export SMPI_BUILD_DIR=${SMPI_BUILD_DIR:-$tmp_dir/build}

results="$tmp_dir/results"
: > "$results"
for np in 2 4; do
  platform="$tmp_dir/crossbar$np.xml"
  "$here/make_cluster_platform.sh" "$np" "$bw" "$lat" > "$platform"
  if [[ $np -eq 2 ]]; then
    SMPI_PROGRAM=pingpong "$here/run_smpi.sh" "$platform" - 2 - "$sizes" --iters 3 |
      awk '!/^#/ { print "pingpong-oneway", 2, $1, $2; print "pingpong-exchange", 2, $1, $3 }' >> "$results"
  fi
  for algo in rdb lr rab_rdb rab; do
    "$here/run_smpi.sh" "$platform" - "$np" "$algo" "$sizes" --iters 3 |
      awk -v a="$algo" -v p="$np" '!/^#/ { print "allreduce-" a, p, $1, $2 }' >> "$results"
  done
done

awk -v bw="$bw" -v lat="$lat" '
  function abs(x) { return x < 0 ? -x : x }
  BEGIN {
    L = 2 * lat
    printf "# crossbar: B = %s B/s, route latency L = 2 x %s s; times in us\n", bw, lat
    printf "%-18s %2s %9s %14s %14s %14s %8s\n", "case", "p", "bytes", "expected", "expected+16B", "measured", "err(%)"
    bad = 0
  }
  {
    name = $1; p = $2; m = $3; t = $4
    lgp = int(log(p) / log(2) + 0.5)
    note = ""
    check = 2                                 # 2: both checks, 1: only against expected+16B, 0: none
    if (name ~ /^pingpong/) {                 # one message of m
      nlat = 1; bytes = m; nmsg = 1
    } else if (name == "allreduce-rdb") {     # lg p exchanges of m
      nlat = lgp; bytes = lgp * m; nmsg = lgp
    } else if (name == "allreduce-lr" && m / 4 < p) {
      nlat = 1 + lgp; bytes = (p - 1 + lgp) * m; nmsg = p - 1 + lgp; note = "  lr fell back to reduce+bcast (envelope-only check)"; check = 1
    } else if (name == "allreduce-lr") {      # 2(p-1) steps of m/p
      nlat = 2 * (p - 1); bytes = 2 * (p - 1) * m / p; nmsg = 2 * (p - 1)
    } else {                                  # 2 lg p steps of m/2, m/4, ..., m/4, m/2
      nlat = 2 * lgp; bytes = 2 * (p - 1) * m / p; nmsg = 2 * lgp
      if (m / 4 < p) { note = "  fewer floats than ranks: uneven, partly empty blocks (not checked)"; check = 0 }
    }
    exp_pure = (nlat * L + bytes / bw) * 1e6
    exp_env = (nlat * L + (bytes + 16 * nmsg) / bw) * 1e6
    err = (t - exp_pure) / exp_pure * 100
    printf "%-18s %2d %9d %14.6f %14.6f %14.6f %8.4f%s\n", name, p, m, exp_pure, exp_env, t, err, note
    if ((check == 2 && abs(err) > 0.1) || (check >= 1 && abs(t - exp_env) > 1e-6 * exp_env)) bad = 1
  }
  END {
    if (bad) { print "verify_flow_model.sh: FAILED: a measurement is off the flow model" > "/dev/stderr"; exit 1 }
    print "# all within 0.1 % of the pure flow model, and within 1e-6 of it plus the 16-byte envelope"
  }' "$results"
