#!/usr/bin/env bash
# Issue 23's distributed-sweep goal: `mpirun -np 2 collsim tune ...` on this 2-core machine gives
# the same bytes as one process with one thread, and is at least 1.6x faster. Prints both wall
# times (three runs each, /usr/bin/time) and checks the outputs are identical. Figures:
# docs/benchmarks.md ("Distributed sweeps"). Open MPI needs the variables below to run as root in
# a container; they are harmless elsewhere.
#   bench/distributed_tune.sh [COLLSIM] [MPIRUN]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
collsim=${1:-$root/build/release/cli/collsim}
mpirun=${2:-mpirun}
export OMPI_ALLOW_RUN_AS_ROOT=${OMPI_ALLOW_RUN_AS_ROOT:-1}
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=${OMPI_ALLOW_RUN_AS_ROOT_CONFIRM:-1}
export OMPI_MCA_btl_vader_single_copy_mechanism=${OMPI_MCA_btl_vader_single_copy_mechanism:-none}
export OMPI_MCA_plm=${OMPI_MCA_plm:-isolated}
cd "$root"
args=(tune --scenario dgx-a100 --ranks 8,16,32,64 --sizes 8B:64MiB:x2)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for run in 1 2 3; do
  /usr/bin/time -f "one process, one thread: %e s" "$collsim" "${args[@]}" --threads 1 >"$out/one"
  /usr/bin/time -f "mpirun -np 2: %e s" "$mpirun" -np 2 "$collsim" "${args[@]}" >"$out/two"
  /usr/bin/time -f "mpirun -np 2 --bind-to none: %e s" "$mpirun" -np 2 --bind-to none \
    "$collsim" "${args[@]}" >"$out/free"
  cmp -s "$out/one" "$out/two" && cmp -s "$out/one" "$out/free" ||
    { echo "outputs differ (run $run)"; exit 1; }
done
echo "identical output: $(wc -l <"$out/one") lines"
