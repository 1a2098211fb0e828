#!/usr/bin/env bash
# The GPU check of convbench, on a GPU machine lent through the device tool (run
# scripts/gpu-deps.sh first, here where apt works, and carry .gpu-deps). Stages:
#
#   build      configure and build with the CUDA backend (Release, this GPU's architecture,
#              CONVBENCH_WERROR=OFF: a newer compiler's new warning is listed in build.log, not
#              fatal), against the Debian packages in .gpu-deps/root, the cuDNN found on the
#              machine (the CUDA toolkit's, else PyTorch's wheel) and the python3 that holds
#              PyTorch. Incremental when the build folder is still there (a warm machine).
#              CONVBENCH_POSTGRESQL=OFF: libpq and its own libraries (Kerberos, LDAP, OpenSSL) are
#              not carried, and the GPU check does not use a team's history server; nor
#              CONVBENCH_ONNX (libonnx and protobuf are not carried either).
#   check      the GPU tests (suites Gpu*, or CONVBENCH_GPU_TEST_FILTER): every op and config
#              variant against the reference backend, the risky cuDNN combinations, cudnnFind,
#              allocator statistics equal to the memory model, out of memory, replay bit for bit;
#              a skipped GPU test fails it. Two passes, each within what is left of the call: the
#              suites a GPU has run before, then those none has (gpu-check-lib.sh lists them).
#              check.log is the whole GoogleTest output, written as it runs, then each suite's
#              seconds and the slowest tests (to size a rerun).
#   answers    the seeds' questions against PyTorch eager on the same GPU (report --against):
#              the seed block (float32, bfloat16, both layouts), seed 004 as it was measured
#              (configs/seed004-amp.yaml, amp_float16, both layouts), seed 001's depthwise-
#              separable blocks (configs/mobilenet-separable.yaml, float32 and bfloat16) and
#              torchvision's efficient blocks (configs/efficient-blocks.yaml, float32)
#   peers      convbench against PyTorch on the same GPU: seed-blocks (float32, tf32, bfloat16 x
#              both layouts), resnet50-stages and channels-last (the three dtypes): times, peak
#              memory (max_memory_allocated) and counts through `report --against`; then
#              bench_vs_torch.py on the seed block, both layouts: convbench vs PyTorch eager vs
#              torch.compile, interleaved rounds (peer/bench.py says how the spans and TF32 are
#              kept the same). Timing bounded to a noise target GPU timing reaches (2%).
#   seeds      the seeds at full size: VBNet (6,1,32,128,128) standard vs bottleneck and
#              explain's reasons; seed 001's networks against ResNet-50, beside torchvision's
#              models (--peer torch); the SubtractedConv ResNet-50 at 224x224, batch 16 (does it fit,
#              what does the fold buy); seed 004's channels-last ratio (resnet50-stages, float32).
#   precision  reduced precision and where the time goes: the seed block and the ResNet-50
#              stages in float32, tf32, bfloat16 and float16, both layouts, with --per-op 3;
#              then seed 004 as it was measured (configs/seed004-amp.yaml: amp_float16 with loss
#              scaling, channels-first against channels-last, stage blocks and the network).
#   test       the whole test suite but the GPU tests and the fresh-Debian checks (ctest); a
#              test that skips (a peer without PyTorch) fails the stage on a GPU machine
#   memcheck   compute-sanitizer memcheck on `convbench compare --graph` of a tiny spec with every op kind
#   compare    convbench compare --device cuda --graph on every configs/*.yaml, and explain's
#              first lines on the seed block: the limits the GPU measured of itself
#   ab         the GPU-speed switches, each against the current path in one run (interleaved:
#              A, B, A, B): --depthwise-conv own against cudnn on the seed block's and
#              mobilenet-separable's separable variants (float32 and bfloat16, both layouts,
#              --per-op 3), --cudnn-api graph against legacy on the seed block (same sweeps),
#              --conv-fusion conv_act against none on configs/repvgg.yaml's folded block in
#              inference (inplace_act, float32 and float16, both layouts), --conv-fusion
#              conv_bn_stats against none on the seed block in training (standard and
#              bottleneck, float32 and bfloat16, both layouts, --per-op 3), then
#              `convbench diff` of each second round (SLOWER/FASTER per row, in ab.log)
#
# A session has 15 minutes of device time in all, a machine's start (a minute or two) included,
# and one command at most 10 minutes. The work is two calls, issued back to back (a machine stays
# warm 30 s after a call, keeping the build), each ending by itself within its call's seconds
# (--call-seconds) whatever happens: the build has no limit of its own, and every stage after it
# is limited to the lesser of its own limit and what is left of the call, less 15 s to write the
# summary. The device tool's timeout_s is the call's seconds plus 15 s:
#
#   call 1 (345 s): scripts/gpu-check.sh --call 1    build, check
#   call 2 (300 s): scripts/gpu-check.sh --call 2    build, answers
#
# As device tool calls, from this repository's root here, after `scripts/gpu-deps.sh`:
#
#   run  command: "CONVBENCH_COMMIT=<commit> scripts/gpu-check.sh --call 1"
#        carry: [".gpu-deps"]   timeout_s: 360
#   run  command: "CONVBENCH_COMMIT=<commit> scripts/gpu-check.sh --call 2"
#        carry: [".gpu-deps"]   timeout_s: 315
#
# with <commit> from `git rev-parse --short=12 HEAD` (the tool copies the tree without .git):
# 1.5 min of start, 6 + 5.25 min of calls, 2 min spare for one rerun of what failed, alone,
# with CONVBENCH_GPU_TEST_FILTER='Suite.Test:...' and --stages "build check" --call-seconds S.
# The other stages (peers, seeds, precision, ab, test, memcheck, compare) are for a longer loan
# or a later session, through --stages.
#
# Everything lands in one folder, $OUT when set (the device tool brings it back), else
# ./gpu-check-out: summary.md (GPU, driver, CUDA, cuDNN, PyTorch, commit, one line per stage with
# its verdict), one log per stage, and one STAGE.tar.gz of a stage's JSON files: at most 8 files
# a call, as the device tool returns. Commit all of it under results/gpu-<date>-<gpu>/.
#
# Usage: scripts/gpu-check.sh [--call 1|2] [--stages "build check answers peers ..."]
#                             [--call-seconds S] [--build-only] [--full-timing] [--budget SECONDS]
#                             [--jobs N]
#   --call N       the stages and seconds of call N above
#   --call-seconds S  the seconds this call may take in all (default: the call's; none with
#                  --stages): the stages after the build share what the build leaves
#   --build-only   the build stage alone; works on a machine without a GPU
#   --full-timing  compare with convbench's default stopping rule (0.5 s and 10 samples per
#                  phase, up to 15 s); the default on the device is bounded: --min-time 0.1
#                  --min-samples 10 --max-noise 0.02 --timeout 1 per phase
#   --budget S     seconds the compare stage may take in all (default 240)
# Stage time limits in seconds, each overridable as CONVBENCH_GPU_CHECK_LIMIT_<STAGE>: check 300,
# answers 270, peers 300, seeds 200, precision 150, test 330, memcheck 150, ab 300 (each cut to
# what is left of the call).
# Exit status: 0 when every stage run passed, 1 otherwise (2 for bad usage).

# The do_* stage functions are called through stage() by name.
# shellcheck disable=SC2317
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/gpu-check-lib.sh
. "$root/scripts/gpu-check-lib.sh"
stages="build check"  # call 1
call=1 call_seconds=""
full_timing=0
budget=240
jobs=$(nproc)
while [ $# -gt 0 ]; do
  case $1 in
    --call)
      case ${2:-} in
        1) stages="build check" call=1 ;;
        2) stages="build answers" call=2 ;;
        *) echo "gpu-check: --call takes 1 or 2, got '${2:-}' (the other stages run through --stages)" >&2; exit 2 ;;
      esac
      shift 2 ;;
    --stages) stages=$2; call=""; shift 2 ;;
    --call-seconds) call_seconds=$2; shift 2 ;;
    --build-only) stages=build; shift ;;
    --full-timing) full_timing=1; shift ;;
    --budget) budget=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    -h|--help) sed -n '2,/^# Exit status/p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "gpu-check: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
case $budget in ''|*[!0-9]*) echo "gpu-check: --budget takes whole seconds, got $budget" >&2; exit 2 ;; esac
if [ -z "$call_seconds" ]; then
  case $call in 1) call_seconds=345 ;; 2) call_seconds=300 ;; *) call_seconds=86400 ;; esac
fi
case $call_seconds in ''|*[!0-9]*) echo "gpu-check: --call-seconds takes whole seconds, got $call_seconds" >&2; exit 2 ;; esac
call_started=$(date +%s)
echo "gpu-check: call of $call_seconds s: $stages" >&2
for s in $stages; do
  case $s in build|check|answers|peers|seeds|precision|test|memcheck|compare|ab) ;; *) echo "gpu-check: unknown stage $s" >&2; exit 2 ;; esac
done

# Bounded timing for a lent GPU: GPU eager steps vary by 1-3% between samples, so convbench's
# default 0.5% target is unreachable there and every phase would run to its timeout.
bounded_timing=(--min-time 0.1 --min-samples 10 --max-noise 0.02 --timeout 1)
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
  echo "| PyTorch | $([ -n "$python" ] && "$python" -c 'import torch; print(torch.__version__, "CUDA", torch.version.cuda, "cuDNN", torch.backends.cudnn.version())' 2>/dev/null || echo 'not importable') ($python) |"
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
    check|test|answers|peers|seeds|precision|ab) note=$(sed -n 's/^verdict: //p' "$out/$name.log" | tail -1) ;;
    memcheck) note=$(grep -E 'ERROR SUMMARY|time limit' "$out/$name.log" | tail -1) ;;
    compare) note=$(grep -E '^compare: ' "$out/$name.log" | tail -1 | sed 's/^compare: //') ;;
  esac
  echo "| $name | $status${note:+ ($note)} | $(($(date +%s) - start)) | $name.log |" >>"$summary"
  log "$name: $status"
}

# Seconds left of the call, less 15 s to write the summary after the last stage.
call_left() { echo $((call_seconds - ($(date +%s) - call_started) - 15)); }

# Runs a command under a time limit (seconds), cut to what is left of the call, saying so when
# the limit cut it off.
limited() {
  local seconds=$1 rc left
  shift
  left=$(call_left)
  [ "$left" -lt "$seconds" ] && seconds=$left
  # tests/gpu_check_test.sh: print the commands of the stages, to check their flags on a CPU.
  if [ -n "${CONVBENCH_GPU_CHECK_DRY_RUN:-}" ]; then
    echo "within: $seconds"
    printf 'would run:'
    printf ' %q' "$@"
    echo
    return 0
  fi
  if [ "$seconds" -lt 1 ]; then  # timeout 0 would mean no limit at all
    echo "gpu-check: no time left of the stage's limit: not run: $*"
    return 124
  fi
  timeout --signal=TERM --kill-after=10 "$seconds" "$@"
  rc=$?
  if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
    echo "gpu-check: time limit of ${seconds}s reached: the stage was cut off (raise CONVBENCH_GPU_CHECK_LIMIT_*)"
  fi
  return "$rc"
}

# ---- stages -----------------------------------------------------------------------------------

do_build() {
  if [ -n "${CONVBENCH_GPU_CHECK_DRY_RUN:-}" ]; then
    echo "would build in $build"
    return 0
  fi
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
    ${python:+-DCONVBENCH_PYTHON="$python"} -DCONVBENCH_PEER_ENV=OFF -DCONVBENCH_WERROR=OFF \
    -DCONVBENCH_POSTGRESQL=OFF -DCONVBENCH_ONNX=OFF &&
    cmake --build "$build" -j "$jobs" 2>&1 | tee "$build/gpu-check-build.log"
  local rc=${PIPESTATUS[0]}
  # -Werror is off here (a newer compiler's new warning must not cost a call); CI keeps it on.
  # Every warning this compiler gave, to fix in the next commit.
  local warnings
  warnings=$(grep -E ': warning: ' "$build/gpu-check-build.log" | sort -u)
  echo "compiler warnings: $(grep -c . <<<"$warnings" || true)"
  [ -n "$warnings" ] && echo "$warnings"
  return "$rc"
}

# The logs are written into $out as the commands run (the stage's own log is its standard
# output), never copied at the end: a call cut off by the device tool still brings them back.
# The judges read a copy, since what they print goes to the same log.
do_test() {
  local copy=$build/gpu-check-ctest.log rc=0
  limited "${CONVBENCH_GPU_CHECK_LIMIT_TEST:-330}" \
    ctest --test-dir "$build" -E "$HOST_TEST_EXCLUDE" -j "$jobs" --timeout 300 --output-on-failure || rc=1
  cp "$out/test.log" "$copy"
  # Why tests skipped, from ctest's full log (ctest prints no output of passing or skipped tests).
  grep -h -E '^SKIP: ' "$build"/Testing/Temporary/LastTest*.log 2>/dev/null | sort -u
  judge_ctest_log "$copy" "$gpu_name" || rc=1
  return "$rc"
}

# Each suite's seconds and the ten slowest tests of a GoogleTest log, to size a rerun.
test_times() {
  echo "=== seconds per suite"
  sed -n -E 's/^\[----------\] ([0-9]+) tests? from ([^ ]+) \(([0-9]+) ms total\)$/\2 \1 \3/p' "$1" |
    awk '{ printf "%8.1f s  %3d tests  %s\n", $3 / 1000, $2, $1 }' | sort -rn
  echo "=== the slowest tests"
  sed -n -E 's/^\[ +(OK|FAILED|SKIPPED) +\] ([^ ]+) \(([0-9]+) ms\)$/\3 \2 \1/p' "$1" |
    sort -rn | head -10 | awk '{ printf "%8.1f s  %s (%s)\n", $1 / 1000, $2, $3 }'
}

do_check() {
  local copy=$build/gpu-check-gtest.log rc=0 pass filters=("$GPU_TEST_FILTER") limit
  [ -z "${CONVBENCH_GPU_TEST_FILTER:-}" ] && filters=("$GPU_SUITES_RUN_BEFORE" "$GPU_SUITES_NEVER_RUN")
  limit=${CONVBENCH_GPU_CHECK_LIMIT_CHECK:-300}
  local started
  started=$(date +%s)
  for pass in "${filters[@]}"; do
    echo "=== GoogleTest --gtest_filter=$pass ($(left_of "$started" "$limit") s of the stage, $(call_left) s of the call left)"
    limited "$(left_of "$started" "$limit")" \
      "$build/tests/convbench_tests" --gtest_filter="$pass" --gtest_color=no 2>&1 || rc=1
  done
  cp "$out/check.log" "$copy"
  test_times "$copy"
  judge_gtest_log "$copy" "$gpu_name" || rc=1
  return "$rc"
}

# Seconds left of a stage's limit that started at $1.
left_of() { echo $(($2 - ($(date +%s) - $1))); }

# Packs a stage's JSON files into $out/STAGE.tar.gz (one file: the device tool returns 8 a call).
pack() {
  local stage=$1 dir=$2
  (cd "$dir" && find . -name '*.json' -o -name '*.md' -o -name '*.txt' | sort | tar -czf "$out/$stage.tar.gz" -T -) &&
    echo "packed $(tar -tzf "$out/$stage.tar.gz" | wc -l) files into $stage.tar.gz"
}

# One spec on both engines with the same sweeps and stopping rule: convbench compare --device
# cuda, then the peer (torch_peer.py, PyTorch eager on the same GPU), then report --against (times,
# peak memory against max_memory_allocated, counts). peers_one DIR NAME SECONDS SPEC [--sweep ...]
peers_one() {
  local dir=$1 name=$2 seconds=$3 spec=$4 rc=0
  shift 4
  echo "=== $name: convbench"
  limited $((seconds / 2)) "$build/convbench" compare "$spec" --device cuda -q "$@" "${bounded_timing[@]}" \
    --json "$dir/$name.convbench.json" || rc=1
  echo "=== $name: PyTorch eager (torch_peer.py)"
  limited $((seconds / 2)) "$python" "$root/scripts/torch_peer.py" "$spec" --device cuda --convbench "$build/convbench" \
    "$@" "${bounded_timing[@]}" --json "$dir/$name.pytorch.json" || rc=1
  if [ -f "$dir/$name.convbench.json" ] && [ -f "$dir/$name.pytorch.json" ]; then
    "$build/convbench" report "$dir/$name.convbench.json" --against "$dir/$name.pytorch.json" \
      >"$dir/$name.against.txt" 2>&1 || rc=1
    cat "$dir/$name.against.txt"
  fi
  return "$rc"
}

do_peers() {
  local dir=$build/gpu-check-peers limit=${CONVBENCH_GPU_CHECK_LIMIT_PEERS:-300} started rc=0 left
  started=$(date +%s)
  rm -rf "$dir" && mkdir -p "$dir"
  local dtypes=(--sweep dtype=float32,tf32,bfloat16)
  peers_one "$dir" seed-blocks 70 "$root/configs/seed-blocks.yaml" "${dtypes[@]}" \
    --sweep layout=channels_first,channels_last || rc=1
  peers_one "$dir" resnet50-stages 70 "$root/configs/resnet50-stages.yaml" "${dtypes[@]}" || rc=1
  peers_one "$dir" channels-last 50 "$root/configs/channels-last.yaml" "${dtypes[@]}" || rc=1
  left=$(left_of "$started" "$limit")
  echo "=== seed block: convbench vs PyTorch eager vs torch.compile, interleaved (${left}s left)"
  if [ "$left" -gt 30 ]; then
    limited "$left" "$python" "$root/scripts/bench_vs_torch.py" "$root/configs/seed-blocks.yaml" --device cuda \
      --convbench "$build/convbench" --sweep layout=channels_first,channels_last --rounds 2 --warmup 3 \
      "${bounded_timing[@]}" --out "$dir" || rc=1
  else
    echo "not run: the stage's limit of ${limit}s is nearly spent"
    rc=1
  fi
  pack peers "$dir" || rc=1
  echo "verdict: $([ "$rc" = 0 ] && echo passed || echo FAILED) ($(ls "$dir"/*.against.txt 2>/dev/null | wc -l) specs against PyTorch)"
  return "$rc"
}

# The seeds' questions against PyTorch eager on the same GPU, the second call's work: the seed
# block (seeds 000 and 003), seed 004 as measured (amp_float16, both layouts), seed 001's
# depthwise-separable blocks and torchvision's efficient blocks; each spec gets its share of what
# is left.
do_answers() {
  local dir=$build/gpu-check-answers limit=${CONVBENCH_GPU_CHECK_LIMIT_ANSWERS:-270} started rc=0 left
  started=$(date +%s)
  rm -rf "$dir" && mkdir -p "$dir"
  local dtypes=(--sweep dtype=float32,bfloat16)
  left=$(left_of "$started" "$limit")
  peers_one "$dir" seed-blocks $((left * 2 / 5)) "$root/configs/seed-blocks.yaml" "${dtypes[@]}" \
    --sweep layout=channels_first,channels_last || rc=1
  left=$(left_of "$started" "$limit")
  peers_one "$dir" seed004-amp $((left * 3 / 5)) "$root/configs/seed004-amp.yaml" || rc=1
  left=$(left_of "$started" "$limit")
  peers_one "$dir" mobilenet-separable $((left / 2)) "$root/configs/mobilenet-separable.yaml" "${dtypes[@]}" || rc=1
  # Seed 001 at block scale: torchvision's efficient blocks (MBConv, MobileNetV2/V3, FusedMBConv,
  # ConvNeXt, ShuffleNetV2, DenseNet) beside a standard conv, float32.
  left=$(left_of "$started" "$limit")
  peers_one "$dir" efficient-blocks "$left" "$root/configs/efficient-blocks.yaml" || rc=1
  pack answers "$dir" || rc=1
  echo "verdict: $([ "$rc" = 0 ] && echo passed || echo FAILED) ($(ls "$dir"/*.against.txt 2>/dev/null | wc -l) of 4 specs against PyTorch)"
  return "$rc"
}

do_seeds() {
  local dir=$build/gpu-check-seeds limit=${CONVBENCH_GPU_CHECK_LIMIT_SEEDS:-200} started rc=0
  started=$(date +%s)
  rm -rf "$dir" && mkdir -p "$dir"
  # Seed 000: VBNet at the post's size, standard vs the post's bottleneck, and why.
  echo "=== seed 000: VBNet (6,1,32,128,128)"
  limited $(($(left_of "$started" "$limit") / 2)) "$build/convbench" compare "$root/configs/vbnet.yaml" --device cuda \
    -q --filter '^vbnet/' --explain "${bounded_timing[@]}" --json "$dir/vbnet.json" || rc=1
  # Seed 001: EfficientNet-B0, MobileNetV2, MobileNetV3-Large and RegNetY-400MF against ResNet-50
  # at 224x224, batch 16, each beside torchvision's own model in PyTorch eager on the same GPU.
  peers_one "$dir" seed001 $(($(left_of "$started" "$limit") / 2)) "$root/configs/seed001-efficient-nets.yaml" || rc=1
  # Seed 002: the SubtractedConv ResNet-50 at 224x224, batch 16, and its fold.
  echo "=== seed 002: SubtractedConv ResNet-50 (16,3,224,224)"
  limited $(($(left_of "$started" "$limit") * 2 / 3)) "$build/convbench" compare "$root/configs/resnet50.yaml" \
    --device cuda -q "${bounded_timing[@]}" --json "$dir/resnet50.json" || rc=1
  # Seed 004: channels-last against channels-first on the ResNet-50 stages, float32.
  echo "=== seed 004: ResNet-50 stages, channels-last vs channels-first"
  limited "$(left_of "$started" "$limit")" "$build/convbench" compare "$root/configs/resnet50-stages.yaml" \
    --device cuda -q "${bounded_timing[@]}" --json "$dir/resnet50-stages.json" || rc=1
  pack seeds "$dir" || rc=1
  echo "verdict: $([ "$rc" = 0 ] && echo passed || echo FAILED)"
  return "$rc"
}

do_precision() {
  local dir=$build/gpu-check-precision limit=${CONVBENCH_GPU_CHECK_LIMIT_PRECISION:-150} started rc=0 spec
  started=$(date +%s)
  rm -rf "$dir" && mkdir -p "$dir"
  local div=3  # the seed block a third of what is left, the stages half the rest, seed 004 the rest
  for spec in seed-blocks resnet50-stages; do
    echo "=== $spec: four dtypes, both layouts, --per-op 3"
    limited $(($(left_of "$started" "$limit") / div)) \
      "$build/convbench" compare "$root/configs/$spec.yaml" --device cuda -q --per-op 3 \
      --sweep dtype=float32,tf32,bfloat16,float16 --sweep layout=channels_first,channels_last \
      "${bounded_timing[@]}" --json "$dir/$spec.json" || rc=1
    div=2
  done
  # Seed 004's headline (775 -> 1012 img/s, +22% from channels-last) is an AMP measurement.
  echo "=== seed 004 under amp_float16: channels-first vs channels-last, --per-op 3"
  limited "$(left_of "$started" "$limit")" "$build/convbench" compare "$root/configs/seed004-amp.yaml" \
    --device cuda -q --per-op 3 "${bounded_timing[@]}" --json "$dir/seed004-amp.json" || rc=1
  pack precision "$dir" || rc=1
  echo "verdict: $([ "$rc" = 0 ] && echo passed || echo FAILED)"
  return "$rc"
}

# Issue 34's switches, each against the current path in one run. Rounds interleave the two
# paths (cudnn, own, cudnn, own), so a drift of the GPU's clock reaches both; the second round's
# pair is diffed (the first warms the GPU and the algorithm caches).
do_ab() {
  local dir=$build/gpu-check-ab limit=${CONVBENCH_GPU_CHECK_LIMIT_AB:-300} started rc=0 round path api fusion runs=20
  started=$(date +%s)
  rm -rf "$dir" && mkdir -p "$dir"
  echo "=== --depthwise-conv own against cudnn: separable variants, --per-op 3"
  for round in 1 2; do
    for path in cudnn own; do
      limited $(($(left_of "$started" "$limit") / runs)) "$build/convbench" compare "$root/configs/seed-blocks.yaml" \
        --device cuda -q --filter separable --depthwise-conv "$path" --per-op 3 --sweep dtype=float32,bfloat16 \
        --sweep layout=channels_first,channels_last "${bounded_timing[@]}" \
        --json "$dir/seed-separable.$path.$round.json" || rc=1
      runs=$((runs - 1))
      limited $(($(left_of "$started" "$limit") / runs)) "$build/convbench" compare \
        "$root/configs/mobilenet-separable.yaml" --device cuda -q --filter separable --depthwise-conv "$path" \
        --per-op 3 --sweep layout=channels_first,channels_last "${bounded_timing[@]}" \
        --json "$dir/mobilenet-separable.$path.$round.json" || rc=1
      runs=$((runs - 1))
    done
  done
  echo "=== --cudnn-api graph against legacy: the seed block, float32 and bfloat16, both layouts"
  for round in 1 2; do
    for api in legacy graph; do
      limited $(($(left_of "$started" "$limit") / runs)) "$build/convbench" compare "$root/configs/seed-blocks.yaml" \
        --device cuda -q --cudnn-api "$api" --sweep dtype=float32,bfloat16 \
        --sweep layout=channels_first,channels_last "${bounded_timing[@]}" --json "$dir/seed-api.$api.$round.json" || rc=1
      runs=$((runs - 1))
    done
  done
  # Inference where the fused epilogue applies: RepVGG's folded block (one 3x3 conv with bias,
  # then ReLU) with the ReLU in place, both on the graph API.
  echo "=== --conv-fusion conv_act against none: folded RepVGG in inference, inplace_act, float32 and float16, both layouts"
  for round in 1 2; do
    for fusion in none conv_act; do
      limited $(($(left_of "$started" "$limit") / runs)) "$build/convbench" compare "$root/configs/repvgg.yaml" \
        --device cuda -q --filter folded --cudnn-api graph --conv-fusion "$fusion" --per-op 3 \
        --sweep memory_policy=inplace_act --sweep dtype=float32,float16 --sweep layout=channels_first,channels_last \
        "${bounded_timing[@]}" --json "$dir/repvgg-fusion.$fusion.$round.json" || rc=1
      runs=$((runs - 1))
    done
  done
  # Training where the conv writes its batch norm's sums: the seed block's conv -> BatchNorm3d
  # pairs (the separable variant's depthwise conv runs convbench's kernels: not fused).
  echo "=== --conv-fusion conv_bn_stats against none: the seed block in training, float32 and bfloat16, both layouts"
  for round in 1 2; do
    for fusion in none conv_bn_stats; do
      limited $(($(left_of "$started" "$limit") / runs)) "$build/convbench" compare "$root/configs/seed-blocks.yaml" \
        --device cuda -q --filter 'standard|bottleneck' --cudnn-api graph --conv-fusion "$fusion" --per-op 3 \
        --sweep dtype=float32,bfloat16 --sweep layout=channels_first,channels_last "${bounded_timing[@]}" \
        --json "$dir/seed-bn-stats.$fusion.$round.json" || rc=1
      runs=$((runs - 1))
    done
  done
  local spec base new diff_rc
  for spec in seed-separable mobilenet-separable seed-api repvgg-fusion seed-bn-stats; do
    base=$dir/$spec.cudnn.2.json new=$dir/$spec.own.2.json
    [ "$spec" = seed-api ] && base=$dir/$spec.legacy.2.json new=$dir/$spec.graph.2.json
    [ "$spec" = repvgg-fusion ] && base=$dir/$spec.none.2.json new=$dir/$spec.conv_act.2.json
    [ "$spec" = seed-bn-stats ] && base=$dir/$spec.none.2.json new=$dir/$spec.conv_bn_stats.2.json
    [ -f "$base" ] && [ -f "$new" ] || continue
    echo "=== $spec: $(basename "$new" .2.json | sed 's/.*\.//') (new) against $(basename "$base" .2.json | sed 's/.*\.//') (base), round 2"
    # Exit 1 (own is slower somewhere) and 3 (ambiguous) are findings; 2 is a broken input.
    "$build/convbench" diff "$base" "$new" --markdown "$dir/$spec.diff.md"
    diff_rc=$?
    [ "$diff_rc" = 2 ] && rc=1
  done
  pack ab "$dir" || rc=1
  echo "verdict: $([ "$rc" = 0 ] && echo passed || echo FAILED)"
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
  local timing=("${bounded_timing[@]}")
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
  echo "compare: $ran configs run, ${#skipped[@]} left for want of time, timing $([ "$full_timing" = 1 ] && echo full || echo "bounded (${bounded_timing[*]})")"
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
