#!/usr/bin/env bash
# The dependency check fails, naming the file, the package and the fix, when a package the build
# uses is taken out of scripts/setup.sh's list. (That it passes with the list as it is, ctest's
# setup_covers_build_dependencies checks, on more caches: not run twice here.)
# Usage: check_deps_test.sh PYTHON SOURCE_DIR CMAKE_CACHE
set -uo pipefail
python=$1 source=$2 cache=$3
command -v dpkg-query >/dev/null && command -v apt-cache >/dev/null ||
  { echo "SKIP: no dpkg-query / apt-cache here: the check is about fresh Debian machines"; exit 0; }
grep -q '^OpenCL_LIBRARY:FILEPATH=/' "$cache" ||
  { echo "FAIL: $cache has no OpenCL_LIBRARY: oneDNN's CMake config should have looked for it"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
check() {
  "$python" "$source/scripts/check-deps.py" --cache "$cache" --python "$python" --source "$source" --setup "$1" \
    --peer-python "$source/.venv-peers/bin/python" --peer-requirements "$source/scripts/requirements-peers.txt"
}
fail() { echo "FAIL: $*"; exit 1; }

# Without ocl-icd-opencl-dev: fails with the file, the package and the fix.
sed 's/\bocl-icd-opencl-dev\b//' "$source/scripts/setup.sh" >"$work/setup.sh"
bash "$work/setup.sh" --list | grep -qx ocl-icd-opencl-dev && fail "could not take ocl-icd-opencl-dev out of the list"
check "$work/setup.sh" >"$work/without.log" 2>&1
rc=$?
cat "$work/without.log"
[ "$rc" = 1 ] || fail "exit code $rc without ocl-icd-opencl-dev, expected 1"
grep -q '^error: [^ ]*CMakeCache.txt: OpenCL_LIBRARY = /usr/lib/x86_64-linux-gnu/libOpenCL.so comes from the Debian package ocl-icd-opencl-dev' "$work/without.log" ||
  fail "the error does not name OpenCL_LIBRARY, its file and ocl-icd-opencl-dev"
grep -q "Fix: add ocl-icd-opencl-dev to the packages in $work/setup.sh" "$work/without.log" || fail "the error gives no fix"
grep -q '^check-deps: FAILED' "$work/without.log" || fail "no FAILED summary"

# Which nvcc CMake finds depends on PATH's order; a launcher script outside the toolkit
# (`exec /usr/local/cuda-13.0/bin/nvcc "$@"`) must not change the verdict or the toolkit's folder.
bin_dir=$(sed -n 's/^CUDAToolkit_BIN_DIR:PATH=//p' "$cache")
if [ -n "$bin_dir" ] && [ -x "$bin_dir/nvcc" ]; then
  toolkit=$(dirname "$(realpath "$bin_dir")")
  mkdir -p "$work/build" "$work/bin"
  printf '#!/bin/sh\nexec %s/bin/nvcc "$@"\n' "$toolkit" >"$work/bin/nvcc"
  chmod +x "$work/bin/nvcc"
  sed "s|^CUDAToolkit_NVCC_EXECUTABLE:FILEPATH=.*|CUDAToolkit_NVCC_EXECUTABLE:FILEPATH=$work/bin/nvcc|" "$cache" >"$work/build/CMakeCache.txt"
  "$python" "$source/scripts/check-deps.py" --cache "$work/build/CMakeCache.txt" --python "$python" --source "$source" \
    --setup "$work/setup.sh" --peer-python "$source/.venv-peers/bin/python" \
    --peer-requirements "$source/scripts/requirements-peers.txt" >"$work/launcher.log" 2>&1
  [ "$(tail -1 "$work/launcher.log")" = "$(tail -1 "$work/without.log" | sed "s|$cache|$work/build/CMakeCache.txt|")" ] || {
    diff <(tail -1 "$work/without.log") <(tail -1 "$work/launcher.log"); fail "a launcher script for nvcc changed the verdict"; }
fi
echo "PASS: the check fails without ocl-icd-opencl-dev; an nvcc launcher changes nothing"
