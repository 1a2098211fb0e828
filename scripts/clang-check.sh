#!/usr/bin/env bash
# Compiles every host C++ file of convbench (lib/, app/, tests/, the CUDA backend's host code)
# with clang, with the project's warnings as errors: a GPU machine's compiler may be newer than
# GCC 12, and -Werror turns what GCC 12 does not report into build failures there. Run by
# scripts/test.sh (so CI runs it), with --not-in-sanitizer-build: only the files that
# scripts/sanitize.sh's clang build does not compile (the CUDA backend's host code; with the same
# warnings as errors, that build has checked every other file), which takes seconds; all files
# take about 5 minutes on 2 cores.
#
# It configures build-clang/ with clang++ as the C++ compiler (nvcc keeps g++ as its host
# compiler; .cu files are not compiled here) and runs each C++ compile command of
# compile_commands.json with -fsyntax-only: every warning clang's front end gives, no code
# generated, nothing linked.
#   scripts/clang-check.sh                           every host C++ file
#   scripts/clang-check.sh --not-in-sanitizer-build  the files build-sanitize/ did not compile
#   CONVBENCH_CLANG=clang++-14   the compiler (default: clang++-14, from scripts/setup.sh)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
only_missing=0
case "${1:-}" in
  "") ;;
  --not-in-sanitizer-build) only_missing=1 ;;
  *) echo "clang-check: unknown argument $1" >&2; exit 2 ;;
esac
sanitize_commands=${CONVBENCH_SANITIZE_BUILD_DIR:-$root/build-sanitize}/compile_commands.json
gcc_commands=${CONVBENCH_BUILD_DIR:-$root/build}/compile_commands.json
if [ "$only_missing" = 1 ]; then
  [ -f "$sanitize_commands" ] && [ -f "$gcc_commands" ] ||
    { echo "clang-check: --not-in-sanitizer-build needs both build/ and build-sanitize/ (scripts/test.sh makes them)" >&2; exit 1; }
  # The main build compiles in unity batches (CONVBENCH_UNITY), so its compile commands do not
  # list the files: the ones left are those of the CUDA backend's host code, when it is built.
  left=0
  if grep -qs 'with_cuda = true' "$(dirname "$gcc_commands")/generated/build_info.hpp"; then
    left=$(python3 - "$root" "$sanitize_commands" <<'PY'
import glob, json, os, sys
cuda = {os.path.realpath(f) for f in glob.glob(os.path.join(sys.argv[1], "lib/backends/cuda/*.cpp"))}
san = {os.path.realpath(e["file"]) for e in json.load(open(sys.argv[2]))}
print(len(cuda - san))
PY
)
  fi
  if [ "$left" = 0 ]; then
    echo "clang-check: the sanitizer build compiled every host C++ file with clang (no CUDA backend here): nothing left to check" >&2
    exit 0
  fi
fi
clang=${CONVBENCH_CLANG:-clang++-14}
command -v "$clang" >/dev/null || { echo "clang-check: $clang not found (scripts/setup.sh installs clang-14)" >&2; exit 1; }
build=${CONVBENCH_CLANG_BUILD_DIR:-$root/build-clang}
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER="$clang" -DCONVBENCH_UNITY=OFF \
     -DCMAKE_CUDA_HOST_COMPILER="$(command -v g++)" -DCMAKE_EXPORT_COMPILE_COMMANDS=ON >"$log" 2>&1; then
  cat "$log" >&2
  echo "clang-check: configure with $clang failed" >&2
  exit 1
fi
# The generated headers: build_info.hpp is made at configure time, build_commit.hpp by its
# target (it runs at build time); nothing else is needed.
if ! cmake --build "$build" --target convbench_git_commit >"$log" 2>&1; then
  cat "$log" >&2
  echo "clang-check: writing build_commit.hpp failed" >&2
  exit 1
fi
skip_list=/dev/null
[ "$only_missing" = 1 ] && skip_list=$sanitize_commands
python3 - "$build/compile_commands.json" "$skip_list" >"$build/clang-check-commands.txt" <<'PY'
import json, shlex, sys
entries = json.load(open(sys.argv[1]))
skip = {e["file"] for e in json.load(open(sys.argv[2]))} if sys.argv[2] != "/dev/null" else set()
for e in entries:
    if not e["file"].endswith(".cpp") or e["file"] in skip:
        continue
    args = shlex.split(e["command"])
    # -o OUT and -c FILE become -fsyntax-only FILE: checked, not compiled to an object.
    out, i = [], 0
    while i < len(args):
        if args[i] == "-o":
            i += 2
            continue
        if args[i] == "-c":
            i += 1
            continue
        out.append(args[i])
        i += 1
    print(shlex.join(["cd", e["directory"]]) + " && " + shlex.join(out + ["-fsyntax-only", e["file"]]))
PY
count=$(wc -l <"$build/clang-check-commands.txt")
failed=0
# One line per file; xargs runs them in parallel and reports a failure through its exit code.
tr '\n' '\0' <"$build/clang-check-commands.txt" |
  xargs -0 -P "$(nproc)" -I{} bash -c '{}' >"$log" 2>&1 || failed=1
if [ "$failed" = 1 ] || grep -q 'warning:' "$log"; then
  cat "$log" >&2
  echo "clang-check: $clang reports problems in convbench's host code (above)" >&2
  exit 1
fi
echo "clang-check: $count host C++ files compile cleanly with $($clang --version | head -1) and -Wall -Wextra -Werror" >&2
