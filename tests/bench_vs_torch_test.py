#!/usr/bin/env python3
"""ctest `bench_vs_torch_smoke`: scripts/bench_vs_torch.py end to end on tiny blocks (train and
infer), two rounds, one thread: every row timed by the three engines and the inference row by
ONNX Runtime too (the training rows not: an ONNX model is an inference graph), the ratios are the
medians' quotients, the summary's geomean and worst row follow from the rows, the provenance names the CPU,
threads, library versions and convbench's commit, and the Markdown table has a line per row. It
checks the output's form, not speed. Also: every network twin a network row is timed against has
the parameter count of its config's variant.

Usage: bench_vs_torch_test.py CONVBENCH_BINARY SOURCE_DIR   (in the peer environment)
"""
import glob
import json
import math
import os
import subprocess
import sys
import tempfile

try:
    import torch  # noqa: F401
except ImportError as e:
    print(f"SKIP: torch not importable by {sys.executable}: {e}")
    sys.exit(0)

SPEC = """\
name: tiny
blocks:
  - name: tiny-train
    dims: 2
    batch: 2
    in_channels: 4
    out_channels: 8
    size: 8
    kernel: 3
    padding: same
    norm: batch
    act: relu
    mode: train
    variants:
      - standard
      - kind: separable
        name: separable
  - name: tiny-infer
    dims: 2
    batch: 1
    in_channels: 4
    out_channels: 4
    size: 8
    kernel: 3
    padding: same
    mode: infer
    variants:
      - standard
"""


def check(cond, what, failures):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def main():
    binary, source = sys.argv[1], sys.argv[2]
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        spec = os.path.join(tmp, "tiny.yaml")
        with open(spec, "w") as f:
            f.write(SPEC)
        out = os.path.join(tmp, "out")
        run = subprocess.run([sys.executable, os.path.join(source, "scripts", "bench_vs_torch.py"), spec, "--out", out,
                              "--rounds", "2", "--threads", "1", "--min-time", "0.01", "--min-samples", "3",
                              "--timeout", "2", "--warmup", "1", "--convbench", binary],
                             capture_output=True, text=True)
        print(run.stdout)
        check(run.returncode == 0, f"exit 0 (got {run.returncode}: {run.stderr.strip()[-800:]})", failures)
        if run.returncode != 0:
            return 1
        with open(os.path.join(out, "tiny.json")) as f:
            doc = json.load(f)
        with open(os.path.join(out, "tiny.md")) as f:
            md = f.read()
    rows = doc["rows"]
    check(doc["schema"] == "convbench.bench-vs-torch/1", "schema", failures)
    check([(r["block"], r["variant"]) for r in rows] == [("tiny-train", "standard"), ("tiny-train", "separable"),
                                                         ("tiny-infer", "standard")], "one row per block x variant, in order", failures)
    for r in rows:
        name = f"{r['block']}/{r['variant']}"
        check(all(len(r["rounds_ms"][e]) == 2 and all(v and v > 0 for v in r["rounds_ms"][e])
                  for e in ("convbench", "eager", "compiled")), f"{name}: two positive timings per engine", failures)
        m = r["median_ms"]
        check(math.isclose(r["ours_over_eager"], m["convbench"] / m["eager"]), f"{name}: ours/eager = quotient", failures)
        check(math.isclose(r["ours_over_compiled"], m["convbench"] / m["compiled"]),
              f"{name}: ours/compiled = quotient", failures)
        ort_ms = r["rounds_ms"]["onnxruntime"]
        if r["block"] == "tiny-infer":
            check(len(ort_ms) == 2 and all(v and v > 0 for v in ort_ms)
                  and math.isclose(r["ours_over_onnxruntime"], m["convbench"] / m["onnxruntime"]),
                  f"{name}: two positive onnxruntime timings, ours/onnxruntime = quotient", failures)
        else:
            check(ort_ms == [] and r["ours_over_onnxruntime"] is None, f"{name}: no onnxruntime time (train)", failures)
    for ratio in ("ours_over_eager", "ours_over_compiled"):
        values = [r[ratio] for r in rows]
        s = doc["summary"][ratio]
        check(math.isclose(s["geomean"], math.exp(sum(math.log(v) for v in values) / len(values))),
              f"{ratio}: geomean of the rows", failures)
        check(s["worst"] == max(values), f"{ratio}: worst is the largest row", failures)
    p = doc["provenance"]
    check(p["threads"] == 1 and p["rounds"] == 2, "provenance: threads and rounds", failures)
    check(p["onnxruntime"] and p["onnxruntime_rows"] == 1, f"provenance: onnxruntime {p['onnxruntime']}, one row "
          f"({p['onnxruntime_note']})", failures)
    check(all(p.get(k) for k in ("cpu", "torch", "mkl", "onednn", "convbench_commit", "date")),
          f"provenance: cpu, torch, MKL, oneDNN, convbench commit, date ({ {k: p.get(k) for k in ('cpu', 'torch', 'mkl', 'onednn', 'convbench_commit')} })",
          failures)
    check(sum(1 for line in md.splitlines() if line.startswith("| tiny-")) == 3 and "ours / eager: geomean" in md
          and "ours / compiled: geomean" in md and "ours / onnxruntime: geomean" in md
          and "| onnxruntime ms |" in md, "Markdown: a line per row, the onnxruntime column and three summaries",
          failures)
    check_network_twins(binary, source, failures)
    print(f"{len(failures)} failed")
    return 1 if failures else 0


def check_network_twins(binary, source, failures):
    """Each network row's PyTorch twin (peer/networks.py) is the model of that config and variant:
    the same parameter count as convbench's analyze; every config network is looked up."""
    sys.path.insert(0, os.path.join(source, "scripts"))
    from peer.networks import NETWORK_MODELS, network_model
    seen = set()
    for config in sorted(glob.glob(os.path.join(source, "configs", "*.yaml"))):
        run = subprocess.run([binary, "analyze", config, "--json", "-"], capture_output=True, text=True)
        if run.returncode != 0:
            check(False, f"analyze {config}: {run.stderr.strip()}", failures)
            continue
        for row in json.loads(run.stdout)["results"]:
            if row.get("subject") != "network":
                continue
            twin = network_model(row["block"], row["variant"])
            if twin is None:
                print(f"     {row['block']}/{row['variant']}: no PyTorch twin (timed by convbench alone)")
                continue
            seen.add((row["block"], row["variant"]))
            params = sum(p.numel() for p in twin[0].parameters())
            check(params == row["params"], f"{row['block']}/{row['variant']}: twin {twin[1]} has {params:,} parameters "
                  f"(convbench {row['params']:,})", failures)
    check(seen == set(NETWORK_MODELS), f"every twin belongs to a config network ({sorted(set(NETWORK_MODELS) - seen)} do not)",
          failures)


if __name__ == "__main__":
    sys.exit(main())
