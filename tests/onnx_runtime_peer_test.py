#!/usr/bin/env python3
"""ONNX Runtime as the inference peer of `convbench export`: every variant of tests/data/
onnx-runtime-peer.yaml (seed 000's blocks, a channels-last block, RepVGG and its fold, custom
blocks that use every op kind but batch_norm_act, and a small U-Net network) is exported, run in ONNX Runtime on the CPU on
a random input, and its output written as an inference tensor dump (mode infer, the seed of the
weights the export wrote). `convbench verify` then runs convbench's own inference forward with its
starting weights for that seed on the same input and compares: every variant must agree within
verify's cpu tolerance, a relative error ||convbench - onnxruntime|| / ||onnxruntime|| of 1e-4
(both compute in float32 with different summation orders; an op mapped wrongly is off by far more).
A dump with one element changed by 1e-2 must then be a mismatch: the comparison can fail.

usage: onnx_runtime_peer_test.py CONVBENCH SOURCE_DIR   (run with the peer environment's Python)
"""
import json
import os
import re
import subprocess
import sys
import tempfile

binary, source = sys.argv[1], sys.argv[2]
try:
    import numpy as np
    import onnxruntime as ort
except ImportError as e:
    print(f"SKIP: torch not importable: onnxruntime or numpy missing ({e}; scripts/setup-peers.sh installs them)")
    sys.exit(0)

SPEC = os.path.join(source, "tests/data/onnx-runtime-peer.yaml")
SEED = 42
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL:", what)


def dump_name(block, variant):
    # pipeline/peer_check.cpp's peer_dump_file_name for a block without sweep points
    raw = f"{block}__{variant}__default"
    return "".join(c if c.isalnum() or c in "_-.,=+" else "_" for c in raw) + ".json"


def tensor(a):
    return {"shape": list(a.shape), "data": a.astype(np.float64).reshape(-1).tolist()}


def run(args):
    return subprocess.run([binary] + args, capture_output=True, text=True)


with tempfile.TemporaryDirectory() as tmp:
    models, dumps = os.path.join(tmp, "models"), os.path.join(tmp, "dumps")
    os.mkdir(dumps)
    r = run(["export", SPEC, "--onnx", models, "--seed", str(SEED)])
    check(r.returncode == 0, f"export: exit {r.returncode}: {r.stderr}")
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    rng = np.random.default_rng(7)
    count = 0
    for block in sorted(os.listdir(models)):
        for name in sorted(os.listdir(os.path.join(models, block))):
            variant = name[:-len(".onnx")]
            session = ort.InferenceSession(os.path.join(models, block, name), options,
                                           providers=["CPUExecutionProvider"])
            (inp,), (out,) = session.get_inputs(), session.get_outputs()
            x = rng.uniform(-1, 1, size=inp.shape).astype(np.float32)
            (y,) = session.run([out.name], {inp.name: x})
            if y.ndim == 2:  # a linear head's (N, out): convbench's output is (N, out, 1, ...)
                y = y.reshape(y.shape + (1,) * (x.ndim - 2))
            doc = {"block": block, "variant": variant, "mode": "infer", "seed": SEED,
                   "peer": f"onnxruntime {ort.__version__}", "input": tensor(x), "output": tensor(y)}
            with open(os.path.join(dumps, dump_name(block, variant)), "w") as f:
                json.dump(doc, f)
            count += 1
    check(count == 19, f"{count} models exported and run, expected the spec's 19 variants")

    r = run(["verify", SPEC, dumps])
    print(r.stdout, end="")
    check(r.returncode == 0, f"verify: exit {r.returncode}: {r.stderr}")
    oks = re.findall(r"\boutput\s+ok$", r.stdout, re.M)
    check(len(oks) == count, f"{len(oks)} variants agree, expected {count}")

    # The check can fail: one output element of one dump off by 1e-2.
    path = os.path.join(dumps, dump_name("zoo", "gates"))
    with open(path) as f:
        doc = json.load(f)
    doc["output"]["data"][5] += 1e-2
    with open(path, "w") as f:
        json.dump(doc, f)
    r = run(["verify", SPEC, dumps])
    check(r.returncode == 1 and re.search(r"^zoo\s.*gates.*mismatch$", r.stdout, re.M) is not None,
          f"a changed output must be a mismatch: exit {r.returncode}\n{r.stdout}")

if failures:
    print(f"{len(failures)} failure(s)")
    sys.exit(1)
print(f"ok: {count} exported variants, onnxruntime {ort.__version__} agrees with convbench's forward")
