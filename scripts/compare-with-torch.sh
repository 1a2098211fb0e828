#!/usr/bin/env bash
# Measures convbench and PyTorch on the same spec, in one run on the same machine, and prints the
# side-by-side report (time ratios convbench / PyTorch, memory ratios, counts that must agree, and
# whether the two runtimes rank the variants alike, op by op where they do not).
#   scripts/compare-with-torch.sh configs/seed-blocks.yaml [OUT_DIR] [-- extra timing flags]
# Both engines get the same stopping-rule flags (and --per-op 3 by default, so that a ranking the
# runtimes disagree on names the ops behind it). Default device: cpu. PyTorch is the peer
# environment's (current PyTorch from PyPI, scripts/setup-peers.sh, made when missing);
# CONVBENCH_PEER_PYTHON=PYTHON uses another (e.g. /usr/bin/python3: Debian's PyTorch 1.13).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
spec=${1:?usage: compare-with-torch.sh SPEC [OUT_DIR] [-- timing flags]}
out=${2:-$root/out/$(basename "${spec%.*}")}
shift $(( $# >= 2 ? 2 : 1 ))
[ "${1:-}" = "--" ] && shift
timing=("$@")
[ ${#timing[@]} -eq 0 ] && timing=(--min-time 0.5 --min-samples 10 --timeout 15 --per-op 3)
device=${CONVBENCH_DEVICE:-cpu}
mkdir -p "$out"
CONVBENCH_QUIET_BUILD=1 "$root/scripts/build.sh"
[ -n "${CONVBENCH_PEER_PYTHON:-}" ] || "$root/scripts/setup-peers.sh" >/dev/null
# compare --peer: the engines take turns block by block (convbench's rows of a block, then
# PyTorch's), so that load from elsewhere falls on both alike. Exit 1 (counts differ) still reports.
rc=0
"$root/build/convbench" compare "$spec" --device "$device" --peer torch --json "$out/convbench.json" \
  --peer-json "$out/pytorch.json" -q "${timing[@]}" >"$out/convbench.txt" || rc=$?
[ $rc -le 1 ] || exit $rc
"$root/build/convbench" report "$out/convbench.json" --against "$out/pytorch.json" | tee "$out/against.txt"
