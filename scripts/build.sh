#!/usr/bin/env bash
# Configures and builds convbench in build/ (Release). Extra arguments go to CMake's configure
# step, e.g. scripts/build.sh -DCONVBENCH_CUDA=OFF.
#
#   CONVBENCH_BUILD_DIR=DIR        build there instead of build/
#   CONVBENCH_BUILD_TARGET=NAME    build only that target (scripts/convbench builds `convbench`)
#   CONVBENCH_QUIET_BUILD=1        print nothing unless something fails
#   CONVBENCH_CUDA_NEEDS_DRIVER=1  (scripts/convbench) on a machine without an NVIDIA driver, the
#                                  first configure leaves the CUDA backend out, since nothing
#                                  there could run it; it marks the folder so that scripts/test.sh
#                                  configures it back in (it always builds and checks the backend)
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
# An NVIDIA driver: its kernel module (also what a container with GPUs sees) or WSL's GPU device.
has_nvidia_driver() { [ -e /proc/driver/nvidia/version ] || [ -e /dev/dxg ]; }
without_driver=$build_dir/.convbench-cuda-off-without-driver
if [ $# -gt 0 ] || ! configured; then
  mkdir -p "$build_dir"
  : >"$unfinished"
  rm -f "$without_driver"
  args=("$@")
  if [ "${CONVBENCH_CUDA_NEEDS_DRIVER:-0}" = 1 ] && ! has_nvidia_driver &&
    ! printf '%s\n' "$@" | grep -q '^-DCONVBENCH_CUDA='; then
    echo "convbench build: no NVIDIA driver on this machine, so the CUDA backend is not built" \
      "(scripts/build.sh -DCONVBENCH_CUDA=AUTO builds it; scripts/test.sh does)" >&2
    args+=(-DCONVBENCH_CUDA=OFF)
    : >"$without_driver"
  fi
  set -- "${args[@]}"
  if ! run cmake -S "$root" -B "$build_dir" -DCMAKE_BUILD_TYPE=Release "$@"; then
    echo "convbench build: CMake configure failed (see above); the next run configures again" >&2
    exit 1
  fi
  rm -f "$unfinished"
fi
target=()
[ -n "${CONVBENCH_BUILD_TARGET:-}" ] && target=(--target "$CONVBENCH_BUILD_TARGET")
run cmake --build "$build_dir" -j "$(nproc)" "${target[@]}"
