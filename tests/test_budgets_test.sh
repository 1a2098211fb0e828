#!/usr/bin/env bash
# scripts/test-budgets.py fails a run in which one test took longer than its tier's budget, and
# passes one in which every test kept to it (ctest's JUnit output, made up here).
set -euo pipefail
source=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAILED: $*"; exit 1; }
cat >"$work/labels.json" <<'JSON'
{"Spec.Parses": ["unit"], "torch_peer": ["peer", "slow"], "doc_examples_top": ["docs"]}
JSON
junit() {  # junit UNIT_SECONDS PEER_SECONDS
  cat >"$work/junit.xml" <<XML
<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="convbench" tests="3" failures="0" disabled="0" skipped="0" hostname="" time="0" timestamp="">
  <testcase name="Spec.Parses" classname="Spec.Parses" time="$1" status="run"/>
  <testcase name="torch_peer" classname="torch_peer" time="$2" status="run"/>
  <testcase name="doc_examples_top" classname="doc_examples_top" time="12.5" status="run"/>
</testsuite>
XML
}
junit 0.5 150
"$source/scripts/test-budgets.py" "$work/junit.xml" --labels "$work/labels.json" >"$work/ok.log" 2>&1 ||
  { cat "$work/ok.log"; fail "a run within every budget was failed"; }
junit 0.5 451
if "$source/scripts/test-budgets.py" "$work/junit.xml" --labels "$work/labels.json" >"$work/over.log" 2>&1; then
  cat "$work/over.log"; fail "a peer test over 450 s passed the budget check"
fi
grep -q 'error: torch_peer \[peer,slow\] took 451.0 s, over its budget of 450 s' "$work/over.log" ||
  { cat "$work/over.log"; fail "the error does not name the test, its time and its budget"; }
junit 95 10
"$source/scripts/test-budgets.py" "$work/junit.xml" --labels "$work/labels.json" >"$work/unit.log" 2>&1 &&
  { cat "$work/unit.log"; fail "a unit test of 95 s passed its 90 s budget"; }
# A loaded machine: the run had 2 CPUs for 1000 s and other work took 1000 of those 2000
# CPU-seconds, so each budget doubles; a unit test of 170 s passes, one of 190 s does not.
load() {  # load MACHINE_BUSY OWN
  printf '{"wall_s": 1000, "cpus": 2, "machine_busy_s": %s, "own_cpu_s": %s}\n' "$1" "$2" >"$work/load.json"
}
load 1900 900
junit 170 10
"$source/scripts/test-budgets.py" "$work/junit.xml" --labels "$work/labels.json" --load "$work/load.json" \
  >"$work/loaded.log" 2>&1 || { cat "$work/loaded.log"; fail "a 170 s unit test on a half-taken machine failed"; }
grep -q 'other work took 1000 of the machine.s 2000 CPU-seconds during the run: budgets x2.00' "$work/loaded.log" ||
  { cat "$work/loaded.log"; fail "the load and the factor are not said"; }
junit 190 10
"$source/scripts/test-budgets.py" "$work/junit.xml" --labels "$work/labels.json" --load "$work/load.json" \
  >"$work/loaded-over.log" 2>&1 && { cat "$work/loaded-over.log"; fail "a 190 s unit test passed a doubled 90 s budget"; }
# An idle machine (only the run's own work): the budgets stay.
load 950 900
junit 95 10
"$source/scripts/test-budgets.py" "$work/junit.xml" --labels "$work/labels.json" --load "$work/load.json" \
  >"$work/idle.log" 2>&1 && { cat "$work/idle.log"; fail "a 95 s unit test on an idle machine passed"; }
# measure-load.py: the command's status, and a record whose own CPU time covers the command's work.
"$source/scripts/measure-load.py" --out "$work/measured.json" -- sh -c 'i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done; exit 3' &&
  fail "measure-load.py did not pass on the command's exit status"
[ $? -eq 3 ] || fail "measure-load.py changed the command's exit status"
python3 - "$work/measured.json" <<'PY' || fail "measure-load.py's record is not what it measured"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["wall_s"] > 0 and r["cpus"] >= 1, r
assert 0 < r["own_cpu_s"] <= r["machine_busy_s"] + 0.5, r
PY
echo "ok: the budget check passes a run within budget and fails one over it, naming the test, and scales with the load"
