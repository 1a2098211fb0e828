#!/usr/bin/env bash
# Times `convbench history check` on a large history: RUNS runs (default 10,000) of SERIES series
# (default 100) each, i.e. a million measurements with 10 raw samples apiece, built with
# `convbench history add` from generated results files (in chunks, to bound the disk they take),
# then one new run checked against it REPEAT times (default 5); prints each wall time and the best.
#
#   scripts/bench-history.sh [BUILD_DIR]      (default build/; builds nothing)
#   RUNS=1000 SERIES=50 scripts/bench-history.sh
#   KEEP_DB=/path/h.sqlite scripts/bench-history.sh   keep (and reuse) the database there
#   KEEP_NEW=/path/new.json                            keep the checked run's results file there
#
# The figure depends on the machine and on what else runs on it: say which, and how busy, when
# you report it (lib/history/README.md).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
binary=$build/convbench
runs=${RUNS:-10000}
series=${SERIES:-100}
repeat=${REPEAT:-5}
chunk=1000
[ -x "$binary" ] || { echo "bench-history: no $binary (run scripts/build.sh first)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
db=${KEEP_DB:-$work/history.sqlite}

# Writes results files for runs [first, last) into DIR; with a last argument of 1, series 0 is 10% slower (the
# run to check, so that it has something to find).
generate() {
  /usr/bin/python3 - "$@" <<'PY'
import hashlib, json, os, random, sys
out, first, last, series, slow = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5] == "1"
def q(s, p):
    pos = p * (len(s) - 1); lo = int(pos); hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)
for run in range(first, last):
    rng = random.Random(run)
    rows = []
    for k in range(series):
        level = (1.0 + 0.01 * k) * (1.1 if k == 0 and slow else 1.0)
        raw = [level * (1 + rng.gauss(0, 0.02)) for _ in range(10)]
        s = sorted(raw)
        rows.append({"block": "bench", "variant": f"v{k}", "kind": "standard", "point": {}, "point_label": "",
                     "dims": 2, "dtype": "float32", "layout": "channels_first", "mode": "infer",
                     "input_shape": [8, 64, 56, 56], "output_shape": [8, 64, 56, 56],
                     "graph_hash": hashlib.sha256(f"bench v{k}".encode()).hexdigest(),
                     "memory": {"predicted_peak_bytes": 1 << 24}, "device": "cpu", "status": "ok",
                     "time_ms": {"forward": {"median": q(s, .5), "q1": q(s, .25), "q3": q(s, .75), "min": s[0],
                                             "max": s[-1], "mean": sum(raw) / 10, "samples": 10, "raw_ms": raw}}})
    doc = {"schema": "convbench.results/1", "engine": "convbench 0.1.0", "device": "cpu",
           "provenance": {"backend": "cpu", "cpu": "bench CPU", "onednn_version": "2.6.3", "threads": 2,
                          "git_commit": f"{run:012x}", "date": f"2026-01-01T00:00:00Z", "host_name": "bench"},
           "results": rows}
    with open(os.path.join(out, f"run{run:06d}.json"), "w") as f:
        json.dump(doc, f, separators=(",", ":"))
PY
}

if [ -z "${KEEP_DB:-}" ] || [ ! -f "$db" ]; then
  start=$(date +%s)
  for ((first = 0; first < runs; first += chunk)); do
    last=$((first + chunk < runs ? first + chunk : runs))
    mkdir -p "$work/chunk"
    generate "$work/chunk" "$first" "$last" "$series" 0
    "$binary" history add --db "$db" "$work/chunk"/*.json >/dev/null
    rm -rf "$work/chunk"
    echo "bench-history: $last / $runs runs added" >&2
  done
  echo "bench-history: built $runs runs x $series series in $(($(date +%s) - start)) s ($(du -h "$db" | cut -f1))" >&2
fi
mkdir -p "$work/new"
generate "$work/new" "$runs" "$((runs + 1))" "$series" 1  # the run to check: series 0 is 10% slower
new=$work/new/$(printf 'run%06d.json' "$runs")
best=""
for ((i = 1; i <= repeat; i++)); do
  t0=$EPOCHREALTIME
  set +e
  "$binary" history check "$new" --db "$db" >"$work/check.txt"
  code=$?
  set -e
  t=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.3f", b - a }')
  echo "history check: ${t} s (exit $code)"
  if [ -z "$best" ] || awk -v t="$t" -v b="$best" 'BEGIN { exit !(t < b) }'; then best=$t; fi
done
[ -n "${KEEP_NEW:-}" ] && cp "$new" "$KEEP_NEW"
tail -n 3 "$work/check.txt"
echo "best of $repeat: ${best} s for $runs runs x $series series; load average $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) CPUs"
