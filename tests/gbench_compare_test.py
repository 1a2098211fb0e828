#!/usr/bin/env python3
"""convbench's Google Benchmark JSON read by the tool its readers use: Debian's
libbenchmark-tools compare.py (issue 15, item 7).

Two results files for one benchmark: the median moves +31%, and a few 30x outliers in the new
file move the mean by hundreds of percent. compare.py must see the +31% on the median (the
headline aggregate, listed first), keep significant digits (time unit ns), and run its U test
over the repetitions.

usage: gbench_compare_test.py CONVBENCH SOURCE_DIR
"""
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

COMPARE = "/usr/share/benchmark/compare.py"


def stats(samples):
    s = sorted(samples)
    q = statistics.quantiles(s, n=4, method="inclusive")
    mean = statistics.fmean(s)
    return {"median": statistics.median(s), "min": s[0], "max": s[-1], "q1": q[0], "q3": q[2], "mean": mean,
            "noise": statistics.pstdev(s) / mean, "noise_met": True, "raw_ms": samples, "samples": len(samples)}


def main():
    binary, source = sys.argv[1], sys.argv[2]
    if not os.path.exists(COMPARE):
        print(f"SKIP: {COMPARE} not installed (libbenchmark-tools; scripts/setup.sh installs it)")
        return 0
    with open(os.path.join(source, "tests/data/results/measured.json")) as f:
        template = json.load(f)
    base_samples = [1.30 + 0.001 * (i % 7) for i in range(40)]
    new_samples = [1.703 + 0.001 * (i % 7) for i in range(40)]
    for i in (5, 17, 29):  # outliers: the mean moves far more than the median
        new_samples[i] = 1.703 * 60
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for name, samples in (("base", base_samples), ("new", new_samples)):
            doc = json.loads(json.dumps(template))
            doc["results"] = [doc["results"][0]]
            doc["results"][0]["time_ms"] = {"step": stats(samples), "forward": stats([x / 3 for x in samples]),
                                            "backward": stats([x * 2 / 3 for x in samples])}
            results = os.path.join(tmp, name + ".json")
            with open(results, "w") as f:
                json.dump(doc, f)
            gbench = os.path.join(tmp, name + ".gbench.json")
            subprocess.run([binary, "report", results, "--format", "gbench-json", "-o", gbench], check=True)
            paths.append(gbench)
        with open(paths[0]) as f:
            entries = json.load(f)["benchmarks"]
        units = {e["time_unit"] for e in entries}
        if units != {"ns"}:
            failures.append(f"time units {units}, expected ns only")
        step = [e for e in entries if e["run_name"].endswith("/step")]
        reps = [e for e in step if e["run_type"] == "iteration"]
        aggs = [e["aggregate_name"] for e in step if e["run_type"] == "aggregate"]
        if len(reps) < 9 or [e["repetition_index"] for e in reps] != list(range(len(reps))):
            failures.append(f"expected 9+ numbered repetitions, got {len(reps)}")
        if aggs[:1] != ["median"]:
            failures.append(f"the median must be the first aggregate, got {aggs}")

        out = subprocess.run(["/usr/bin/python3", COMPARE, "--no-color", "-a", "benchmarks", paths[0], paths[1]],
                             capture_output=True, text=True)
        print(out.stdout)
        if out.returncode != 0:
            failures.append(f"compare.py exited {out.returncode}: {out.stderr}")
        median = re.search(r"/step_median\s+([+-][0-9.]+)\s+[+-][0-9.]+\s+(\d+)\s+(\d+)", out.stdout)
        if not median:
            failures.append("no step_median line in compare.py's output")
        else:
            change, old, new = float(median.group(1)), int(median.group(2)), int(median.group(3))
            if abs(change - 0.31) > 0.01:
                failures.append(f"median change {change}, expected +0.31")
            if old < 1000 or new < 1000:
                failures.append(f"times {old}, {new} printed with fewer than 4 significant digits")
        mean = re.search(r"/step_mean\s+([+-][0-9.]+)", out.stdout)
        if not mean or float(mean.group(1)) < 3:
            failures.append("the outliers should move the mean far more than the median (the reason the median leads)")
        if not re.search(r"/step_pvalue\s+[0-9.]+\s+[0-9.]+\s+U Test, Repetitions: (\d+) vs \1", out.stdout):
            failures.append("compare.py did not run its U test over the repetitions")
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
