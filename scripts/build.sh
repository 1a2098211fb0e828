#!/usr/bin/env bash
# Configures and builds convbench in build/ (Release). Extra arguments go to CMake's configure
# step, e.g. scripts/build.sh -DCONVBENCH_CUDA=OFF.
#
#   CONVBENCH_BUILD_DIR=DIR        build there instead of build/
#   CONVBENCH_BUILD_TARGET=NAME    build only that target (scripts/convbench builds `convbench`)
#   CONVBENCH_QUIET_BUILD=1        print nothing unless something fails
#
# Configure runs when there is no configured build yet, when arguments are given, and when the
# last configure did not finish (it failed, or was interrupted): a CMakeCache.txt alone does not
# make a build folder usable.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
# ccache: a second clone on the same machine (CI's) hits the first one's objects.
export CCACHE_BASEDIR=$root CCACHE_NOHASHDIR=true
build_dir=${CONVBENCH_BUILD_DIR:-$root/build}
log=$(mktemp)
trap 'rm -f "$log"' EXIT
run() {
  if [ "${CONVBENCH_QUIET_BUILD:-0}" = 1 ]; then
    "$@" >"$log" 2>&1 || { cat "$log" >&2; return 1; }
  else
    "$@" >&2
  fi
}

# Present from the start of a configure until it succeeds.
unfinished=$build_dir/.convbench-configure-unfinished
configured() {
  [ -f "$build_dir/CMakeCache.txt" ] && [ ! -e "$unfinished" ] &&
    { [ -f "$build_dir/Makefile" ] || [ -f "$build_dir/build.ninja" ]; }
}
if [ $# -gt 0 ] || ! configured; then
  mkdir -p "$build_dir"
  : >"$unfinished"
  if ! run cmake -S "$root" -B "$build_dir" -DCMAKE_BUILD_TYPE=Release "$@"; then
    echo "convbench build: CMake configure failed (see above); the next run configures again" >&2
    exit 1
  fi
  rm -f "$unfinished"
fi
target=()
[ -n "${CONVBENCH_BUILD_TARGET:-}" ] && target=(--target "$CONVBENCH_BUILD_TARGET")
run cmake --build "$build_dir" -j "$(nproc)" "${target[@]}"
