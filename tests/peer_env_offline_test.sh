#!/usr/bin/env bash
# ctest `peer_env_unreachable_skips`: where PyPI cannot be reached, scripts/setup-peers.sh exits 3
# with "peer environment unavailable: pip could not download from PyPI (...)", the fixture prints
# it as a skip, nothing looks ready (no link, --ready fails), and scripts/peer-python.sh --no-setup
# prints the same reason as a skip instead of running anything. Uses a private environment path,
# an empty wheel cache and an index that refuses connections; the real .venv-peers is untouched.
#   Usage: peer_env_offline_test.sh SOURCE_DIR
set -uo pipefail
source_dir=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
export CONVBENCH_PEERS_VENV=$work/.venv-peers CONVBENCH_PEERS_WHEELS=$work/wheels
export PIP_INDEX_URL=http://127.0.0.1:9/simple PIP_FIND_LINKS= PIP_RETRIES=0 PIP_DEFAULT_TIMEOUT=5

"$source_dir/scripts/setup-peers.sh" >"$work/setup.out" 2>&1
rc=$?
cat "$work/setup.out"
[ $rc -eq 3 ] || fail "setup-peers.sh exited $rc without an index, expected 3"
grep -q '^peer environment unavailable: pip could not download from PyPI (' "$work/setup.out" || fail "no reason printed"
[ -e "$CONVBENCH_PEERS_VENV" ] && fail "$CONVBENCH_PEERS_VENV exists after a failed setup"
"$source_dir/scripts/setup-peers.sh" --ready && fail "--ready says ready after a failed setup"

fixture=$("$source_dir/tests/peer_env_setup.sh" "$source_dir" 2>/dev/null)
rc=$?
[ $rc -eq 0 ] || fail "the fixture exited $rc, expected 0 (a skip)"
grep -q '^SKIP: peer environment unavailable: pip could not download from PyPI' <<<"$fixture" ||
  fail "the fixture printed no skip with the reason: $fixture"

run=$("$source_dir/scripts/peer-python.sh" --no-setup -c 'print("ran")')
rc=$?
[ $rc -eq 0 ] || fail "peer-python.sh --no-setup exited $rc, expected 0"
grep -q '^SKIP: torch not importable: the peer environment .* is not ready (peer environment unavailable: pip could not' <<<"$run" ||
  fail "peer-python.sh --no-setup printed no skip with the reason: $run"
grep -q '^ran$' <<<"$run" && fail "peer-python.sh --no-setup ran Python without an environment"
echo "PASS: without PyPI the setup says why, nothing looks ready, and the tests skip with the reason"
