#!/usr/bin/env bash
# Issue 22: collsim and LogGOPSim on the same GOAL schedule, side by side: wall time of each
# simulator and the time each predicts, with the same LogGP parameters. Figures:
# docs/benchmarks.md ("collsim beside LogGOPSim"). Not part of CI.
#
# LogGOPSim is not a Debian package. Build its simulator and GOAL compiler from
# github.com/spcl/LogGOPSim (src/LogGOPSim) once:
#   apt-get install re2c gengetopt libgraphviz-dev
#   cd LogGOPSim/src/LogGOPSim
#   re2c -o txt2bin.cpp txt2bin.re && gengetopt -F txt2bin_cmdline -i txt2bin_cmdline.ggo
#   gengetopt -F loggopsim_cmdline -i loggopsim_cmdline.ggo
#   g++ -O2 txt2bin.cpp txt2bin_cmdline.c -o txt2bin
#   g++ -O2 -std=c++11 LogGOPSim.cpp loggopsim_cmdline.c -o LogGOPSim -lcgraph
#
#   bench/loggopsim_compare.sh LOGGOPSIM_DIR [COLLSIM]
#
# LOGGOPSIM_DIR holds LogGOPSim and txt2bin. The schedules are collsim's ring and recursive-doubling
# allreduce exported as GOAL (`collsim schedule --format goal`), read back by collsim as
# `--algorithm file:X.goal` (the GOAL operations alone, not collsim's comments: the comments are
# stripped first) and by LogGOPSim through txt2bin. Both run LogGP without congestion: L = 2500 ns,
# o = 1500 ns, g = 1000 ns, G = 6 ns/B (LogGOPSim's defaults; collsim's uniform topology with
# latency L, overhead o, gap g and bandwidth 1/G), no rendezvous (LogGOPSim's S above every
# message), reductions free (GOAL's calc 0).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
lgs=${1:?usage: bench/loggopsim_compare.sh LOGGOPSIM_DIR [COLLSIM]}
collsim=${2:-$root/build/release/cli/collsim}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat > "$work/loggp.yaml" <<'YAML'
name: loggopsim-defaults
topology:
  kind: uniform
  latency: 2.5 us
  overhead: 1.5 us
  gap: 1 us
  bandwidth: 0.16666666666666666 GB/s
  reduce_bandwidth: 1000000 GB/s
studies:
  - collective: allreduce
    algorithms: [ring]
    ranks: [8]
    sizes: [1KiB]
YAML
# Wall times: collsim's whole `sim` command (reading the GOAL text, the schedule, loggp);
# LogGOPSim's txt2bin (GOAL text to its binary schedule) and its simulation, separately.
printf "%-20s %6s %10s %14s %14s %10s %10s %10s\n" algorithm ranks bytes "collsim (us)" \
  "LogGOPSim (us)" "collsim s" "txt2bin s" "LGS sim s"
for algorithm in ring recursive_doubling; do
  for ranks in 64 1024; do
    bytes=$((ranks * 1024))
    goal="$work/${algorithm}_${ranks}.goal"
    "$collsim" schedule --collective allreduce --algorithm "$algorithm" --ranks "$ranks" \
      --bytes "$bytes" --format goal -o "$goal.annotated"
    grep -v '^// collsim' "$goal.annotated" > "$goal"
    start=$(date +%s.%N)
    "$lgs/txt2bin" -i "$goal" -o "$goal.bin" > /dev/null
    bin_s=$(echo "$(date +%s.%N) - $start" | bc)
    start=$(date +%s.%N)
    lgs_out=$("$lgs/LogGOPSim" -f "$goal.bin" -L 2500 -o 1500 -g 1000 -G 6 -O 0 -S 2147483647 -b)
    lgs_s=$(echo "$(date +%s.%N) - $start" | bc)
    lgs_ns=$(echo "$lgs_out" | sed -n 's/.*[Mm]aximum finishing time at host [0-9]*: \([0-9]*\).*/\1/p' | head -1)
    start=$(date +%s.%N)
    cs_us=$("$collsim" sim --scenario "$work/loggp.yaml" --algorithm "file:$goal" --ranks "$ranks" \
      --sizes "$bytes" --engine loggp --threads 1 --format csv | awk -F, 'NR==2 {print $9}')
    cs_s=$(echo "$(date +%s.%N) - $start" | bc)
    printf "%-20s %6d %10d %14.1f %14s %10.2f %10.2f %10.2f\n" "$algorithm" "$ranks" "$bytes" \
      "$cs_us" "$(echo "scale=1; ${lgs_ns:-0} / 1000" | bc)" "$cs_s" "$bin_s" "$lgs_s"
  done
done
