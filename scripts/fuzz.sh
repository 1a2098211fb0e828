#!/usr/bin/env bash
# Runs the libFuzzer harnesses of tests/fuzz (the spec loader, the results reader, the ONNX reader
# on bytes and on its seed models' numbers, and the history's schema checks on damaged files,
# under AddressSanitizer and UndefinedBehaviorSanitizer) from their committed seed corpora.
#
#   scripts/fuzz.sh                  60 seconds each (scripts/test.sh runs 25 in CI)
#   scripts/fuzz.sh --seconds 3600   longer, before a release
#   scripts/fuzz.sh --parallel       the harnesses at once, one core each (the same seconds each,
#                                    less wall time on a machine with idle cores)
#
# Builds in build-sanitize/ (shared with scripts/sanitize.sh). What a run adds to the corpus goes
# to build-sanitize/fuzz-corpus/, never to the committed seeds; a crashing input is saved as
# build-sanitize/fuzz-crash-* and the script exits 1, naming it. Re-run one input with
#   build-sanitize/tests/fuzz/fuzz_spec_loader FILE
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
seconds=60
parallel=0
while [ $# -gt 0 ]; do
  case $1 in
    --seconds) seconds=$2; shift 2 ;;
    --parallel) parallel=1; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "fuzz: unknown argument $1" >&2; exit 2 ;;
  esac
done
case $seconds in ''|*[!0-9]*) echo "fuzz: --seconds takes whole seconds" >&2; exit 2 ;; esac
build=${CONVBENCH_SANITIZE_BUILD_DIR:-$root/build-sanitize}
"$root/scripts/sanitize.sh" --build-only
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# Runs one harness for $seconds; its verdict goes to stderr, its exit status says whether it found
# something.
fuzz_one() {
  local name=$1 seeds=$2 corpus log
  corpus=$build/fuzz-corpus/$seeds
  mkdir -p "$corpus"
  log=$build/fuzz-$name.log
  echo "fuzz: $name for ${seconds}s from tests/fuzz/corpus/$seeds" >&2
  # -timeout: one input taking more than 10 s is a hang; -rss_limit_mb: one growing past 2 GiB is
  # unbounded memory. Both count as findings.
  # -dict: the formats' keys and values (networks' stages, slots and repeats; shard files'
  # sections), so that mutations reach the deeper parsers sooner.
  if ! "$build/tests/fuzz/fuzz_$name" "$corpus" "$root/tests/fuzz/corpus/$seeds" -max_total_time="$seconds" \
       -dict="$root/tests/fuzz/dict/$seeds.dict" -timeout=10 -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 \
       -artifact_prefix="$build/fuzz-crash-$name-" >"$log" 2>&1; then
    tail -40 "$log" >&2
    echo "fuzz: $name found a failing input: $(ls "$build"/fuzz-crash-"$name"-* 2>/dev/null | head -1)" >&2
    return 1
  fi
  echo "fuzz: $name: $(grep -E '^stat::number_of_executed_units' "$log" | awk '{print $2}') inputs, no finding" >&2
}

status=0
targets=(spec_loader:spec results_reader:results onnx_reader:onnx onnx_attributes:onnx_attributes
         history_schema:history_schema)
if [ "$parallel" = 1 ]; then
  pids=()
  for target in "${targets[@]}"; do
    fuzz_one "${target%%:*}" "${target##*:}" &
    pids+=($!)
  done
  for pid in "${pids[@]}"; do wait "$pid" || status=1; done
else
  for target in "${targets[@]}"; do
    fuzz_one "${target%%:*}" "${target##*:}" || status=1
  done
fi
exit "$status"
