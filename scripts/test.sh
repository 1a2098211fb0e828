#!/usr/bin/env bash
# The test command (README.md; CI runs exactly this). What each step covers and how long it
# takes: scripts/README.md, "The test command and its tiers".
#
#   scripts/test.sh            everything, from a fresh clone:
#                                1. scripts/setup.sh --tests (the test tools, when missing)
#                                2. build: the program and the tests (Release, GCC)
#                                3. ctest: every tier in parallel (unit, cli, docs, peer, setup,
#                                   style, cluster; the timing test alone; gpu tests skip without
#                                   a GPU), then scripts/test-budgets.py: no test over its budget
#                                4. the sanitizer pass (scripts/sanitize.sh): the unit and cli
#                                   tiers again, built with AddressSanitizer and
#                                   UndefinedBehaviorSanitizer (clang)
#                                5. scripts/clang-check.sh: the host code the sanitizer build does
#                                   not compile (the CUDA backend's) checked by clang
#                                6. scripts/fuzz.sh: each input reader fuzzed for 25 s
#   scripts/test.sh --quick    the inner loop: build, then the unit and cli tiers without the
#                              slow tests (about 2 minutes; no setup, sanitizers or fuzzing)
#   scripts/test.sh ARGS       build, then one ctest run with ARGS (e.g. -R Spec, -L docs)
#   scripts/peer-check.sh      the peer tier without the bounds step 3 keeps it to
#
# CONVBENCH_FUZZ_SECONDS changes step 6's 25 s; ccache (from scripts/setup.sh) keeps rebuilds of
# a second clone on the same machine quick.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${CONVBENCH_BUILD_DIR:-$root/build}
mode=full
if [ "${1:-}" = --quick ]; then
  mode=quick
  shift
fi
[ $# -gt 0 ] && mode=args
jobs=$(nproc)
step() { printf '\ntest.sh: %s (%s)\n' "$1" "$(date -u +%H:%M:%S)" >&2; }

if [ "$mode" = full ]; then
  step "installing what the tests use, when missing"
  "$root/scripts/setup.sh" --tests
fi
step "building the program and the tests"
# Configure with the tests when the build folder was configured without them (by the main
# command, before GoogleTest was installed), or not at all.
configure=()
grep -qs '^CONVBENCH_TESTS:BOOL=ON' "$build/CMakeCache.txt" || configure=(-DCONVBENCH_TESTS=ON)
# The main command leaves the CUDA backend out where no NVIDIA driver could run it; the tests
# build and check it all the same.
[ -e "$build/.convbench-cuda-off-without-driver" ] && configure+=(-DCONVBENCH_TESTS=ON -DCONVBENCH_CUDA=AUTO)
"$root/scripts/build.sh" "${configure[@]}"
cd "$build"

case $mode in
  args)
    exec ctest --output-on-failure -j "$jobs" "$@" ;;
  quick)
    step "ctest: the unit and cli tiers, without the slow tests"
    exec ctest --output-on-failure -j "$jobs" -L 'unit|cli' -LE slow ;;
esac

step "ctest: every tier"
junit=$build/Testing/convbench-junit.xml
load=$build/Testing/convbench-load.json
status=0
# measure-load.py records what else the machine did meanwhile, so that the budgets below judge
# the tests and not the machine's other work.
"$root/scripts/measure-load.py" --out "$load" -- ctest --output-on-failure -j "$jobs" --output-junit "$junit" ||
  status=$?
step "test budgets"
"$root/scripts/test-budgets.py" "$junit" --load "$load" || status=1
[ "$status" = 0 ] || { echo "test.sh: ctest or the budgets failed (above)" >&2; exit "$status"; }

step "the sanitizer pass"
"$root/scripts/sanitize.sh"
step "clang's check of the host code the sanitizer build does not compile"
"$root/scripts/clang-check.sh" --not-in-sanitizer-build
step "fuzzing"
"$root/scripts/fuzz.sh" --seconds "${CONVBENCH_FUZZ_SECONDS:-25}"
step "done: every step passed"
