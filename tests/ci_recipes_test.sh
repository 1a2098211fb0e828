#!/usr/bin/env bash
# The CI recipes of configs/ci/ (issue 55, item 2): the GitHub Actions and GitLab CI files parse
# as YAML, have the jobs and steps the README describes, and call the gate where `cmake --install`
# puts it with the arguments it takes; every shell step parses. The gate itself runs for real, in
# a scratch git repository, through the scenarios a CI owner relies on:
#   pull request, a block's kernel grown on the branch    -> exit 1 (more memory), a Markdown report
#   pull request, the spec new on the branch              -> exit 4 (nothing to compare with)
#   history, the first run of a main branch               -> exit 4 (new series), 0 when accepted
#   history, the next main run with the kernel grown      -> exit 1 (memory judged across the edit)
# usage: ci_recipes_test.sh SOURCE_DIR BUILD_DIR
set -uo pipefail
src=$1 build=$2
convbench=$build/convbench
gate=$src/configs/ci/convbench-gate.sh
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# 1. The recipes: YAML, jobs, the gate's calls, every shell step parses.
python3 - "$src/configs/ci" <<'PY' || fail "the recipes' structure (above)"
import os, subprocess, sys, yaml
ci = sys.argv[1]
GATE = "/usr/local/share/convbench/configs/ci/convbench-gate.sh"
problems = []

def shell_ok(text, where):
    r = subprocess.run(["bash", "-n"], input=text, text=True, capture_output=True)
    if r.returncode != 0:
        problems.append(f"{where}: not valid shell: {r.stderr.strip()}")

def gate_calls(lines, where):
    calls = [l for l in lines if GATE in l]
    for l in calls:
        words = l.split(GATE, 1)[1].split()
        if not words or words[0] not in ("pull-request", "history") or len(words) != (3 if words[0] == "pull-request" else 2):
            problems.append(f"{where}: the gate is called as {l!r}")
    return [l.split(GATE, 1)[1].split()[0] for l in calls]

gh = yaml.safe_load(open(os.path.join(ci, "github-actions.yml")))
on = gh.get("on", gh.get(True))  # YAML 1.1 reads the key `on` as true
if set(on or {}) != {"pull_request", "push"}:
    problems.append(f"github: triggers {on}")
modes = []
for name, job in gh["jobs"].items():
    runs = [s["run"] for s in job["steps"] if "run" in s]
    for i, r in enumerate(runs):
        shell_ok(r, f"github job {name} step {i}")
    modes += gate_calls([l for r in runs for l in r.splitlines()], f"github job {name}")
if sorted(modes) != ["history", "pull-request"]:
    problems.append(f"github: the gate's modes {modes}")

gl = yaml.safe_load(open(os.path.join(ci, "gitlab-ci.yml")))
modes = []
for i, line in enumerate(gl["default"]["before_script"]):
    shell_ok(line, f"gitlab before_script {i}")
for name in ("convbench-gate", "convbench-history"):
    job = gl[name]
    if not job.get("rules"):
        problems.append(f"gitlab job {name} has no rules")
    for i, line in enumerate(job["script"]):
        shell_ok(line, f"gitlab job {name} line {i}")
    modes += gate_calls(job["script"], f"gitlab job {name}")
if sorted(modes) != ["history", "pull-request"]:
    problems.append(f"gitlab: the gate's modes {modes}")
for p in problems:
    print("FAIL:", p)
sys.exit(1 if problems else 0)
PY
bash -n "$gate" || fail "the gate script does not parse"
# Where the recipes call it: an installed tree has it there, executable.
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null || fail "cmake --install"
[ -x "$tmp/prefix/share/convbench/configs/ci/convbench-gate.sh" ] ||
  fail "cmake --install does not put the gate at share/convbench/configs/ci/convbench-gate.sh"
echo "ok: the recipes parse and call the installed gate"

# 2. The gate, for real, in a scratch repository.
repo=$tmp/repo
mkdir -p "$repo/bench"
cd "$repo" || exit 1
git init -q -b main . && git config user.email ci@example.org && git config user.name ci
spec() { # KERNEL
  printf 'name: ci\nblocks:\n  - name: blk\n    dims: 2\n    batch: 2\n    size: 8\n    in_channels: 8\n    out_channels: 8\n    kernel: %s\n    variants: [standard, separable]\n' "$1"
}
spec 3 >bench/spec.yaml
git add bench/spec.yaml && git commit -q -m base
export CONVBENCH=$convbench
export CONVBENCH_ARGS="--device cpu --min-time 0 --min-samples 3 --timeout 0.2 -q"
git checkout -q -b change
spec 5 >bench/spec.yaml
out=$(CONVBENCH_GATE_FLAGS="--rounds 2" "$gate" pull-request bench/spec.yaml main 2>&1)
status=$?
[ "$status" = 1 ] && grep -q "MORE" <<<"$out" && grep -q "convbench gate: a regression (exit 1)" <<<"$out" ||
  fail "pull request with a grown kernel: exit $status: $out"
grep -q "^## convbench diff: " convbench-diff.md 2>/dev/null || fail "no Markdown report for the pull request"
out=$("$gate" pull-request bench/other.yaml main 2>&1)
status=$?
[ "$status" = 4 ] || fail "pull request with a spec new on the branch: exit $status: $out"
echo "ok: pull-request mode: a regression exits 1 with its report; a new spec exits 4"

git commit -qam change
git checkout -q main
export CONVBENCH_DB=$tmp/history.sqlite
out=$("$gate" history bench/spec.yaml 2>&1)
status=$?
[ "$status" = 4 ] && grep -q "new series" <<<"$out" || fail "history, first run: exit $status: $out"
out=$(CONVBENCH_GATE_FLAGS=--accept-unjudged "$gate" history bench/spec.yaml 2>&1)
status=$?
[ "$status" = 0 ] || fail "history, second run accepted: exit $status: $out"
spec 5 >bench/spec.yaml
out=$("$gate" history bench/spec.yaml 2>&1)
status=$?
[ "$status" = 1 ] && grep -q "the graph changed since series" <<<"$out" ||
  fail "history, the kernel grown on main: exit $status: $out"
echo "ok: history mode: a first run exits 4 (0 accepted); a grown kernel exits 1 across the edit"

[ "$failures" = 0 ] && echo "ok" || echo "$failures failure(s)"
exit $((failures > 0))
