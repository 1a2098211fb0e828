#!/usr/bin/env python3
"""convbench against PyTorch eager and torch.compile (inductor) on one spec, on the CPU or a GPU:
see peer/bench.py for how the engines are interleaved, what is compared and how a GPU comparison
is kept fair.

    scripts/peer-python.sh scripts/bench_vs_torch.py SPEC --out DIR [--device cpu|cuda] [--rounds 3] [--threads N]
        [--max-noise 0.005] [--min-time 0.5] [--min-samples 10] [--timeout 15] [--warmup 3]
        [--convbench PATH] [--sweep FIELD=VALUES ...]

Writes DIR/<spec name>.json (every round's medians, provenance) and DIR/<spec name>.md (the table
of ratios ours / eager and ours / compiled, with geomean and worst row). Runs in the peer
environment (scripts/setup-peers.sh); scripts/bench-vs-torch.sh runs it on the default specs."""

import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from peer.bench import markdown, run_bench  # noqa: E402
from peer.io import InputError, find_convbench, load_resolved, write_json  # noqa: E402


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("spec")
    p.add_argument("--out", required=True, help="folder for SPEC_NAME.json and SPEC_NAME.md")
    p.add_argument("--device", choices=("cpu", "cuda"), default="cpu",
                   help="where every engine runs (cuda: a GPU machine's PyTorch and convbench's CUDA backend)")
    p.add_argument("--rounds", type=int, default=3, help="rounds of A B C (default 3)")
    p.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)),
                   help="threads of every engine (default: the CPUs this process may use)")
    p.add_argument("--max-noise", type=float, default=0.005)
    p.add_argument("--min-time", type=float, default=0.5)
    p.add_argument("--min-samples", type=int, default=10)
    p.add_argument("--timeout", type=float, default=15.0)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--convbench", metavar="PATH")
    p.add_argument("--sweep", action="append", metavar="FIELD=VALUES",
                   help="as convbench's --sweep (repeatable): e.g. batch=2 and size=64 for a network at a "
                        "size a CPU times in seconds; the PyTorch side runs at the same size")
    opts = p.parse_args(argv)
    if opts.rounds < 1 or opts.threads < 1:
        p.error("--rounds and --threads must be at least 1")
    if opts.device == "cuda" and not torch.cuda.is_available():
        print("bench_vs_torch: --device cuda but torch.cuda.is_available() is False", file=sys.stderr)
        return 2
    try:
        binary = find_convbench(opts.convbench)
        resolved = load_resolved(opts.spec, binary, opts.sweep or ())
    except InputError as e:
        print(f"bench_vs_torch: {e}", file=sys.stderr)
        return 2
    name = resolved["name"]
    doc = run_bench(opts.spec, resolved["blocks"], binary, opts, resolved.get("networks", []))
    os.makedirs(opts.out, exist_ok=True)
    base = os.path.join(opts.out, name)
    write_json(base + ".json", doc)
    text = markdown(doc)
    with open(base + ".md", "w") as f:
        f.write(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
