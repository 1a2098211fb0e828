#!/usr/bin/env bash
# ctest `peer_env_setup`, the fixture of the tests that run in the peer environment: creates it
# (scripts/setup-peers.sh; nothing to do when it is ready) once per test run. Where it cannot be
# created (no network to PyPI, no python3-venv) it prints "SKIP: " and the reason, and the tests
# that need it skip with the same reason.
#   Usage: peer_env_setup.sh SOURCE_DIR
set -uo pipefail
"$1/scripts/setup-peers.sh"
rc=$?
if [ $rc -eq 3 ]; then
  echo "SKIP: $("$1/scripts/setup-peers.sh" --why)"
  exit 0
fi
exit $rc
