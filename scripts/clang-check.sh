#!/usr/bin/env bash
# Compiles every host C++ file of convbench (lib/, app/, tests/, the CUDA backend's host code)
# with clang, with the project's warnings as errors: a GPU machine's compiler may be newer than
# GCC 12, and -Werror turns what GCC 12 does not report into build failures there. Run by
# scripts/test.sh (so CI runs it); takes about 2 minutes on 2 cores.
#
# It configures build-clang/ with clang++ as the C++ compiler (nvcc keeps g++ as its host
# compiler; .cu files are not compiled here) and runs each C++ compile command of
# compile_commands.json with -fsyntax-only: every warning clang's front end gives, no code
# generated, nothing linked.
#   CONVBENCH_CLANG=clang++-14   the compiler (default: clang++-14, from scripts/setup.sh)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
clang=${CONVBENCH_CLANG:-clang++-14}
command -v "$clang" >/dev/null || { echo "clang-check: $clang not found (scripts/setup.sh installs clang-14)" >&2; exit 1; }
build=${CONVBENCH_CLANG_BUILD_DIR:-$root/build-clang}
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER="$clang" \
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
python3 - "$build/compile_commands.json" "$root" >"$build/clang-check-commands.txt" <<'PY'
import json, shlex, sys
entries = json.load(open(sys.argv[1]))
for e in entries:
    if not e["file"].endswith(".cpp"):
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
