#!/usr/bin/env bash
# Runs the peer environment's Python (.venv-peers, scripts/setup-peers.sh) with the arguments:
#
#   scripts/peer-python.sh scripts/peer/counters.py configs/seed-blocks.yaml
#
# Creates the environment first when it is missing or out of date, unless --no-setup comes first:
# then, where it is not ready, prints "SKIP: ..." with the reason and exits 0 (what the tests use:
# ctest `peer_env_setup` has created it once for the whole run, or found that it cannot be).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
setup=$root/scripts/setup-peers.sh
venv=${CONVBENCH_PEERS_VENV:-$root/.venv-peers}
if [ "${1:-}" = --no-setup ]; then
  shift
  if ! "$setup" --ready; then
    why=$("$setup" --why)
    echo "SKIP: torch not importable: the peer environment $venv is not ready (${why:-scripts/setup-peers.sh has not made it})"
    exit 0
  fi
else
  "$setup" >/dev/null
fi
exec "$venv/bin/python" "$@"
