#!/usr/bin/env python3
"""`compare --json F --db H` stopped by SIGINT or SIGTERM keeps what finished: the rows measured
before the signal are written to F (read back by pandas' json reader as any results file), the
run is marked interrupted (provenance and every output's warnings), nothing reaches the history,
`history add F` refuses the partial run, and the process still ends by the signal it got.

usage: interrupted_run_test.py CONVBENCH
"""
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time

failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL:", what)


SPEC = """blocks:
  - name: slow
    dims: 2
    batch: 2
    in_channels: 8
    out_channels: 16
    size: 12
    variants:
      - {kind: standard, name: first}
      - {kind: bottleneck, name: second, ratio: 2}
      - {kind: separable, name: third}
      - {kind: grouped, name: fourth, groups: 4}
"""


def interrupted_run(binary, tmp, signo):
    spec = os.path.join(tmp, "slow.yaml")
    with open(spec, "w") as f:
        f.write(SPEC)
    out = os.path.join(tmp, f"run-{signo}.json")
    db = os.path.join(tmp, f"history-{signo}.sqlite")
    # Every phase samples for its whole --timeout (a noise target nothing meets), so the run takes
    # long enough to be caught after its first row and before its last.
    args = [binary, "-v", "compare", spec, "--device", "reference", "--json", out, "--db", db, "--timeout", "2",
            "--min-time", "1000", "--min-samples", "1000000"]
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # With -v the log names each row as it starts (stderr is not a terminal: no progress line).
    lines = []
    reader = threading.Thread(target=lambda: lines.extend(iter(proc.stderr.readline, "")), daemon=True)
    reader.start()
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and not any("slow / second" in l for l in lines) and proc.poll() is None:
        time.sleep(0.05)
    started = any("slow / second" in l for l in lines)
    check(started, f"{signal.Signals(signo).name}: the second row never started: {''.join(lines)[-500:]}")
    proc.send_signal(signo)
    stdout = proc.stdout.read()
    proc.wait(timeout=120)
    reader.join(timeout=30)
    err = "".join(lines)
    name = signal.Signals(signo).name
    check(proc.returncode == -signo, f"{name}: ended with {proc.returncode}, not by the signal: {err[-800:]}")
    check(f"interrupted by {name} after 1 of 4 rows" in err and "nothing was added to the history" in err,
          f"{name}: stderr does not say what was kept: {err[-800:]}")
    check(os.path.exists(out), f"{name}: the rows that finished were not written")
    if not os.path.exists(out):
        return None
    doc = json.load(open(out))
    rows = [r["variant"] for r in doc["results"]]
    check(rows == ["first"], f"{name}: rows written {rows}, want the one that finished")
    check(all(r["status"] == "ok" and r["time_ms"]["step"]["samples"] > 0 for r in doc["results"]),
          f"{name}: a written row is not a whole measurement")
    marked = doc["provenance"].get("interrupted", {})
    check(marked.get("signal") == name and marked.get("finished_rows") == 1 and marked.get("rows") == 4
          and marked.get("not_run") == ["slow / second", "slow / third", "slow / fourth"],
          f"{name}: the run is not marked interrupted as it was: {marked}")
    check("warning: the run was interrupted" in stdout, f"{name}: the terminal table does not say so: {stdout}")
    check(not os.path.exists(db), f"{name}: the history was created by an interrupted run")
    return out


def main():
    binary = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        for signo in (signal.SIGINT, signal.SIGTERM):
            out = interrupted_run(binary, tmp, signo)
            if out is None:
                continue
            db = os.path.join(tmp, "later.sqlite")
            r = subprocess.run([binary, "history", "add", out, "--db", db], capture_output=True, text=True)
            check(r.returncode == 2 and "a history keeps whole runs" in r.stderr and out in r.stderr
                  and not os.path.exists(db), f"history add of an interrupted run: {r.returncode} {r.stderr}")
            r = subprocess.run([binary, "report", out], capture_output=True, text=True)
            check(r.returncode == 0 and "warning: the run was interrupted" in r.stdout,
                  f"report of an interrupted run: {r.returncode} {r.stdout} {r.stderr}")
            try:
                import pandas
                frame = pandas.json_normalize(json.load(open(out))["results"])
                check(list(frame["variant"]) == ["first"], f"pandas reads {list(frame['variant'])}")
            except ImportError:
                print("note: pandas not installed; its read of the file was not checked")
    if failures:
        print(f"{len(failures)} failure(s)")
        sys.exit(1)
    print("interrupted runs keep what finished: ok")


if __name__ == "__main__":
    main()
