#!/usr/bin/env bash
# The test command: installs dependencies, configures, builds everything (the tool, the tests),
# compiles the host code a second time with clang (scripts/clang-check.sh: the warnings of a
# newer compiler), and runs every test with ctest. GPU tests skip with a printed reason on
# machines without a GPU. Arguments go to ctest (e.g. -R Spec).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/build.sh"
"$root/scripts/clang-check.sh"
cd "${CONVBENCH_BUILD_DIR:-$root/build}"
ctest --output-on-failure -j "$(nproc)" "$@"
