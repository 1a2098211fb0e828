#!/usr/bin/env python3
"""Fails when one test took longer than its tier allows, so the suite cannot quietly grow back.

    scripts/test-budgets.py JUNIT.xml [--build DIR] [--labels LABELS.json] [--load LOAD.json]

JUNIT.xml is what `ctest --output-junit` wrote (scripts/test.sh writes
build/Testing/convbench-junit.xml); the tests' labels come from `ctest --show-only=json-v1` in
the build folder. A test's budget is the largest of its labels' budgets below (a `slow` label
gives no extra time: the tier's budget already allows for its slow tests). The times are those of
the parallel run (`ctest -j nproc` on 2 cores: each test shares the machine with another), which
is how CI measures them. Prints the ten slowest tests with their budgets, then every test over
its budget; exit 1 when there is one.

On a machine that other work shares, a correct test takes longer without being slower. With
--load (what scripts/measure-load.py recorded around the ctest run: the machine's busy CPU-seconds
and the run's own), every budget is scaled by the load the run measured: the CPU-seconds the
machine had (CPUs x wall time) over those left to the run once the other work took its share,
at most 8x. A run on an idle machine keeps the budgets as they are. Each test's ctest TIMEOUT
stays the hard limit, whatever the load.

A test that needs more than its tier's budget should become cheaper, or move to a heavier script
with a bounded slice in the suite (scripts/README.md, "The test command and its tiers"); raising a
budget here is a decision to make in a commit of its own, with the reason.
"""
import argparse
import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

# Seconds one test of the tier may take in the parallel run. Measured on the 2-vCPU VM
# (2026-11-27): the slowest unit test 40 s (ConfigMemory at full size), cli 28 s, peer 177 s
# (torch_peer), timing 51 s, docs (each document) under 150 s. The budgets leave room for a
# shared machine: in a fresh Debian root with two other builds beside it, torch_peer took 338 s
# and the slowest document 155 s (2026-11-27), and a busy CI machine must not fail on that.
BUDGETS = {
    "unit": 90,
    "cli": 90,
    "docs": 240,
    "peer": 450,
    "setup": 60,
    "style": 60,
    "cluster": 90,
    "timing": 120,
    "gpu": 300,
}
DEFAULT = 60  # a test with none of these labels
MAX_LOAD_FACTOR = 8.0  # beyond this the machine was not running tests so much as queueing them


def load_factor(load):
    """How much the other work on the machine stretched the run: capacity over what was left."""
    capacity = load["cpus"] * load["wall_s"]
    other = max(0.0, load["machine_busy_s"] - load["own_cpu_s"])
    if capacity <= 0:
        return 1.0, other, capacity
    left = max(capacity - other, capacity / MAX_LOAD_FACTOR)
    return max(1.0, capacity / left), other, capacity


def labels_of(build):
    out = subprocess.run(["ctest", "--show-only=json-v1"], cwd=build, capture_output=True, text=True, check=True).stdout
    labels = {}
    for test in json.loads(out).get("tests", []):
        found = []
        for prop in test.get("properties", []):
            if prop.get("name") == "LABELS":
                found = list(prop.get("value", []))
        labels[test["name"]] = found
    return labels


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("junit")
    parser.add_argument("--build", help="the build folder (default: the one holding JUNIT's Testing/)")
    parser.add_argument("--labels", help="a JSON file {test: [labels]} instead of asking ctest (for tests)")
    parser.add_argument("--load", help="scripts/measure-load.py's record of the run: budgets scale with the load")
    args = parser.parse_args()
    factor = 1.0
    if args.load:
        factor, other, capacity = load_factor(json.loads(Path(args.load).read_text()))
        print(f"test-budgets: other work took {other:.0f} of the machine's {capacity:.0f} CPU-seconds during the "
              f"run: budgets x{factor:.2f}")
    junit = Path(args.junit).resolve()
    build = Path(args.build) if args.build else junit.parent.parent
    labels = json.loads(Path(args.labels).read_text()) if args.labels else labels_of(build)
    rows = []
    for case in ET.parse(junit).getroot().iter("testcase"):
        name, seconds = case.get("name"), float(case.get("time", "0"))
        if case.get("status") == "notrun":
            continue
        own = labels.get(name, [])
        budget = round(max((BUDGETS[l] for l in own if l in BUDGETS), default=DEFAULT) * factor)
        rows.append((seconds, name, budget, ",".join(own) or "-"))
    if not rows:
        print(f"test-budgets: no test times in {junit}", file=sys.stderr)
        return 1
    rows.sort(reverse=True)
    print("test-budgets: the slowest tests (seconds in the parallel run / budget of their tier):")
    for seconds, name, budget, own in rows[:10]:
        print(f"  {seconds:7.1f} / {budget:4d}  {name}  [{own}]")
    over = [r for r in rows if r[0] > r[2]]
    for seconds, name, budget, own in over:
        print(f"error: {name} [{own}] took {seconds:.1f} s, over its budget of {budget} s: make it cheaper, or "
              "move its heavy part to its own script (scripts/test-budgets.py says how)", file=sys.stderr)
    total = sum(r[0] for r in rows)
    print(f"test-budgets: {len(rows)} tests, {total:.0f} test-seconds, {len(over)} over budget")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
