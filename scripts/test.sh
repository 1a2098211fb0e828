#!/usr/bin/env bash
# The test command: installs dependencies, configures, builds everything (the tool, the tests),
# compiles the host code a second time with clang (scripts/clang-check.sh: the warnings of a
# newer compiler), runs every test with ctest, then runs them again under AddressSanitizer and
# UndefinedBehaviorSanitizer (scripts/sanitize.sh) and each fuzz harness for 60 seconds
# (scripts/fuzz.sh). GPU tests skip with a printed reason on machines without a GPU. Arguments go
# to ctest (e.g. -R Spec); with arguments, only the first ctest run happens.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/build.sh"
"$root/scripts/clang-check.sh"
(cd "${CONVBENCH_BUILD_DIR:-$root/build}" && ctest --output-on-failure -j "$(nproc)" "$@")
[ $# -gt 0 ] && exit 0
"$root/scripts/sanitize.sh"
"$root/scripts/fuzz.sh" --seconds "${CONVBENCH_FUZZ_SECONDS:-60}"
