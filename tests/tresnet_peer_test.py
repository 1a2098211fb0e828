#!/usr/bin/env python3
"""ctest `tresnet_peer`: configs/tresnet-m.yaml against timm's own tresnet_m (seed 001's network).

    tresnet_peer_test.py PATH/TO/convbench     (in the peer environment: timm, torch)

- parameters: 31,389,032 at 224x224, timm's count, for the TResNet variant;
- buffers: BatchNorm's running statistics and the anti-alias blur filters (timm's BlurPool2d
  keeps its filter as a non-persistent buffer, convbench as a frozen conv's weight; timm's
  num_batches_tracked counters are not counted, as convbench counts buffers);
- forward MACs at a reduced size (batch 2, 64x64), from forward hooks on the modules timm runs:
  every Conv2d and Linear, plus each BlurPool2d (a depthwise 3x3 conv timm runs through
  F.conv2d, so no Conv2d hook sees it: its MACs are counted from its output, 9 per element);
- the output shape;
- saved bytes at the reduced size, which differ by two rules named in that test (timm's in-place
  LeakyReLU and its reflect-padded blur input), and by nothing else.
Exits 0 with "SKIP: ..." where timm or torch cannot be imported.
"""
import json
import os
import subprocess
import sys
import unittest
import warnings

os.environ["HF_HUB_OFFLINE"] = "1"  # no network: the weights are never needed
try:
    import timm
    import torch
    from timm.layers import BlurPool2d
except ImportError as e:
    print(f"SKIP: torch not importable with timm by {sys.executable}: {e}")
    sys.exit(0)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from peer.networks import autograd_saved_bytes, module_counts  # noqa: E402
CONFIG = os.path.join(ROOT, "configs", "tresnet-m.yaml")
CONVBENCH = None


def analyze(*sweeps):
    args = [CONVBENCH, "analyze", CONFIG, "--json", "-"]
    for s in sweeps:
        args += ["--sweep", s]
    run = subprocess.run(args, capture_output=True, text=True)
    if run.returncode != 0:
        raise AssertionError(f"{' '.join(args)} failed: {run.stderr}")
    return {row["variant"]: row for row in json.loads(run.stdout)["results"]}


def timm_counts(x):
    """Parameters, buffers and hooked forward MACs of timm's tresnet_m on input x (its anti-aliasing
    BlurPool2d counted as a depthwise filt_size x filt_size conv)."""
    warnings.filterwarnings("ignore")
    model = timm.create_model("tresnet_m", pretrained=False)

    def blur_macs(module, output):
        return output.numel() * module.filt_size * module.filt_size if isinstance(module, BlurPool2d) else None

    return module_counts(model, x, train=True, extra_macs=blur_macs)


class TResNetM(unittest.TestCase):
    def test_full_size_parameters_are_timms(self):
        row = analyze()["tresnet"]
        params, buffers, _, _ = timm_counts(torch.zeros(1, 3, 224, 224))
        self.assertEqual(params, 31_389_032)
        self.assertEqual(row["params"], params)
        self.assertEqual(row["buffers"], buffers)
        self.assertEqual(row["input_shape"], [16, 3, 224, 224])

    def test_reduced_size_saved_bytes_differ_from_timms_by_the_named_rules(self):
        # The distinct storages autograd keeps for backward in one training forward (parameters,
        # buffers and the input left out, as convbench's `saved`) differ from convbench's by two
        # things timm's code does, and by nothing else:
        #  - timm's LeakyReLUs run in place (BatchNormAct2d): the activation's output is the
        #    batch norm's output storage, which the activation keeps (its result) for backward,
        #    where convbench's leaky_relu keeps its input and writes a new output that the next op
        #    keeps: convbench holds each saved leaky_relu output once more;
        #  - timm's BlurPool2d pads with F.pad(mode="reflect") and then convolves without
        #    padding: the conv keeps that padded copy, N x C x (H+2) x (W+2), where convbench's
        #    zero-padded conv keeps its input.
        # (timm's in-place ReLUs change nothing: ReLU keeps its result either way.)
        sweeps = ("batch=2", "size=64")
        explain = subprocess.run([CONVBENCH, "explain", CONFIG, "--memory-only", "--filter", "^tresnet-m/tresnet$",
                                  "--json", "-", "--sweep", sweeps[0], "--sweep", sweeps[1]],
                                 capture_output=True, text=True)
        self.assertEqual(explain.returncode, 0, explain.stderr)
        memory = json.loads(explain.stdout)["blocks"][0]["variants"][0]["memory"]
        resolved = subprocess.run([CONVBENCH, "validate", CONFIG, "--resolved-json", "-",
                                   "--sweep", sweeps[0], "--sweep", sweeps[1]], capture_output=True, text=True)
        self.assertEqual(resolved.returncode, 0, resolved.stderr)
        variant = next(v for v in json.loads(resolved.stdout)["networks"][0]["variants"] if v["name"] == "tresnet")
        shapes = {"input": [2, 3, 64, 64]}
        for op in variant["expanded_ops"]:
            shapes[op["name"]] = op["output_shape"]
        leaky = {op["name"] for op in variant["expanded_ops"] if op["op"] == "leaky_relu"}
        ours = sum(t["bytes"] for t in memory["saved"] if t["counted"])
        self.assertEqual(ours, analyze(*sweeps)["tresnet"]["memory"]["predicted"]["saved_bytes"])
        in_place = sum(t["bytes"] for t in memory["saved"] if t["counted"] and t["producer"] in leaky)
        reflect_padded = 0
        for op in variant["expanded_ops"]:
            if op["op"] == "conv" and op.get("frozen"):
                n, c, h, w = shapes[op["inputs"][0]]
                reflect_padded += n * c * (h + 2) * (w + 2) * 4
        self.assertGreater(in_place, 0)
        self.assertGreater(reflect_padded, 0)

        warnings.filterwarnings("ignore")
        model = timm.create_model("tresnet_m", pretrained=False).train()
        torch.manual_seed(0)
        x = torch.randn(2, 3, 64, 64)

        theirs = autograd_saved_bytes(model, x)
        self.assertEqual(theirs, ours - in_place + reflect_padded,
                         f"timm {theirs:,}, convbench {ours:,}: in-place {in_place:,}, reflect pad {reflect_padded:,}")

    def test_reduced_size_counts_match_timms_modules(self):
        row = analyze("batch=2", "size=64")["tresnet"]
        torch.manual_seed(0)
        params, buffers, macs, shape = timm_counts(torch.randn(2, 3, 64, 64))
        self.assertEqual(row["params"], params)
        self.assertEqual(row["buffers"], buffers)
        self.assertEqual(row["macs"]["forward"], macs)
        self.assertEqual(row["output_shape"][:2], shape[:2])


if __name__ == "__main__":
    CONVBENCH = os.path.abspath(sys.argv.pop(1))
    unittest.main()
