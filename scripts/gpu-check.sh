#!/usr/bin/env bash
# The GPU check of convbench, one command on a GPU machine (through the device tool, with
# .gpu-deps carried: run scripts/gpu-deps.sh first where apt works):
#
#   build     configure and build with the CUDA backend (Release, this GPU's architecture),
#             against the Debian packages in .gpu-deps/root and the cuDNN found on the machine
#             (the CUDA toolkit's, else PyTorch's wheel: site-packages/nvidia/cudnn)
#   test      the whole test suite except the CUDA tests (ctest)
#   check     the CUDA tests: every op and every config variant against the reference backend
#             (outputs and all gradients; 1e-5 float32, 3e-3 tf32, 1e-2 float16 / bfloat16),
#             cudnnFind mode, allocator statistics equal to the memory model, out of memory
#   memcheck  compute-sanitizer memcheck on `convbench compare --graph` of a tiny spec with every op kind
#   compare   convbench compare --device cuda --graph on every configs/*.yaml (JSON merged into one file;
#             compare.log ends with a table of eager vs graph-replay times and the SM clock per row)
#
# Everything lands in one folder, $OUT when set (the device tool brings it back), else
# ./gpu-check-out: summary.md (GPU, driver, CUDA, cuDNN, commit, one line per stage) and one log
# per stage, compare.json. At most 8 files, as the device tool returns.
#
# Usage: scripts/gpu-check.sh [--stages "build test check memcheck compare"] [--build-only]
#                             [--quick] [--jobs N]
#   --build-only  the build stage alone; works on a machine without a GPU
#   --quick       compare with a short measurement (--min-time 0.1 --timeout 3)
# The device tool copies the working tree without .git: give the commit as CONVBENCH_COMMIT=<hash>.
# One device call may run 10 minutes; when the whole check does not fit, split it across calls
# made while the machine is warm (its build folder stays):
#   scripts/gpu-check.sh --stages "build test check"  then  scripts/gpu-check.sh --stages "memcheck compare"
# Exit status: 0 when every stage run passed, 1 otherwise (2 for bad usage).

# The do_* stage functions are called through stage() by name.
# shellcheck disable=SC2317
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
stages="build test check memcheck compare"
quick=0
jobs=$(nproc)
while [ $# -gt 0 ]; do
  case $1 in
    --stages) stages=$2; shift 2 ;;
    --build-only) stages=build; shift ;;
    --quick) quick=1; shift ;;
    --jobs) jobs=$2; shift 2 ;;
    -h|--help) sed -n '2,/^# Exit status/p' "$0"; exit 0 ;;
    *) echo "gpu-check: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
for s in $stages; do
  case $s in build|test|check|memcheck|compare) ;; *) echo "gpu-check: unknown stage $s" >&2; exit 2 ;; esac
done

out=${OUT:-$root/gpu-check-out}
mkdir -p "$out"
build=${CONVBENCH_GPU_BUILD_DIR:-$root/build-gpu}
summary=$out/summary.md
failed=0

log() { echo "gpu-check: $*" >&2; }

# ---- the machine ------------------------------------------------------------------------------

nvcc=$(command -v nvcc || true)
[ -z "$nvcc" ] && [ -x /usr/local/cuda/bin/nvcc ] && nvcc=/usr/local/cuda/bin/nvcc
cuda_home=""
[ -n "$nvcc" ] && cuda_home=$(cd "$(dirname "$nvcc")/.." && pwd)
python=$(command -v python3 || true)

gpu_query() { nvidia-smi --query-gpu="$1" --format=csv,noheader 2>/dev/null | head -1; }
gpu_name=$(gpu_query name)
driver=$(gpu_query driver_version)
compute_cap=$(gpu_query compute_cap)
if [ -n "${CMAKE_CUDA_ARCHITECTURES:-}" ]; then
  arch=$CMAKE_CUDA_ARCHITECTURES
elif [ -n "$compute_cap" ]; then
  arch=${compute_cap/./}  # this GPU only: one device compilation per kernel file
else
  arch="80;90"
fi

# cuDNN: the toolkit's, else PyTorch's wheel (its lib has libcudnn.so.9 and no unversioned link).
cudnn_include="" cudnn_library="" cudnn_from=""
if [ -n "$cuda_home" ] && [ -f "$cuda_home/include/cudnn.h" ]; then
  for lib in "$cuda_home"/lib64/libcudnn.so "$cuda_home"/lib/libcudnn.so "$cuda_home"/lib64/libcudnn.so.9 \
             "$cuda_home"/lib/libcudnn.so.9; do
    if [ -f "$lib" ]; then cudnn_include=$cuda_home/include; cudnn_library=$lib; cudnn_from="CUDA toolkit"; break; fi
  done
fi
if [ -z "$cudnn_library" ] && [ -n "$python" ]; then
  wheel=$("$python" -c 'import nvidia.cudnn as m; print(list(m.__path__)[0])' 2>/dev/null || true)
  if [ -n "$wheel" ] && [ -f "$wheel/include/cudnn.h" ] && [ -f "$wheel/lib/libcudnn.so.9" ]; then
    cudnn_include=$wheel/include; cudnn_library=$wheel/lib/libcudnn.so.9; cudnn_from="PyTorch wheel"
  fi
fi
cudnn_version=""
if [ -n "$cudnn_include" ]; then
  cudnn_version=$(awk '/^#define CUDNN_(MAJOR|MINOR|PATCHLEVEL) /{v = v (v ? "." : "") $3} END {print v}' \
                  "$cudnn_include/cudnn_version.h")
fi

# Runtime libraries: the carried Debian ones, cuDNN's folder, and the CUDA wheels' folders
# (cuDNN loads cuBLASLt at run time).
deps=$root/.gpu-deps/root/usr
libpath=""
[ -d "$deps/lib/x86_64-linux-gnu" ] && libpath=$deps/lib/x86_64-linux-gnu
[ -n "$cudnn_library" ] && libpath=$libpath:$(dirname "$cudnn_library")
if [ -n "$python" ]; then
  wheel_libs=$("$python" -c 'import nvidia, os
for base in nvidia.__path__:
    for name in sorted(os.listdir(base)):
        lib = os.path.join(base, name, "lib")
        if os.path.isdir(lib): print(lib)' 2>/dev/null | paste -sd: - || true)
  [ -n "$wheel_libs" ] && libpath=$libpath:$wheel_libs
fi
export LD_LIBRARY_PATH=${libpath#:}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

# The device tool copies the working tree without .git: pass the commit in CONVBENCH_COMMIT there.
commit=${CONVBENCH_COMMIT:-}
if [ -z "$commit" ]; then
  commit=$(git -C "$root" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
  [ -n "$(git -C "$root" status --porcelain --untracked-files=no 2>/dev/null)" ] && commit="$commit-dirty"
fi

# ---- summary ----------------------------------------------------------------------------------

{
  echo "# convbench GPU check"
  echo
  echo "| | |"
  echo "|---|---|"
  echo "| date | $(date -u +%Y-%m-%dT%H:%M:%SZ) |"
  echo "| commit | $commit |"
  echo "| GPU | ${gpu_name:-none found} (compute capability ${compute_cap:-?}) |"
  echo "| driver | ${driver:-?} |"
  echo "| CUDA | $([ -n "$nvcc" ] && "$nvcc" --version | sed -n 's/.*release \([0-9.]*\).*/\1/p' | head -1) ($nvcc) |"
  echo "| cuDNN | ${cudnn_version:-not found} (${cudnn_from:-?}: ${cudnn_library:-}) |"
  echo "| compiler | $(c++ --version 2>/dev/null | head -1) |"
  echo "| CMake | $(cmake --version 2>/dev/null | head -1) |"
  echo "| architectures | $arch |"
  echo "| Debian packages | $([ -d "$deps" ] && echo "$root/.gpu-deps (carried)" || echo "system") |"
  echo
  echo "| stage | status | seconds | log |"
  echo "|---|---|---|---|"
} >"$summary"

# Runs one stage: its output goes to $out/<stage>.log, its line to the summary.
stage() {
  local name=$1 note="" status start
  shift
  log "$name ..."
  start=$(date +%s)
  if "$@" >"$out/$name.log" 2>&1; then status=passed; else status=FAILED; failed=1; fi
  case $name in
    check)
      note=$(sed -n -E 's/^\[  (PASSED|FAILED|SKIPPED) +\] ([0-9]+) tests?.*/\2 \1/p' "$out/$name.log" |
             tr '[:upper:]' '[:lower:]' | paste -sd, -) ;;
    test) note=$(grep -E 'tests passed|tests failed' "$out/$name.log" | tail -1) ;;
    memcheck) note=$(grep -E 'ERROR SUMMARY' "$out/$name.log" | tail -1) ;;
  esac
  echo "| $name | $status${note:+ ($note)} | $(($(date +%s) - start)) | $name.log |" >>"$summary"
  log "$name: $status"
}

# ---- stages -----------------------------------------------------------------------------------

do_build() {
  [ -n "$nvcc" ] || { echo "no nvcc on this machine"; return 1; }
  [ -n "$cudnn_library" ] || { echo "no cuDNN: neither $cuda_home/include/cudnn.h nor PyTorch's nvidia.cudnn"; return 1; }
  command -v c++ >/dev/null || { echo "no C++ compiler (c++) on this machine"; return 1; }
  local generator=()
  command -v ninja >/dev/null && generator=(-G Ninja)
  local prefix=()
  [ -d "$deps" ] && prefix=(-DCMAKE_PREFIX_PATH="$deps")
  if [ -f "$build/CMakeCache.txt" ] && ! grep -q "^CMAKE_GENERATOR:INTERNAL=${generator[1]:-Unix Makefiles}$" "$build/CMakeCache.txt"; then
    rm -rf "$build"  # made by another generator
  fi
  echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
  cmake -S "$root" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DCONVBENCH_CUDA=ON \
    "${prefix[@]}" -DCMAKE_CUDA_COMPILER="$nvcc" -DCMAKE_CUDA_ARCHITECTURES="$arch" \
    -DCUDNN_INCLUDE_DIR="$cudnn_include" -DCUDNN_LIBRARY="$cudnn_library" &&
    cmake --build "$build" -j "$jobs"
}

do_test() {
  ctest --test-dir "$build" -E '^(Cuda|Cudnn)' -j "$jobs" --timeout 600 --output-on-failure
}

do_check() {
  "$build/tests/convbench_tests" --gtest_filter='Cuda*:Cudnn*' --gtest_color=no || return 1
  # On a GPU machine a skipped GPU test means the GPU was not usable: that is a failure here.
  if [ -n "$gpu_name" ] && grep -qE '^\[  SKIPPED \] [0-9]+ test' "$out/check.log"; then
    echo "gpu-check: GPU tests skipped although nvidia-smi reports $gpu_name"
    return 1
  fi
}

tiny_spec() {
  cat <<'EOF'
# gpu-check: every op kind at a tiny size, in both layouts and two dtypes, for compute-sanitizer.
name: gpu-check-tiny
blocks:
  - name: tiny
    dims: 2
    batch: 2
    in_channels: 8
    out_channels: 16
    size: 16
    kernel: 3
    padding: same
    norm: batch
    act: relu
    mode: train
    variants:
      - standard
      - {kind: bottleneck, ratio: 2}
      - separable
      - {kind: grouped, groups: 2}
      - kind: custom
        name: every-op
        ops:
          - {op: conv, name: a, inputs: input, out_channels: 8}
          - {op: group_norm, name: gn, inputs: a, norm_groups: 4}
          - {op: leaky_relu, name: lr, inputs: gn}
          - {op: max_pool, name: mp, inputs: lr, kernel: 3, stride: 2, padding: 1}
          - {op: conv_transpose, name: up, inputs: mp, out_channels: 8, stride: 2, padding: 1, output_padding: 1}
          - {op: avg_pool, name: ap, inputs: a, kernel: 2}
          - {op: upsample, name: us, inputs: ap, scale: 2}
          - {op: sub, name: d, inputs: [up, us]}
          - {op: dropout, name: dr, inputs: d, p: 0.2}
          - {op: concat, name: cat, inputs: [dr, a]}
          - {op: batch_norm, name: bn, inputs: cat}
          - {op: relu, name: r, inputs: bn}
          - {op: add, name: out, inputs: [r, cat]}
sweep:
  layout: [channels_first, channels_last]
  dtype: [float32, bfloat16]
EOF
}

do_memcheck() {
  local sanitizer
  sanitizer=$(command -v compute-sanitizer || echo "$cuda_home/bin/compute-sanitizer")
  [ -x "$sanitizer" ] || { echo "compute-sanitizer not found"; return 1; }
  tiny_spec >"$build/gpu-check-tiny.yaml"
  "$sanitizer" --tool memcheck --error-exitcode 1 --print-limit 20 \
    "$build/convbench" compare "$build/gpu-check-tiny.yaml" --device cuda -q --graph \
    --min-samples 2 --min-time 0 --timeout 5 --max-noise 1
}

do_compare() {
  local parts=$build/gpu-check-compare spec name rc=0
  local timing=()
  [ "$quick" = 1 ] && timing=(--min-time 0.1 --timeout 3)
  rm -rf "$parts"
  mkdir -p "$parts"
  for spec in "$root"/configs/*.yaml; do
    name=$(basename "$spec" .yaml)
    echo "=== $name"
    "$build/convbench" compare "$spec" --device cuda -q --graph "${timing[@]}" --json "$parts/$name.json" || rc=1
  done
  # One file for all configs: {"<config>": <its results JSON>, ...}
  "$python" - "$parts" "$out/compare.json" <<'EOF' || rc=1
import json, os, sys
parts, target = sys.argv[1], sys.argv[2]
merged = {}
for name in sorted(os.listdir(parts)):
    if name.endswith(".json"):
        with open(os.path.join(parts, name)) as f:
            merged[name[:-5]] = json.load(f)
with open(target, "w") as f:
    json.dump(merged, f, indent=1)
print(f"merged {len(merged)} result files into {target}")
# Eager against graph replay, and the SM clock around each row, for the results README.
print("\n| config | block [point] / variant | eager ms | graph ms | graph / eager | SM clock MHz |")
print("|---|---|---|---|---|---|")
for config, doc in merged.items():
    for r in doc["results"]:
        t = r.get("time_ms", {})
        eager = t.get("step" if r["mode"] == "train" else "forward", {}).get("median")
        graph = t.get("graph", {}).get("median")
        clock = r.get("clock")
        where = r["block"] + (f" [{r['point_label']}]" if r.get("point_label") else "") + " / " + r["variant"]
        ratio = f"{graph / eager:.3f}" if eager and graph else "-"
        clocks = f"{clock['before_mhz']:.0f} -> {clock['after_mhz']:.0f}" if clock else "-"
        status = "" if r.get("status") == "ok" else f" ({r.get('status')}: {r.get('message', '')[:60]})"
        print(f"| {config} | {where}{status} | {'-' if eager is None else f'{eager:.3f}'} | "
              f"{'-' if graph is None else f'{graph:.3f}'} | {ratio} | {clocks} |")
        if r.get("graph_message"):
            print(f"|   | graph: {r['graph_message'][:120]} | | | | |")
EOF
  return "$rc"
}

for s in $stages; do
  if [ "$s" != build ] && [ ! -x "$build/convbench" ]; then
    echo "| $s | not run: no build in $build | 0 | |" >>"$summary"
    failed=1
    continue
  fi
  stage "$s" "do_$s"
done

echo >>"$summary"
echo "Written by scripts/gpu-check.sh from this run alone; the logs beside it hold the details." >>"$summary"
log "summary: $summary"
cat "$summary" >&2
exit $failed
