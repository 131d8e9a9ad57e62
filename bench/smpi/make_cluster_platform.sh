#!/usr/bin/env bash
# make_cluster_platform.sh NP BW_Bps LAT_s [CORES] > platform.xml
#
# Writes a SimGrid platform (XML 4.1) for a non-blocking crossbar cluster of NP hosts, in the
# shape collsim's SimGrid engine exports (engines/simgrid, write_simgrid_platform):
#   <zone id="collsim" routing="Full">, hosts p0..p(NP-1) at 1 Gflop/s, one SHARED link per
#   direction of each host's cable (up<i>: host i into the crossbar, dn<i>: crossbar into host i),
#   each of bandwidth BW_Bps bytes/s and latency LAT_s seconds, and an explicit, non-symmetrical
#   route for every ordered pair i != j: up<i>, dn<j>.
# There is no route from a host to itself: SMPI never sends to itself (a self sendrecv is a copy;
# README.md, "Settings", network/loopback-lat).
# The output has NP*(NP-1) routes: 1024 ranks give about 1M routes (~90 MB of XML).
#
# make_cluster_platform.sh --hostfile NP > hostfile   writes p0..p(NP-1), one per line.
set -euo pipefail

usage() {
  echo "usage: $0 NP BW_Bps LAT_s [CORES] > platform.xml" >&2
  echo "       $0 --hostfile NP > hostfile" >&2
  exit 2
}

is_uint() { [[ "$1" =~ ^[0-9]+$ ]] && (($1 >= 1)); }
is_num() { [[ "$1" =~ ^[0-9]*\.?[0-9]+([eE][-+]?[0-9]+)?$ ]]; }

if [[ "${1:-}" == "--hostfile" ]]; then
  if [[ $# -ne 2 ]] || ! is_uint "$2"; then usage; fi
  awk -v np="$2" 'BEGIN { for (i = 0; i < np; i++) printf "p%d\n", i }'
  exit 0
fi

[[ $# -eq 3 || $# -eq 4 ]] || usage
np=$1 bw=$2 lat=$3 cores=${4:-1}
is_uint "$np" || { echo "$0: NP must be a positive integer, got '$np'" >&2; exit 2; }
is_num "$bw" || { echo "$0: BW_Bps must be a number, got '$bw'" >&2; exit 2; }
is_num "$lat" || { echo "$0: LAT_s must be a number, got '$lat'" >&2; exit 2; }
is_uint "$cores" || { echo "$0: CORES must be a positive integer, got '$cores'" >&2; exit 2; }

awk -v np="$np" -v bw="$bw" -v lat="$lat" -v cores="$cores" 'BEGIN {
  print "<?xml version=\"1.0\"?>"
  print "<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">"
  printf "<!-- make_cluster_platform.sh: non-blocking crossbar, %d hosts, links %s Bps, %s s -->\n", np, bw, lat
  print "<platform version=\"4.1\">"
  print "<zone id=\"collsim\" routing=\"Full\">"
  for (i = 0; i < np; i++)
    printf "  <host id=\"p%d\" speed=\"1Gf\" core=\"%d\"/>\n", i, cores
  for (i = 0; i < np; i++) {
    printf "  <link id=\"up%d\" bandwidth=\"%sBps\" latency=\"%ss\" sharing_policy=\"SHARED\"/>\n", i, bw, lat
    printf "  <link id=\"dn%d\" bandwidth=\"%sBps\" latency=\"%ss\" sharing_policy=\"SHARED\"/>\n", i, bw, lat
  }
  for (i = 0; i < np; i++)
    for (j = 0; j < np; j++)
      if (i != j)
        printf "  <route src=\"p%d\" dst=\"p%d\" symmetrical=\"NO\"><link_ctn id=\"up%d\"/><link_ctn id=\"dn%d\"/></route>\n", i, j, i, j
  print "</zone>"
  print "</platform>"
}'
