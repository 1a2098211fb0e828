#!/usr/bin/env bash
# Prepares what a GPU machine needs to build convbench, run HERE (Debian 12 with apt and a
# network): the GPU machine has nvcc, CMake, a C++ compiler and PyTorch (with its cuDNN) but no
# apt and no network, so the Debian packages of the build (headers, CMake configs and the few
# shared libraries) travel with the repository. They are downloaded and unpacked into
# .gpu-deps/root, which git ignores (.git/info/exclude) and the device tool carries:
#
#   scripts/gpu-deps.sh                               # here, once
#   device run, carry [".gpu-deps"]: scripts/gpu-check.sh
#
# Idempotent: does nothing when .gpu-deps/root matches the package list. Prints the size of what
# travels (the device tool carries at most 64 MiB with the working tree).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
deps=$root/.gpu-deps

# CLI11, nlohmann/json: headers. spdlog, fmt, yaml-cpp: headers and shared libraries. GoogleTest:
# headers and static libraries. oneDNN (the cpu backend): headers and its shared library, whose
# CMake config requires OpenCL (loader, its development link and headers). SQLite and RE2:
# headers and shared libraries.
packages=(
  libcli11-dev nlohmann-json3-dev
  libspdlog-dev libspdlog1.10 libfmt-dev libfmt9
  libyaml-cpp-dev libyaml-cpp0.7
  libgtest-dev
  libdnnl-dev libdnnl2 ocl-icd-libopencl1 ocl-icd-opencl-dev opencl-c-headers
  libsqlite3-dev libsqlite3-0
  libre2-dev libre2-9
)
manifest="${packages[*]}"

# Ignored by git without touching the shared .gitignore; `git rev-parse` finds the exclude file
# in worktrees too.
exclude=$(git -C "$root" rev-parse --git-path info/exclude)
case $exclude in /*) ;; *) exclude=$root/$exclude ;; esac
mkdir -p "$(dirname "$exclude")"
for pattern in /.gpu-deps/ /gpu-check-out/; do
  grep -qxF "$pattern" "$exclude" 2>/dev/null || echo "$pattern" >>"$exclude"
done

if [ -f "$deps/manifest" ] && [ "$(cat "$deps/manifest")" = "$manifest" ] && [ -d "$deps/root/usr" ]; then
  echo "gpu-deps: $deps/root is up to date ($(du -sh "$deps/root" | cut -f1))"
  exit 0
fi

download=$(mktemp -d)
trap 'rm -rf "$download"' EXIT
cd "$download"
if ! apt-get download "${packages[@]}" >/dev/null 2>&1; then
  # The package lists may be missing or stale.
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  apt-get download "${packages[@]}"
fi

rm -rf "$deps"
mkdir -p "$deps/root"
for deb in "$download"/*.deb; do
  dpkg-deb -x "$deb" "$deps/root"
done
# Documentation and metadata are not needed to build.
rm -rf "$deps/root/usr/share/doc" "$deps/root/usr/share/man" "$deps/root/usr/share/lintian" \
  "$deps/root/usr/share/bug"
for deb in "$download"/*.deb; do basename "$deb"; done >"$deps/debs.txt"
echo "$manifest" >"$deps/manifest"

echo "gpu-deps: unpacked $(wc -l <"$deps/debs.txt") packages into $deps/root ($(du -sh "$deps/root" | cut -f1))"
travel=$(git -C "$root" ls-files -z --cached --others --exclude-standard | (cd "$root" && xargs -0 du -cb 2>/dev/null) | tail -1 | cut -f1)
carried=$(du -sb "$deps" | cut -f1)
echo "gpu-deps: working tree $((travel / 1024)) KiB + carried .gpu-deps $((carried / 1024)) KiB of the 64 MiB the device tool takes"
