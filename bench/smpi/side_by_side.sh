#!/usr/bin/env bash
# side_by_side.sh COLLSIM [NP] [BYTES]
# Times collsim's simgrid engine and smpirun on the same platform (fat_tree.yaml, exported) for
# every collsim allreduce algorithm that SMPI also has, at NP ranks (default 64) and BYTES per rank
# (default 1048576). Prints, per algorithm: simulated time of each, their difference, and the wall
# time and peak memory of each (GNU time; Debian package "time"). Reductions are free on the SMPI
# side (smpi/simulate-computation:no), so collsim's simulated times include the scenario's reduce
# bandwidth and the two are compared for speed, not agreement (tests/engines/smpi_agreement.sh
# checks agreement on a platform without reduction cost).
set -euo pipefail
collsim=$1
np=${2:-64}
bytes=${3:-1048576}
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export SMPI_BUILD_DIR="$work/build"
"$collsim" topology export "$here/fat_tree.yaml" --ranks "$np" --format simgrid -o "$work/p.xml"
printf '%-22s %-20s %12s %12s %10s %10s %10s %10s\n' algorithm smpi sim_collsim_us sim_smpi_us \
  wall_collsim wall_smpi rss_collsim rss_smpi
for pair in redbcast:reduce_bcast rdb:recursive_doubling lr:ring rab_rdb:rabenseifner \
  ompi_ring_segmented:segmented_ring rab2:rab2; do
  smpi=${pair%%:*}
  ours=${pair##*:}
  /usr/bin/time -f '%e %M' -o "$work/t_ours" "$collsim" sim --scenario "$here/fat_tree.yaml" \
    --algorithm "$ours" --ranks "$np" --sizes "$bytes" --engine simgrid --format csv --links 0 \
    >"$work/ours.csv"
  SMPI_TIME_FILE="$work/t_smpi_v" bash "$here/run_smpi.sh" "$work/p.xml" - "$np" "$smpi" "$bytes" \
    2>/dev/null | grep -v '^#' >"$work/smpi.txt"
  sim_ours=$(awk -F, 'NR == 2 { print $9 }' "$work/ours.csv")
  sim_smpi=$(awk '{ print $2 }' "$work/smpi.txt")
  read -r wall_ours rss_ours <"$work/t_ours"
  wall_smpi=$(awk -F': ' '/Elapsed \(wall clock\)/ { print $2 }' "$work/t_smpi_v")
  rss_smpi=$(awk -F': ' '/Maximum resident set size/ { print $2 }' "$work/t_smpi_v")
  printf '%-22s %-20s %12.2f %12.2f %9ss %10s %8.0fMB %8.0fMB\n' "$ours" "$smpi" "$sim_ours" \
    "$sim_smpi" "$wall_ours" "$wall_smpi" "$((rss_ours / 1024))" "$((rss_smpi / 1024))"
done
