#!/usr/bin/env bash
# Configures and builds convbench in build/ (Release). Extra arguments go to CMake's configure
# step, e.g. scripts/build.sh -DCONVBENCH_CUDA=OFF.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
build_dir=${CONVBENCH_BUILD_DIR:-$root/build}
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# With CONVBENCH_QUIET_BUILD=1 the build prints nothing unless it fails.
run() {
  if [ "${CONVBENCH_QUIET_BUILD:-0}" = 1 ]; then
    "$@" >"$log" 2>&1 || { cat "$log" >&2; exit 1; }
  else
    "$@" >&2
  fi
}
if [ ! -f "$build_dir/CMakeCache.txt" ] || [ $# -gt 0 ]; then
  run cmake -S "$root" -B "$build_dir" -DCMAKE_BUILD_TYPE=Release "$@"
fi
run cmake --build "$build_dir" -j "$(nproc)"
