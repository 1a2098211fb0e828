#!/usr/bin/env bash
# Creates the peer environment: a Python virtual environment with current PyTorch from PyPI,
# torch.compile, the FLOP counters (fvcore, ptflops, thop, torchinfo), torchvision and timm,
# pinned in scripts/requirements-peers.txt. The main command never needs it; the peer tests,
# scripts/peer/counters.py and scripts/bench-vs-torch.sh do (the test command creates it, ctest
# `peer_env_setup`).
#
#   scripts/setup-peers.sh           create it when missing or out of date (prints its path)
#   scripts/setup-peers.sh --ready   exit 0 when it is ready, 1 when not; changes nothing
#   scripts/setup-peers.sh --why     print why the last setup failed (empty when it did not)
#
#   CONVBENCH_PEERS_VENV=DIR   where it lives (default: .venv-peers in the repository, git-ignored)
#
# Idempotent: a stamp holds the hash of the pinned requirements (and of how they are installed);
# when it matches, nothing happens and no network is needed. When they change, a new environment
# is built next to the old one and replaces it in one step: DIR is a symbolic link to DIR.d/<hash>,
# switched by rename(2) only once that environment imports torch, so an interrupted setup never
# leaves a half environment that looks ready (its leftover is removed by the next run). A venv
# cannot be moved after it is made (its scripts name its path), hence the link and not a rename
# of the folder. The wheels are downloaded once into pip's cache folder (~/.cache/pip, or
# $PIP_CACHE_DIR; CONVBENCH_PEERS_WHEELS=DIR elsewhere) and installed from there: a second
# setup, or a second checkout's, downloads nothing and needs no network.
#
# Exit status: 0 ready; 3 the environment cannot be created here (no network to PyPI, no
# python3-venv: the reason is printed on one line starting "peer environment unavailable:" and
# kept for --why); 1 anything else.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
venv=${CONVBENCH_PEERS_VENV:-$root/.venv-peers}
store=$venv.d
requirements=$root/scripts/requirements-peers.txt
cuda_libs=$root/scripts/requirements-peers-cuda-libs.txt
pip_version=26.3
why_file=$store/last-failure
# The downloaded wheels, kept next to pip's own cache so that CI's cache of that folder keeps
# them too. pip's HTTP cache is not enough: it stores only responses with caching headers, and a
# mirror that sends none (as this project's machines have) gets nothing cached.
wheels=${CONVBENCH_PEERS_WHEELS:-${PIP_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/pip}/convbench-peers-wheels}

# What the environment is made of: the two lists' pins (not their comments: a reworded comment
# does not rebuild 2 GB), pip's version and the install steps' version. Bump `recipe` when the
# way it is installed changes.
recipe=1
hash=$( (cat "$requirements" "$cuda_libs" | sed -e 's/#.*//' -e 's/[[:space:]]*$//' | grep -v '^$'
         echo "pip==$pip_version recipe=$recipe") | sha256sum | cut -c1-16)

ready() {
  [ -f "$venv/convbench-peers.stamp" ] && [ "$(cat "$venv/convbench-peers.stamp")" = "$hash" ] &&
    [ -x "$venv/bin/python" ]
}

case "${1:-}" in
  --ready) ready && exit 0 || exit 1 ;;
  --why) cat "$why_file" 2>/dev/null || true; exit 0 ;;
  "") ;;
  *) echo "usage: scripts/setup-peers.sh [--ready|--why]" >&2; exit 2 ;;
esac

if ready; then
  echo "$venv"
  exit 0
fi

mkdir -p "$store"
# One setup at a time (two checkouts' test runs, or a user and ctest); the second waits, then
# finds the environment ready.
exec 9>"$store/lock"
flock 9
if ready; then
  echo "$venv"
  exit 0
fi

unavailable() {
  echo "peer environment unavailable: $*" | tee "$why_file" >&2
  exit 3
}
rm -f "$why_file"
/usr/bin/python3 -c 'import ensurepip, venv' 2>/dev/null ||
  unavailable "Debian's python3-venv is not installed (scripts/setup.sh installs it)"

target=$store/$hash
rm -rf --one-file-system "$target"
log=$store/setup.log
: >"$log"
echo "convbench: creating the peer environment in $target (see $log)" >&2
start=$(date +%s)
pip() { "$target/bin/python" -m pip --disable-pip-version-check --retries 2 "$@" >>"$log" 2>&1; }
# After a failed download: no network (or no PyPI) is a reason to skip, anything else an error.
# Only the log's lines from `since` on are read (the first, offline attempt fails by design).
network_or_fail() {
  local evidence
  evidence=$(tail -n +"$since" "$log" | grep -iE "connection|resolve|unreachable|timed out|Max retries" | tail -1 | cut -c1-200 || true)
  [ -n "$evidence" ] ||
    evidence=$(tail -n +"$since" "$log" | grep -i "No matching distribution" | tail -1 | cut -c1-200 || true)
  [ -n "$evidence" ] && unavailable "pip could not download from PyPI ($evidence)"
  tail -20 "$log" >&2
  echo "convbench: the peer environment's setup failed (log: $log)" >&2
  exit 1
}
/usr/bin/python3 -m venv "$target" >>"$log" 2>&1 || { cat "$log" >&2; exit 1; }
# Installs a list from the wheel cache, downloading into it first what it lacks. --no-deps: the
# lists are complete closures; torch's declared dependencies would add the CUDA stack as wheels
# (see the comment in requirements-peers.txt).
install_list() {
  pip install --no-index --find-links "$wheels" --no-deps "$@" && return 0
  since=$(($(wc -l <"$log") + 1))
  pip download --no-deps --dest "$wheels" "$@" || network_or_fail
  pip install --no-index --find-links "$wheels" --no-deps "$@" || network_or_fail
}
mkdir -p "$wheels"
install_list "pip==$pip_version"
install_list -r "$requirements"

imports_torch() { "$target/bin/python" -c 'import torch' >>"$log" 2>&1; }
if ! imports_torch; then
  # No CUDA 13 runtime libraries on the loader path (a plain Debian machine): add them as wheels.
  if grep -q "not found in the system path\|cannot open shared object file" "$log"; then
    echo "convbench: the loader finds no CUDA 13 libraries; adding them from PyPI" >&2
    install_list -r "$cuda_libs"
  fi
  imports_torch || { tail -20 "$log" >&2; echo "convbench: torch does not import (log: $log)" >&2; exit 1; }
fi
"$target/bin/python" -c 'import torchvision, timm, fvcore, ptflops, thop, torchinfo' >>"$log" 2>&1 ||
  { tail -20 "$log" >&2; echo "convbench: the peer environment does not import (log: $log)" >&2; exit 1; }
echo "$hash" >"$target/convbench-peers.stamp"

# The switch: a new link renamed over the old one (rename(2) is atomic), then the old
# environments go.
ln -sfn "$(basename "$store")/$hash" "$venv.new"
if [ -d "$venv" ] && [ ! -L "$venv" ]; then
  rm -rf --one-file-system "$venv"  # a folder left by hand, not ours to keep
fi
mv -T "$venv.new" "$venv"
for old in "$store"/*/; do
  [ "$(basename "$old")" = "$hash" ] || rm -rf --one-file-system "$old"
done
echo "convbench: peer environment ready in $(($(date +%s) - start)) s ($(du -sh "$target" | cut -f1))" >&2
echo "$venv"
