#!/usr/bin/env bash
# Speed side by side, in one run with the same threads and stopping rule: convbench's cpu backend,
# PyTorch eager and torch.compile (inductor, CPU), and in inference rows ONNX Runtime running the
# variant as `convbench export` writes it, engines interleaved round by round, on the seed
# block and the ResNet-50 stages (or the specs given). Writes OUT/<spec name>.json and .md (the
# ratios ours / eager and ours / compiled, geomean and worst row, provenance).
#
#   scripts/bench-vs-torch.sh [SPEC ...] [--out DIR] [-- bench_vs_torch.py flags]
#
# Without SPEC: the seed block, the ResNet-50 stages, and the three network configs at sizes a
# CPU times in seconds (VBNet 1x1x16x32x32, ResNet-50 and TResNet-M 2x3x128x128), each network
# against the PyTorch model its config reproduces (scripts/peer/networks.py).
#
# Default OUT: results/bench-vs-torch. The project's goal: geomean <= 1.0x eager on the seed block
# and the ResNet-50 stages, no row above 1.2x. Needs the peer environment (made when missing) and
# an idle machine for figures worth keeping: other load slows the engines unevenly.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=$root/results/bench-vs-torch
specs=()
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=${2:?--out needs a folder}; shift 2 ;;
    --) shift; break ;;
    *) specs+=("$1"); shift ;;
  esac
done
CONVBENCH_QUIET_BUILD=1 CONVBENCH_BUILD_TARGET=${CONVBENCH_BUILD_TARGET:-convbench} "$root/scripts/build.sh"
bench() {  # SPEC [bench_vs_torch.py flags...]
  "$root/scripts/peer-python.sh" "$root/scripts/bench_vs_torch.py" "$1" --out "$out" \
    --convbench "${CONVBENCH:-$root/build/convbench}" "${@:2}"
}
if [ ${#specs[@]} -gt 0 ]; then
  for spec in "${specs[@]}"; do bench "$spec" "$@"; done
  exit 0
fi
bench "$root/configs/seed-blocks.yaml" "$@"
bench "$root/configs/resnet50-stages.yaml" "$@"
bench "$root/configs/vbnet.yaml" --sweep batch=1 --sweep 'size=[16,32,32]' "$@"
bench "$root/configs/resnet50.yaml" --sweep batch=2 --sweep size=128 "$@"
bench "$root/configs/tresnet-m.yaml" --sweep batch=2 --sweep size=128 "$@"
