#!/usr/bin/env python3
"""Times `convbench validate` and `convbench analyze` on generated networks of growing depth.

Each network is a chain of LAYERS slots (a 3x3 conv, batch norm and ReLU each: 3 ops per layer)
on a small input (batch 1, 8 channels, 8x8), written with `repeat` (at most 10,000 per entry) in
stages of 10,000, so the spec stays a few KB while the graph has 3 x LAYERS ops. Prints one row
per size: the layers, the ops, the wall time of each command (the best of --repeat runs) and the
largest resident memory of any of its runs. Time that grows faster than the layers is a
super-linear step in building or analysing a network (issue 37: a linear duplicate-name scan per
op made 20 x 10,000 slots take over two minutes).

    scripts/bench-network-size.py [LAYERS ...]          (default 10000 100000 1000000)
    scripts/bench-network-size.py --binary build/convbench --repeat 3 10000 100000

The networks above convbench's default limit of expanded ops (--max-network-ops, 1,000,000) are
run with the limit raised. The figures depend on the machine and on what else runs on it: say
which, and how busy, when you report them (configs/README.md, "Networks").
"""
import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PER_ENTRY = 10_000  # convbench's largest `repeat`
OPS_PER_LAYER = 3  # conv, batch_norm, relu
DEFAULT_MAX_OPS = 1_000_000  # convbench's --max-network-ops


def spec_text(layers):
    stages = []
    left, index = layers, 0
    while left > 0:
        n = min(left, PER_ENTRY)
        stages.append(f"      - name: s{index}\n        ops: [{{op: slot, name: convs, repeat: {n}}}]\n")
        left -= n
        index += 1
    return (
        "name: bench-network-size\n"
        "networks:\n"
        f"  - name: deep-{layers}\n"
        "    dims: 2\n"
        "    batch: 1\n"
        "    in_channels: 8\n"
        "    size: 8\n"
        "    norm: batch\n"
        "    act: relu\n"
        "    mode: train\n"
        "    variants: [standard]\n"
        "    stages:\n" + "".join(stages)
    )


def peak_rss_mib():
    # ru_maxrss of the children waited for so far is their largest (KiB on Linux); each size is
    # larger than the one before it, so the running maximum is this size's.
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


def timed(command, repeat):
    best = None
    for _ in range(repeat):
        start = time.perf_counter()
        done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        elapsed = time.perf_counter() - start
        if done.returncode != 0:
            sys.exit(f"bench-network-size: {' '.join(command)} failed ({done.returncode}): {done.stderr.strip()}")
        best = elapsed if best is None else min(best, elapsed)
    return best


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("layers", nargs="*", type=int, default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--binary", default=str(ROOT / "build" / "convbench"))
    parser.add_argument("--repeat", type=int, default=1, help="runs per command and size; the best is shown")
    args = parser.parse_args()
    if not os.access(args.binary, os.X_OK):
        sys.exit(f"bench-network-size: no {args.binary} (run scripts/build.sh first)")
    if any(n < 1 for n in args.layers) or args.repeat < 1:
        sys.exit("bench-network-size: LAYERS and --repeat must be positive")
    rows = []
    with tempfile.TemporaryDirectory() as work:
        for layers in sorted(args.layers):
            spec = Path(work) / f"deep-{layers}.yaml"
            spec.write_text(spec_text(layers))
            ops = layers * OPS_PER_LAYER
            limit = ["--max-network-ops", str(ops)] if ops > DEFAULT_MAX_OPS else []
            validate = timed([args.binary, "validate", str(spec), *limit], args.repeat)
            analyze = timed([args.binary, "analyze", str(spec), *limit], args.repeat)
            rows.append((f"{layers:,}", f"{ops:,}", f"{validate:.2f}", f"{analyze:.2f}", f"{peak_rss_mib():,.0f} MiB"))
    header = ("layers", "ops", "validate s", "analyze s", "peak RSS")
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    print("  ".join(h.rjust(w) for h, w in zip(header, widths)))
    print("  ".join("-" * w for w in widths))
    for r in rows:
        print("  ".join(c.rjust(w) for c, w in zip(r, widths)))


if __name__ == "__main__":
    main()
