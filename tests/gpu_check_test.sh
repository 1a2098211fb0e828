#!/usr/bin/env bash
# scripts/gpu-check.sh's test selection and verdicts, on a machine without a GPU, so that its
# first run on a GPU spends the time measuring: the judges on recorded GPU-machine outputs
# (tests/data/gpu-check), the check stage's filter against this build's test list, and the test
# stage's exclusion against ctest's.
# Also the two calls of a GPU session: their stages, the run commands the help prints, every
# command of the answers, peers, seeds, precision and ab stages (printed by a dry run) against the
# flags convbench and the peer scripts accept, so that no lent minute goes to a typo, each within
# what is left of the call; and the check stage run here (its GPU tests skip), whose log must be
# in $OUT with both passes and the per-suite seconds.
# Usage: gpu_check_test.sh SOURCE_DIR BUILD_DIR TEST_BINARY [PEER_PYTHON...]
set -uo pipefail
source=$1 build=$2 tests=$3
shift 3
peer_python=("$@")
# shellcheck source=scripts/gpu-check-lib.sh
. "$source/scripts/gpu-check-lib.sh"
data=$source/tests/data/gpu-check
gpu="NVIDIA H100 80GB HBM3"
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
expect() {  # expect RC JUDGE LOG GPU PATTERN...
  local want=$1 judge=$2 log=$3 name=$4 out rc
  shift 4
  out=$("$judge" "$data/$log" "$name")
  rc=$?
  [ "$rc" = "$want" ] || fail "$judge $log (gpu '${name}'): exit $rc, expected $want; it said: $out"
  for pattern in "$@"; do
    grep -qF -- "$pattern" <<<"$out" || fail "$judge $log: output lacks '$pattern'; it said: $out"
  done
}

# The check stage on a GPU machine.
expect 0 judge_gtest_log check-passed.log "$gpu" "verdict: passed (5 tests)"
expect 1 judge_gtest_log check-skipped.log "$gpu" "skipped although nvidia-smi reports $gpu: GpuClock.NvmlReportsTheSmClock" \
  "why: no SM clock: libnvidia-ml.so.1 could not be loaded" "verdict: FAILED"
expect 1 judge_gtest_log check-failed.log "$gpu" "failed: GpuOps.EveryOpCaseMatchesTheReference" \
  "case: conv2d_grouped_strided_dilated input 2x4x7x6 bfloat16 channels_last train"
expect 1 judge_gtest_log check-skipped.log "" "no GPU found"
# The test stage on a GPU machine: a peer that skipped for want of PyTorch fails it.
expect 0 judge_ctest_log test-passed.log "$gpu" "verdict: passed (100% tests passed"
expect 1 judge_ctest_log test-torch-skipped.log "$gpu" "skipped on the GPU machine: torch_peer"
expect 0 judge_ctest_log test-torch-skipped.log "" "verdict: passed"
expect 1 judge_ctest_log test-failed.log "$gpu" "failed: torch_peer"

# The filter selects exactly the tests of cuda_backend_test.cpp, every one of them, and its two
# passes (suites run on a GPU before, suites never run) select each suite once.
suites_of() {
  "$tests" --gtest_list_tests --gtest_filter="$1" |
    awk '/^[^ ]/ {suite=$1} /^  / {print suite $1}' | sed -E 's#^Gpu/##; s#\.[^.]*$##; s#/.*##' | sort -u
}
# A build without the CUDA backend (the sanitizer build) has one GPU test, GpuTests.NotBuilt.
cuda_built=true
[ "$(suites_of 'Gpu*')" = GpuTests ] && cuda_built=false
if [ "$cuda_built" = false ]; then
  echo "note: built without the CUDA backend; only GpuTests.NotBuilt is listed"
else
  listed=$(suites_of "$GPU_TEST_FILTER")
  before=$(suites_of "$GPU_SUITES_RUN_BEFORE") never=$(suites_of "$GPU_SUITES_NEVER_RUN")
  both=$(comm -12 <(echo "$before") <(echo "$never"))
  [ -z "$both" ] || fail "suites in both passes of the check: $both"
  [ "$(sort -u <<<"$before"$'\n'"$never")" = "$listed" ] || fail "the check's two passes do not select every GPU suite"
  [ "$(grep -c . <<<"$never")" -ge 1 ] && [ "$(grep -c . <<<"$before")" -ge 1 ] ||
    fail "a pass of the check selects no suite: before [$(echo $before)], never run [$(echo $never)]"
  defined=$(sed -n -E 's/^TEST(_P)?\(([A-Za-z0-9_]+), .*/\2/p' "$source/tests/cuda_backend_test.cpp" | sort -u)
  [ "$listed" = "$(grep -vx GpuTests <<<"$defined")" ] ||
    fail "the filter '$GPU_TEST_FILTER' lists suites [$(echo $listed)], cuda_backend_test.cpp defines [$(echo $defined)]"
fi
outside=$(grep -lE '^TEST(_P)?\(Gpu' "$source"/tests/*.cpp | grep -v '/cuda_backend_test.cpp$')
[ -z "$outside" ] || fail "Gpu* suites outside cuda_backend_test.cpp would run in the check stage: $outside"
# Run here, without a GPU, the check stage's selection skips every test: the judge must fail it.
run_log=$(mktemp)
trap 'rm -f "$run_log"' EXIT  # widened below, when there is more to remove
"$tests" --gtest_filter="$GPU_TEST_FILTER" --gtest_color=no >"$run_log" 2>&1
if judge_gtest_log "$run_log" "$gpu" >/dev/null; then fail "a run whose GPU tests all skipped passed the judge"; fi

# The test stage's exclusion keeps every test but the GPU ones and the Debian-machine checks.
all=$(ctest --test-dir "$build" -N | grep -cE '^ +Test +#')
kept=$(ctest --test-dir "$build" -N -E "$HOST_TEST_EXCLUDE" | sed -n -E 's/^ +Test +#[0-9]+: (.*)/\1/p')
grep -qE '^Gpu' <<<"$kept" && fail "the test stage would run GPU tests: $(grep -E '^Gpu' <<<"$kept" | head -3)"
must_keep=(torch_peer peer_agreement)
ctest --test-dir "$build" -N | grep -q 'CudaBackendConstruction\.' &&
  must_keep+=(CudaBackendConstruction.NamesTheReasonWithoutADeviceAndStartsWithOne)
for t in "${must_keep[@]}"; do
  grep -qx "$t" <<<"$kept" || fail "the test stage would not run $t"
done
gpu_tests=$(ctest --test-dir "$build" -N -R '^Gpu' | grep -cE '^ +Test +#')
excluded=$((all - $(wc -l <<<"$kept")))
[ "$excluded" = $((gpu_tests + 7)) ] ||
  fail "the test stage leaves out $excluded tests: the $gpu_tests GPU tests and 7 Debian-machine checks expected"

# The calls: --call N is the documented stages; the help names each call's run, with carry and a
# timeout_s 15 s above the seconds the call gives itself; the two fit 15 minutes of device time
# with a machine's start (90 s) and two minutes for a rerun to spare.
help=$("$source/scripts/gpu-check.sh" --help)
timeouts=$(sed -n -E 's/.*timeout_s: ([0-9]+).*/\1/p' <<<"$help")
[ "$(grep -c . <<<"$timeouts")" = 2 ] || fail "the help does not give two calls' timeout_s: [$(echo $timeouts)]"
[ $(($(paste -sd+ <<<"$timeouts"))) -le $((900 - 90 - 120)) ] ||
  fail "the calls' timeout_s [$(echo $timeouts)] leave less than 2 minutes of 15 after a 90 s start"
for n in 1 2; do
  grep -qF "CONVBENCH_COMMIT=<commit> scripts/gpu-check.sh --call $n" <<<"$help" || fail "the help lacks call $n's run command"
  said=$(CONVBENCH_GPU_CHECK_DRY_RUN=1 OUT=$(mktemp -d) CONVBENCH_GPU_BUILD_DIR=$build \
         "$source/scripts/gpu-check.sh" --call $n 2>&1 | sed -n -E 's/^gpu-check: call of ([0-9]+) s.*/\1/p')
  [ "$((said + 15))" = "$(sed -n "${n}p" <<<"$timeouts")" ] ||
    fail "call $n gives itself ${said:-?} s, its documented timeout_s is $(sed -n "${n}p" <<<"$timeouts")"
done
[ "$(grep -cF 'carry: [".gpu-deps"]' <<<"$help")" = 2 ] || fail "the help does not give each call's carry"
"$source/scripts/gpu-check.sh" --call 3 >/dev/null 2>&1
[ $? = 2 ] || fail "--call 3 was not refused as bad usage"
# The GPU stages' commands, printed instead of run, and each checked here: convbench's with the
# CPU device and --max-runs 1 (which it refuses only after every other flag and sweep parsed),
# the peer scripts' with a spec that does not exist (an argparse error prints "usage:").
dry=$(mktemp -d)
trap 'rm -rf "$run_log" "$dry"' EXIT
CONVBENCH_GPU_CHECK_DRY_RUN=1 OUT=$dry CONVBENCH_GPU_BUILD_DIR=$build \
  "$source/scripts/gpu-check.sh" --stages "answers peers seeds precision ab" >/dev/null 2>&1
compares=0 pythons=0
while IFS= read -r line; do
  eval "cmd=(${line#would run: })"
  if [ "$(basename "${cmd[0]}")" = convbench ]; then
    args=("${cmd[@]}")
    for i in "${!args[@]}"; do [ "${args[$i]}" = cuda ] && args[$i]=cpu; done
    err=$("$build/convbench" "${args[@]:1}" --max-runs 1 2>&1 >/dev/null)
    rc=$?
    [ "$rc" = 2 ] && grep -q 'more than the limit of 1' <<<"$err" ||
      fail "a GPU stage's command is refused for another reason (exit $rc): ${cmd[*]}: $err"
    compares=$((compares + 1))
  elif [ ${#peer_python[@]} -gt 0 ] && "${peer_python[@]}" -c 'import torch' 2>/dev/null; then
    args=("${cmd[@]:2}")  # python3 SCRIPT ARGS: the spec is the first argument
    args[0]=$dry/no-such-spec.yaml
    for i in "${!args[@]}"; do [ "${args[$i]}" = cuda ] && args[$i]=cpu; done
    err=$("${peer_python[@]}" "${cmd[1]}" "${args[@]}" 2>&1 >/dev/null)
    grep -q 'usage:' <<<"$err" && fail "a GPU stage's peer command has flags its script refuses: ${cmd[*]}: $err"
    pythons=$((pythons + 1))
  fi
done < <(grep -h '^would run:' "$dry"/*.log)
[ "$compares" = 34 ] || fail "the dry run printed $compares convbench compare commands, expected 34"
echo "checked $compares convbench commands and $pythons peer commands of the GPU stages"
# Every command is cut to what is left of the call (less 15 s for the summary).
short=$(mktemp -d)
trap 'rm -rf "$run_log" "$dry" "$short"' EXIT
CONVBENCH_GPU_CHECK_DRY_RUN=1 OUT=$short CONVBENCH_GPU_BUILD_DIR=$build \
  "$source/scripts/gpu-check.sh" --stages "answers ab" --call-seconds 60 >/dev/null 2>&1
most=$(sed -n 's/^within: //p' "$short"/*.log | sort -n | tail -1)
[ -n "$most" ] && [ "$most" -le 45 ] || fail "a command of a 60 s call was given ${most:-no} seconds (at most 45)"

# The check stage here: the GPU tests skip without a GPU, so the judge fails it; its log is in
# $OUT (written as GoogleTest ran), with both passes and each suite's seconds, and the summary
# has its line.
checked=$(mktemp -d)
trap 'rm -rf "$run_log" "$dry" "$short" "$checked"' EXIT
OUT=$checked CONVBENCH_GPU_BUILD_DIR=$build "$source/scripts/gpu-check.sh" --stages check --call-seconds 240 \
  >/dev/null 2>&1 && fail "the check stage passed without a GPU"
if [ "$cuda_built" = true ]; then
  [ "$(grep -c '^\[==========\] .* ran\.' "$checked/check.log")" = 2 ] || fail "check.log does not hold two GoogleTest passes"
  grep -qE '^ +[0-9.]+ s +[0-9]+ tests +GpuOps$' "$checked/check.log" || fail "check.log lacks GpuOps' seconds"
  grep -q '^=== the slowest tests' "$checked/check.log" || fail "check.log lacks the slowest tests"
fi
grep -qE '^\| check \| FAILED' "$checked/summary.md" || fail "summary.md lacks the check's failed line: $(cat "$checked/summary.md")"

if [ "$failures" = 0 ]; then echo "PASS: gpu-check's filter and judges"; exit 0; fi
echo "$failures failures"
exit 1
