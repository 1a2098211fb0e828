#!/usr/bin/env bash
# Formats every C++ and CUDA file of the project with .clang-format (clang-format-14).
#   scripts/format.sh           rewrite the files in place
#   scripts/format.sh --check   change nothing; list the files that differ and exit 1 if any do
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
# CONVBENCH_CLANG_FORMAT: the one CMake found (the test passes it); otherwise clang-format-14.
formatter=${CONVBENCH_CLANG_FORMAT:-$(command -v clang-format-14 || true)}
if [ -z "$formatter" ] || [ ! -x "$formatter" ]; then
  if grep -q '^ID=debian' /etc/os-release 2>/dev/null; then
    echo "format: clang-format-14 is missing (scripts/setup.sh installs it)" >&2
    exit 1
  fi
  echo "SKIP: no clang-format-14 on this machine (not Debian: the GPU machine's image)"
  exit 0
fi
# Versions format differently: only 14 is the reference.
"$formatter" --version | grep -q 'version 14\.' ||
  { echo "SKIP: $formatter is not clang-format 14 ($("$formatter" --version))"; exit 0; }
mapfile -t files < <(git ls-files --cached --others --exclude-standard -- 'lib/*' 'app/*' 'kernels/*' 'tests/*' |
                     grep -E '\.(cpp|hpp|cu|cuh)$' | while read -r f; do [ -f "$f" ] && echo "$f"; done)
case ${1:-} in
  --check)
    differ=()
    for f in "${files[@]}"; do
      "$formatter" --style=file "$f" | cmp -s - "$f" || differ+=("$f")
    done
    if [ ${#differ[@]} -gt 0 ]; then
      printf 'not formatted (run scripts/format.sh): %s\n' "${differ[@]}"
      exit 1
    fi
    echo "ok: ${#files[@]} files follow .clang-format"
    ;;
  "") "$formatter" --style=file -i "${files[@]}" ;;
  *) echo "format: unknown argument $1" >&2; exit 2 ;;
esac
