#!/usr/bin/env bash
# The GPU check of convbench, on a GPU machine (through the device tool, with .gpu-deps carried:
# run scripts/gpu-deps.sh first, where apt works). Stages:
#
#   build     configure and build with the CUDA backend (Release, this GPU's architecture),
#             against the Debian packages in .gpu-deps/root, the cuDNN found on the machine
#             (the CUDA toolkit's, else PyTorch's wheel: site-packages/nvidia/cudnn) and the
#             python3 that holds PyTorch (the peer tests' interpreter). Incremental when the
#             build folder is already there; about 1-2 minutes from scratch on 16 cores.
#   test      the whole test suite except the GPU tests and the fresh-Debian checks (ctest);
#             a test that skips (a peer without PyTorch) fails the stage on a GPU machine
#   check     the GPU tests (suites Gpu*): every op and every config variant against the
#             reference backend (outputs and all gradients; 1e-5 float32, 3e-3 tf32, 1e-2
#             float16 / bfloat16), the risky cuDNN combinations, cudnnFind mode, allocator
#             statistics equal to the memory model, out of memory; a skipped GPU test fails it
#   memcheck  compute-sanitizer memcheck on `convbench compare --graph` of a tiny spec with every op kind
#   compare   convbench compare --device cuda --graph on every configs/*.yaml (JSON merged into one file;
#             compare.log ends with a table of eager vs graph-replay times and the SM clock per row),
#             and explain's first lines on the seed block: the limits the GPU measured of itself
#
# The device tool gives one command at most 10 minutes, and the next command may find a fresh
# machine. So the whole check is three calls, each with its own build, each meant to end within
# 8 minutes (every stage but the build runs under a time limit; what the limit cut off is said
# in the summary). Run them in this order, CONVBENCH_COMMIT set to the commit checked:
#
#   1. scripts/gpu-check.sh --stages "build check"
#   2. scripts/gpu-check.sh --stages "build test"
#   3. scripts/gpu-check.sh --stages "build memcheck compare"
#
# e.g. device run, carry [".gpu-deps"]:
#   CONVBENCH_COMMIT=<the commit, from `git rev-parse --short=12 HEAD` here> scripts/gpu-check.sh --stages "build check"
#
# Everything lands in one folder, $OUT when set (the device tool brings it back), else
# ./gpu-check-out: summary.md (GPU, driver, CUDA, cuDNN, commit, one line per stage with its
# verdict) and one log per stage, compare.json. At most 8 files, as the device tool returns.
#
# Usage: scripts/gpu-check.sh [--stages "build test check memcheck compare"] [--build-only]
#                             [--full-timing] [--budget SECONDS] [--jobs N]
#   --build-only   the build stage alone; works on a machine without a GPU
#   --full-timing  compare with convbench's default stopping rule (0.5 s and 10 samples per
#                  phase, up to 15 s); the default on the device is bounded: --min-time 0.2
#                  --timeout 2 per phase, and configs start only while the budget lasts
#   --budget S     seconds the compare stage may take in all (default 240)
# Stage time limits (seconds): check 330, test 330, memcheck 150 (CONVBENCH_GPU_CHECK_LIMIT_<STAGE>).
# The device tool copies the working tree without .git: give the commit as CONVBENCH_COMMIT=<hash>.
# Exit status: 0 when every stage run passed, 1 otherwise (2 for bad usage).

# The do_* stage functions are called through stage() by name.
# shellcheck disable=SC2317
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/gpu-check-lib.sh
. "$root/scripts/gpu-check-lib.sh"
stages="build test check memcheck compare"
full_timing=0
budget=240
jobs=$(nproc)
while [ $# -gt 0 ]; do
  case $1 in
    --stages) stages=$2; shift 2 ;;
    --build-only) stages=build; shift ;;
    --full-timing) full_timing=1; shift ;;
    --budget) budget=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    -h|--help) sed -n '2,/^# Exit status/p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "gpu-check: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
case $budget in ''|*[!0-9]*) echo "gpu-check: --budget takes whole seconds, got $budget" >&2; exit 2 ;; esac
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
# The python3 that holds PyTorch: the peer tests' interpreter (-DCONVBENCH_PYTHON), instead of
# the peer environment (-DCONVBENCH_PEER_ENV=OFF): the GPU machine cannot reach PyPI, and its own
# PyTorch is the CUDA peer.
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

# Runs one stage: its output goes to $out/<stage>.log, its line to the summary (with the
# verdict's last line for the stages that have one).
stage() {
  local name=$1 note="" status start
  shift
  log "$name ..."
  start=$(date +%s)
  if "$@" >"$out/$name.log" 2>&1; then status=passed; else status=FAILED; failed=1; fi
  case $name in
    check|test) note=$(sed -n 's/^verdict: //p' "$out/$name.log" | tail -1) ;;
    memcheck) note=$(grep -E 'ERROR SUMMARY|time limit' "$out/$name.log" | tail -1) ;;
    compare) note=$(grep -E '^compare: ' "$out/$name.log" | tail -1 | sed 's/^compare: //') ;;
  esac
  echo "| $name | $status${note:+ ($note)} | $(($(date +%s) - start)) | $name.log |" >>"$summary"
  log "$name: $status"
}

# Runs a command under a time limit (seconds), saying so when the limit cut it off.
limited() {
  local seconds=$1 rc
  shift
  timeout --signal=TERM --kill-after=10 "$seconds" "$@"
  rc=$?
  if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
    echo "gpu-check: time limit of ${seconds}s reached: the stage was cut off (raise CONVBENCH_GPU_CHECK_LIMIT_*)"
  fi
  return "$rc"
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
    -DCUDNN_INCLUDE_DIR="$cudnn_include" -DCUDNN_LIBRARY="$cudnn_library" \
    ${python:+-DCONVBENCH_PYTHON="$python"} -DCONVBENCH_PEER_ENV=OFF &&
    cmake --build "$build" -j "$jobs"
}

do_test() {
  local ctest_log=$build/gpu-check-ctest.log rc=0
  limited "${CONVBENCH_GPU_CHECK_LIMIT_TEST:-330}" \
    ctest --test-dir "$build" -E "$HOST_TEST_EXCLUDE" -j "$jobs" --timeout 300 --output-on-failure \
    >"$ctest_log" 2>&1 || rc=1
  cat "$ctest_log"
  # Why tests skipped, from ctest's full log (ctest prints no output of passing or skipped tests).
  grep -h -E '^SKIP: ' "$build"/Testing/Temporary/LastTest*.log 2>/dev/null | sort -u
  judge_ctest_log "$ctest_log" "$gpu_name" || rc=1
  return "$rc"
}

do_check() {
  local gtest_log=$build/gpu-check-gtest.log rc=0
  limited "${CONVBENCH_GPU_CHECK_LIMIT_CHECK:-330}" \
    "$build/tests/convbench_tests" --gtest_filter="$GPU_TEST_FILTER" --gtest_color=no >"$gtest_log" 2>&1 || rc=1
  cat "$gtest_log"
  judge_gtest_log "$gtest_log" "$gpu_name" || rc=1
  return "$rc"
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
  limited "${CONVBENCH_GPU_CHECK_LIMIT_MEMCHECK:-150}" \
    "$sanitizer" --tool memcheck --error-exitcode 1 --print-limit 20 \
    "$build/convbench" compare "$build/gpu-check-tiny.yaml" --device cuda -q --graph \
    --min-samples 2 --min-time 0 --timeout 1 --max-noise 1
}

do_compare() {
  local parts=$build/gpu-check-compare spec name rc=0 started skipped=() ran=0
  local timing=(--min-time 0.2 --timeout 2)
  [ "$full_timing" = 1 ] && timing=()
  rm -rf "$parts"
  mkdir -p "$parts"
  started=$(date +%s)
  for spec in "$root"/configs/*.yaml; do
    name=$(basename "$spec" .yaml)
    local left=$((budget - ($(date +%s) - started)))
    if [ "$left" -le 20 ]; then
      skipped+=("$name")
      continue
    fi
    echo "=== $name (${left}s of the budget left)"
    limited "$left" "$build/convbench" compare "$spec" --device cuda -q --graph "${timing[@]}" \
      --json "$parts/$name.json" || rc=1
    ran=$((ran + 1))
  done
  if ((${#skipped[@]})); then
    echo "gpu-check: compare budget of ${budget}s spent; not run: ${skipped[*]} (run them with --stages compare and a larger --budget)"
    rc=1
  fi
  # The GPU's own limits (a copy and a cuDNN product, backends/cuda/cuda_limits.hpp) next to its
  # datasheet: explain's first lines say which it used.
  echo "=== explain seed-blocks --memory-only (the limits the GPU measured of itself)"
  limited 90 "$build/convbench" explain "$root/configs/seed-blocks.yaml" --device cuda -q --memory-only \
    >"$parts/explain.txt" 2>&1 || rc=1
  head -4 "$parts/explain.txt"
  echo "compare: $ran configs run, ${#skipped[@]} left for want of time, timing $([ "$full_timing" = 1 ] && echo full || echo 'bounded (--min-time 0.2 --timeout 2)')"
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
# Eager against graph replay, and the SM clock around each row, for results/README.md.
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
