#!/usr/bin/env python3
"""How `convbench merge` scales with the number of shards: time and peak memory (the merge
process's maximum resident set) for a plan of N items run as N shards of one item each.

    scripts/bench-merge.py [--shards 1000] [--convbench build/convbench] [--keep DIR]

The spec is one tiny block swept over N batch sizes (N runs), measured with --memory-only so that
each shard takes a fraction of a second; each shard file holds one row and names the plan file
beside it (--plan), as a real sweep's do (`convbench slurm` gives every shard --plan), so their
total size grows with N, not N squared. The shards run one after another (the figure is the merge's, not theirs); then
`convbench merge` runs once over all N files and its wall time and maximum RSS are printed with
the merged file's size and row count. Needs an idle machine for a wall time worth quoting."""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--shards", type=int, default=1000)
    p.add_argument("--convbench", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build",
                                                        "convbench"))
    p.add_argument("--keep", metavar="DIR", help="work in DIR and keep it (default: a temporary folder)")
    p.add_argument("--merge-only", action="store_true",
                   help="with --keep: time the merge of the shard files an earlier run left in DIR")
    opts = p.parse_args(argv)
    if opts.merge_only and not opts.keep:
        p.error("--merge-only needs --keep DIR")
    if not 1 <= opts.shards <= 10000:
        p.error("--shards must be 1 to 10000 (convbench plan's limit)")
    work = opts.keep or tempfile.mkdtemp(prefix="convbench-bench-merge-")
    os.makedirs(work, exist_ok=True)
    spec = os.path.join(work, "spec.yaml")
    with open(spec, "w") as f:
        f.write("name: merge-scale\nblocks:\n  - {name: tiny, dims: 2, batch: 1, in_channels: 2, out_channels: 2,"
                " size: 4, kernel: 1, norm: none, act: none, variants: [standard]}\n")
    sweep = "batch=" + ",".join(str(b) for b in range(1, opts.shards + 1))
    plan = os.path.join(work, "plan.json")
    files = [os.path.join(work, f"shard-{i}.json") for i in range(opts.shards)]
    started = time.perf_counter()
    if not opts.merge_only:
        subprocess.run([opts.convbench, "plan", spec, "--sweep", sweep, "--shards", str(opts.shards), "-o", plan],
                       check=True, capture_output=True)
        for i, out in enumerate(files):
            subprocess.run([opts.convbench, "compare", spec, "--sweep", sweep, "--plan", plan,
                            "--shard", f"{i}/{opts.shards}", "--json", out, "-q", "--device", "cpu",
                            "--memory-only", "--threads", "1"], check=True, capture_output=True)
    shards_s = time.perf_counter() - started
    merged = os.path.join(work, "merged.json")
    # The merge's own peak: wait4 returns the resource use of that one child.
    with tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen([opts.convbench, "merge", *files, "-o", merged], stdout=subprocess.DEVNULL,
                                stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        merge_s = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            err.seek(0)
            print(f"bench-merge: merge exited {proc.returncode}: {err.read().decode()[:500]}", file=sys.stderr)
            return 1
    peak_kib = usage.ru_maxrss
    with open(merged) as f:
        rows = len(json.load(f)["results"])
    shard_bytes = sum(os.path.getsize(x) for x in files)
    print(f"shards: {opts.shards} files, {shard_bytes / 2**20:.1f} MiB in all (plan file "
          f"{os.path.getsize(plan) / 2**20:.2f} MiB)"
          + ("" if opts.merge_only else f", run in {shards_s:.0f} s"))
    print(f"merge: {merge_s:.2f} s, peak RSS {peak_kib / 1024:.0f} MiB; merged file {os.path.getsize(merged) / 2**20:.2f} MiB, {rows} rows")
    if not opts.keep:
        for x in files + [spec, plan, merged]:
            os.unlink(x)
        os.rmdir(work)
    return 0


if __name__ == "__main__":
    sys.exit(main())
