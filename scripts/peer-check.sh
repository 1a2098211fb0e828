#!/usr/bin/env bash
# The PyTorch peer tier in full: every ctest labelled `peer`, with CONVBENCH_PEER_FULL=1, which
# lifts the bounds the test command keeps them to (scripts/README.md, "The PyTorch peer in
# full"): the FLOP counters on every config at its own batch instead of batch 2, and the
# mixed-precision peer on the seed blocks in both layouts. About 8 minutes on 2 cores.
#
#   scripts/peer-check.sh            install what the tests use, build, run the peer tier in full
#   scripts/peer-check.sh ARGS       the same, with ARGS added to ctest (e.g. -R flop_counters)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh" --tests
CONVBENCH_PEER_FULL=1 exec "$root/scripts/test.sh" -L peer "$@"
