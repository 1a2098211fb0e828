#!/usr/bin/env bash
# Measures convbench and PyTorch on the same spec, in one run on the same machine, and prints the
# side-by-side report (time ratios convbench / PyTorch, memory ratios, counts that must agree).
#   scripts/compare-with-torch.sh configs/seed-blocks.yaml [OUT_DIR] [-- extra timing flags]
# Both engines get the same stopping-rule flags. Default device: cpu. PyTorch is the peer
# environment's (current PyTorch from PyPI, scripts/setup-peers.sh, made when missing);
# CONVBENCH_PEER_PYTHON=PYTHON uses another (e.g. /usr/bin/python3: Debian's PyTorch 1.13).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
spec=${1:?usage: compare-with-torch.sh SPEC [OUT_DIR] [-- timing flags]}
out=${2:-$root/out/$(basename "${spec%.*}")}
shift $(( $# >= 2 ? 2 : 1 ))
[ "${1:-}" = "--" ] && shift
timing=("$@")
[ ${#timing[@]} -eq 0 ] && timing=(--min-time 0.5 --min-samples 10 --timeout 15)
device=${CONVBENCH_DEVICE:-cpu}
mkdir -p "$out"
CONVBENCH_QUIET_BUILD=1 "$root/scripts/build.sh"
# Alternate the engines' runs would interleave warm caches; run each whole spec in turn instead.
"$root/build/convbench" compare "$spec" --device "$device" --json "$out/convbench.json" -q "${timing[@]}" >"$out/convbench.txt"
peer_python=(${CONVBENCH_PEER_PYTHON:-"$root/scripts/peer-python.sh"})
"${peer_python[@]}" "$root/scripts/torch_peer.py" "$spec" --convbench "$root/build/convbench" --device "$device" --json "$out/pytorch.json" "${timing[@]}" >/dev/null
"$root/build/convbench" report "$out/convbench.json" --against "$out/pytorch.json" | tee "$out/against.txt"
