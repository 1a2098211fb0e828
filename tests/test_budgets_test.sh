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
echo "ok: the budget check passes a run within budget and fails one over it, naming the test"
