#!/usr/bin/env bash
# Builds convbench with AddressSanitizer and UndefinedBehaviorSanitizer (clang-14, with the
# fuzzers' coverage instrumentation, so that scripts/fuzz.sh reuses the build) in build-sanitize/
# and runs tests under them. A sanitizer finding fails the test it occurs in.
#
#   scripts/sanitize.sh               the unit and cli tiers without their slow tests, then the
#                                     slow ones labelled memory (hostile inputs, the history and
#                                     shards end to end, compare's oom and per-op paths): every
#                                     kind of test that runs convbench's C++ code on inputs
#                                     (scripts/test.sh runs this, so CI does). Left out: the slow
#                                     rest (the same paths at full size: every config's memory
#                                     against the allocator), and the tiers whose work is
#                                     PyTorch's, a reader's (Chromium, pdflatex, pandas), Slurm's,
#                                     or the documents' examples, which re-run the cli tier's
#   scripts/sanitize.sh --build-only  configure and build, run nothing (scripts/fuzz.sh)
#   scripts/sanitize.sh ARGS          any other arguments go to ctest instead (e.g. -R Spec)
#
# The CUDA backend is not built here (its host code runs only next to a GPU; clang-check.sh
# compiles it).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${CONVBENCH_SANITIZE_BUILD_DIR:-$root/build-sanitize}
"$root/scripts/setup.sh" --tests
# ccache: a second clone on the same machine (CI's) hits the first one's objects.
export CCACHE_BASEDIR=$root CCACHE_NOHASHDIR=true
log=$(mktemp)
trap 'rm -f "$log"' EXIT
clang=${CONVBENCH_CLANG:-clang++-14}
# The same GNU tools a fresh machine has (not whatever LLVM tools are installed), and nvcc off.
if [ ! -f "$build/CMakeCache.txt" ] || [ -e "$build/.convbench-configure-unfinished" ]; then
  mkdir -p "$build"
  : >"$build/.convbench-configure-unfinished"
  # -O1: AddressSanitizer's advice (fast enough to run, quicker to build than -O2).
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -DNDEBUG" \
    -DCMAKE_CXX_COMPILER="$clang" \
    -DCONVBENCH_CUDA=OFF -DCONVBENCH_SANITIZE=ON -DCONVBENCH_FUZZ=ON -DCONVBENCH_UNITY=OFF >"$log" 2>&1 || { cat "$log" >&2; exit 1; }
  rm -f "$build/.convbench-configure-unfinished"
fi
cmake --build "$build" -j "$(nproc)" >"$log" 2>&1 || { cat "$log" >&2; exit 1; }
[ "${1:-}" = --build-only ] && exit 0
# Leaks are reported at exit; a finding aborts the process so that ctest sees the test fail.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:halt_on_error=1:detect_stack_use_after_return=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
cd "$build"
if [ $# -gt 0 ]; then
  ctest --output-on-failure -j "$(nproc)" "$@"
else
  ctest --output-on-failure -j "$(nproc)" -L 'unit|cli' -LE slow
  ctest --output-on-failure -j "$(nproc)" -L memory
fi
echo "sanitize: the tests above ran under AddressSanitizer and UndefinedBehaviorSanitizer" >&2
