#!/usr/bin/env bash
# run_study.sh [NPS [ALGOS [SIZES [BW_Bps [LAT_s]]]]] [-- extra run_smpi.sh args]
#
# The measurements of README.md ("Measured"): for every NP and ALGO, one run_smpi.sh run on
# make_cluster_platform.sh's crossbar, timed with /usr/bin/time -v (smpirun only). Runs one
# smpirun at a time. Prints one line per (NP, ALGO, size):
#   np algo bytes time_us wall_s peak_rss_MiB
# wall_s and peak_rss_MiB are those of the whole smpirun (all sizes of that NP and ALGO).
# ALGO may carry extra SimGrid settings after a '+', e.g. rab1+smpi/allgather:rdb.
# Defaults: NPS "16 64", ALGOS "lr rdb rab_rdb", SIZES 4096,65536,1048576,16777216,
# BW 12.5e9 B/s (100 Gb/s), LAT 1e-6 s. Uses SMPI_BUILD_DIR like run_smpi.sh.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
nps=${1:-16 64}
algos=${2:-lr rdb rab_rdb}
sizes=${3:-4096,65536,1048576,16777216}
bw=${4:-12.5e9}
lat=${5:-1e-6}
shift $(($# < 5 ? $# : 5))
if [[ "${1:-}" == "--" ]]; then shift; fi

[[ -x /usr/bin/time ]] || { echo "run_study.sh: /usr/bin/time missing (apt-get install time)" >&2; exit 1; }

tmp_dir="$(mktemp -d "${TMPDIR:-/tmp}/collsim-smpi-study.XXXXXX")"
trap 'rm -rf "$tmp_dir"' EXIT
export SMPI_BUILD_DIR=${SMPI_BUILD_DIR:-$tmp_dir/build}

echo "# run_study.sh: crossbar, links $bw B/s, $lat s; $(nproc) cores; columns: np algo bytes time_us wall_s peak_rss_MiB"
for np in $nps; do
  platform="$tmp_dir/crossbar$np.xml"
  "$here/make_cluster_platform.sh" "$np" "$bw" "$lat" > "$platform"
  for spec in $algos; do
    algo=${spec%%+*}
    extra=()
    if [[ "$spec" == *+* ]]; then
      IFS='+' read -r -a settings <<< "${spec#*+}"
      for s in "${settings[@]}"; do extra+=("--cfg=$s"); done
    fi
    SMPI_TIME_FILE="$tmp_dir/time" "$here/run_smpi.sh" "$platform" - "$np" "$algo" "$sizes" \
      ${extra[@]+"${extra[@]}"} "$@" > "$tmp_dir/out"
    wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {
      n = split($2, a, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + a[i]; print s }' "$tmp_dir/time")
    rss=$(awk -F': ' '/Maximum resident set size/ { printf "%.1f", $2 / 1024 }' "$tmp_dir/time")
    awk -v np="$np" -v algo="$spec" -v wall="$wall" -v rss="$rss" \
      '!/^#/ { printf "%d %s %s %s %s %s\n", np, algo, $1, $2, wall, rss }' "$tmp_dir/out"
  done
done
