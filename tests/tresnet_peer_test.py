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
- the output shape.
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
    import torch.nn as nn
    from timm.layers import BlurPool2d
except ImportError as e:
    print(f"SKIP: torch not importable with timm by {sys.executable}: {e}")
    sys.exit(0)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
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
    """Parameters, buffers and hooked forward MACs of timm's tresnet_m on input x."""
    warnings.filterwarnings("ignore")
    model = timm.create_model("tresnet_m", pretrained=False).train()
    macs = []

    def hook(module, inputs, output):
        if isinstance(module, nn.Conv2d):
            k = module.kernel_size[0] * module.kernel_size[1]
            macs.append(output.numel() * (module.in_channels // module.groups) * k)
        elif isinstance(module, nn.Linear):
            macs.append(output.numel() * module.in_features)
        elif isinstance(module, BlurPool2d):
            macs.append(output.numel() * module.filt_size * module.filt_size)

    for m in model.modules():
        if isinstance(m, (nn.Conv2d, nn.Linear, BlurPool2d)):
            m.register_forward_hook(hook)
    with torch.no_grad():
        out = model(x)
    params = sum(p.numel() for p in model.parameters())
    buffers = sum(b.numel() for name, b in model.named_buffers() if not name.endswith("num_batches_tracked"))
    return params, buffers, sum(macs), list(out.shape)


class TResNetM(unittest.TestCase):
    def test_full_size_parameters_are_timms(self):
        row = analyze()["tresnet"]
        params, buffers, _, _ = timm_counts(torch.zeros(1, 3, 224, 224))
        self.assertEqual(params, 31_389_032)
        self.assertEqual(row["params"], params)
        self.assertEqual(row["buffers"], buffers)
        self.assertEqual(row["input_shape"], [16, 3, 224, 224])

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
