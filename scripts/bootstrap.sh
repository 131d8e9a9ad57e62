#!/usr/bin/env bash
# Set up, build and run collsim on Debian 12.
#
#   scripts/bootstrap.sh run    install what is missing, build (release), run the default study
#   scripts/bootstrap.sh test   install what is missing, build (release), run the whole test suite
#   scripts/bootstrap.sh build  install what is missing and build only
#
# Idempotent: packages already installed are not touched, and an existing build is reused, so a
# second call costs a few seconds. Environment: COLLSIM_BUILD_DIR (default build/release),
# COLLSIM_JOBS (default: all cores), CTEST_ARGS (extra ctest arguments, e.g. "-L heavy").
set -euo pipefail

mode=${1:-run}
case "$mode" in run | test | build) ;; *)
  echo "usage: $0 [run|test|build]" >&2
  exit 2
  ;;
esac

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${COLLSIM_BUILD_DIR:-$root/build/release}
jobs=${COLLSIM_JOBS:-$(nproc)}

# Debian 12 packages collsim builds with (see README.md, "Dependencies").
packages=(
  build-essential cmake ninja-build pkg-config
  libboost-graph-dev libeigen3-dev libyaml-cpp-dev libfmt-dev libcli11-dev nlohmann-json3-dev
  catch2 libsimgrid-dev openmpi-bin libopenmpi-dev
  # Ceres Solver 2.1 for `collsim calibrate` (bounded, robust nonlinear least squares and the
  # covariance of the fitted parameters); it builds on Eigen (libeigen3-dev above).
  libceres-dev
  # MPICH beside Open MPI, for the mpich-json real-client test (tests/probe/tune_mpich_json_test.cpp):
  # it installs as mpicc.mpich / mpiexec.mpich with a lower alternatives priority (40 against Open
  # MPI's 50), so mpicc and mpirun stay Open MPI's.
  mpich libmpich-dev
  # hwloc for `collsim topology import --lstopo` (reads lstopo XML with hwloc's own library) and
  # `collsim-probe --describe`; hwloc-nox gives lstopo-no-graphics for a node's own XML.
  libhwloc-dev hwloc-nox
  # `collsim place --method scotch` (Scotch 7's static mapping) and `--method mip` (the exact
  # placement model, solved by COIN-OR CBC through its C interface).
  libscotch-dev coinor-libcbc-dev
  # zlib for gzip-compressed PyTorch profiler traces (`collsim workload import --kineto`).
  zlib1g-dev
  # pugixml for MSCCL XML algorithm files (`collsim import FILE.xml`, `--algorithm file:PATH`).
  libpugixml-dev
  # Qt6 Charts for collsim-gui and `collsim plot` (drawn on Qt's offscreen platform without a
  # display); Xvfb for the GUI's real-window test; a font for chart text.
  qt6-base-dev qt6-charts-dev qt6-svg-dev libqt6opengl6-dev libgl-dev xvfb xauth fonts-dejavu-core
)

# shellcheck source=scripts/install_missing.sh
source "$root/scripts/install_missing.sh"
install_missing "${packages[@]}"

# ccache, where the machine has it, makes a rebuild in a fresh clone cheap; it is not required.
# Paths under the checkout are hashed relative to it, so every clone of the repository shares
# the cache.
export CCACHE_BASEDIR="$root"
if [ ! -f "$build/CMakeCache.txt" ]; then
  launcher=()
  if command -v ccache >/dev/null 2>&1; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release "${launcher[@]}"
fi
# `run` builds only the program it runs (the collsim target); `test` and `build` build everything,
# the tests included.
if [ "$mode" = run ]; then
  cmake --build "$build" -j "$jobs" --target collsim
else
  cmake --build "$build" -j "$jobs"
fi

case "$mode" in
run)
  cd "$root"
  "$build/cli/collsim" run scenarios/default.yaml
  ;;
test)
  # The default suite; heavier suites carry the ctest label "heavy" and are excluded here.
  ctest --test-dir "$build" --output-on-failure -j "$jobs" -LE heavy ${CTEST_ARGS:-}
  ;;
build) ;;
esac
