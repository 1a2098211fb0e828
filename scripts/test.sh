#!/usr/bin/env bash
# The test command: installs dependencies, configures, builds and runs every test with ctest.
# GPU tests skip with a printed reason on machines without a GPU.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/build.sh"
cd "${CONVBENCH_BUILD_DIR:-$root/build}"
ctest --output-on-failure -j "$(nproc)" "$@"
