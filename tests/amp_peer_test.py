#!/usr/bin/python3
"""Mixed precision against PyTorch: the seed blocks (configs/seed-blocks.yaml) and MyBlock
(configs/my-block.yaml) under `precision: amp_bfloat16` and `amp_float16`, run by the peer under
torch.autocast("cpu", dtype=...) with float32 modules (MyBlock in both layouts); and the memory policies
(configs/memory-policies.yaml) under amp_float16.
- Parameters, buffers, MACs and the bytes autograd saves in one training forward (the cast copies
  of inputs and weights, the half-precision activations, the float32 batch norm statistics) equal
  `convbench analyze`'s, to the byte.
- The peer's AMP training step (tensor dumps: float32 input, weights and gradients, the forward
  under autocast) replayed by `convbench verify` on the reference backend, which rounds every
  tensor to its dtype as PyTorch stores it: output, every parameter gradient and the running
  statistics agree within verify's AMP tolerance.

Usage: amp_peer_test.py CONVBENCH_BINARY SOURCE_DIR
Prints "SKIP: torch not importable" and exits 0 where PyTorch is missing.
"""
import json
import os
import subprocess
import sys
import tempfile

try:
    import torch  # noqa: F401
except ImportError as e:
    print(f"SKIP: torch not importable by {sys.executable}: {e}")
    sys.exit(0)

from peer_in_process import run_torch_peer  # noqa: E402

# Small enough for a CPU training step per variant in seconds; the rules do not depend on size.
# The memory policies (recompute reruns under a fresh autocast cache, inplace_abn keeps float32
# statistics) under float16, whose loss scaling is the longer path, in one layout.
# MyBlock in both layouts; the seed blocks in the layout they were written in (the test command's
# time is bounded), in both with CONVBENCH_PEER_FULL=1 (scripts/peer-check.sh).
BOTH_LAYOUTS = ["layout=channels_first,channels_last"]
FULL = os.environ.get("CONVBENCH_PEER_FULL") == "1"
RUNS = [(config, mode, ["size=8", "batch=2"] + (BOTH_LAYOUTS if FULL or config == "my-block.yaml" else []))
        for config in ("seed-blocks.yaml", "my-block.yaml") for mode in ("amp_bfloat16", "amp_float16")]
RUNS.append(("memory-policies.yaml", "amp_float16", ["size=8", "batch=2"]))
COUNTED = ("params", "buffers", "output_shape")


def rows(path):
    with open(path) as f:
        return {(r["block"], r["variant"], r["point_label"]): r for r in json.load(f)["results"]}


def verify_steps(binary, spec, dumps, sweep_args):
    """`convbench verify` of the peer's dumped AMP steps on the reference backend; the failures."""
    run = subprocess.run([binary, "verify", spec, dumps, "--device", "reference"] + sweep_args,
                         capture_output=True, text=True)
    print(run.stdout, end="")
    if run.returncode != 0 or " 0 failed" not in run.stdout or "missing" in run.stdout:
        print(f"verify exited {run.returncode}: {run.stderr}")
        return 1
    return 0


def main():
    binary, source = sys.argv[1], sys.argv[2]
    failures, compared = 0, 0
    for config, mode, sweeps in RUNS:
        sweep_args = [a for s in [f"precision={mode}"] + sweeps for a in ("--sweep", s)]
        spec = os.path.join(source, "configs", config)
        with tempfile.TemporaryDirectory() as tmp:
            ours_path, theirs_path = os.path.join(tmp, "analyze.json"), os.path.join(tmp, "peer.json")
            subprocess.run([binary, "analyze", spec, "--json", ours_path] + sweep_args, check=True,
                           stdout=subprocess.DEVNULL)
            run_torch_peer([spec, "--json", theirs_path, "--convbench", binary, "--min-time", "0.001",
                            "--min-samples", "1", "--warmup", "0", "--timeout", "0.2", "--dump-tensors", tmp]
                           + sweep_args)
            ours, theirs = rows(ours_path), rows(theirs_path)
            failures += verify_steps(binary, spec, tmp, sweep_args)
        if list(ours) != list(theirs):
            print(f"{config}: rows differ: {list(ours)} vs {list(theirs)}")
            failures += 1
            continue
        for key, row in ours.items():
            peer = theirs[key]
            problems = []
            if peer["status"] != "ok":
                problems.append(f"peer status {peer['status']}: {peer['message']}")
            if peer.get("precision") != mode:
                problems.append(f"the peer ran precision {peer.get('precision')}")
            for field in COUNTED:
                if row[field] != peer[field]:
                    problems.append(f"{field}: convbench {row[field]}, PyTorch {peer[field]}")
            for direction in ("forward", "backward_data", "backward_weight"):
                if row["macs"][direction] != peer["macs"][direction]:
                    problems.append(f"{direction} MACs: convbench {row['macs'][direction]}, "
                                    f"PyTorch {peer['macs'][direction]}")
            ours_saved = row["memory"]["predicted"]["saved_bytes"]
            theirs_saved = peer["memory"]["saved_bytes"] if peer.get("memory") else None
            if ours_saved != theirs_saved:
                problems.append(f"saved bytes: convbench {ours_saved}, PyTorch autocast {theirs_saved}")
            compared += 1
            print(f"{config} {key[0]}/{key[1]} [{key[2]}]: saved {ours_saved} bytes, "
                  + ("agree" if not problems else "; ".join(problems)))
            failures += bool(problems)
    if compared == 0:
        print("no rows compared")
        failures += 1
    print(f"{compared} rows, {failures} failed")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
