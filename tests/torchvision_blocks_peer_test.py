#!/usr/bin/env python3
"""ctest `torchvision_blocks_peer`: the block kinds that are torchvision's blocks, as
configs/efficient-blocks.yaml uses them, against torchvision's own modules.

    torchvision_blocks_peer_test.py PATH/TO/convbench     (in the peer environment: torch, torchvision)

For every variant of those kinds in that config (MobileNetV2's and MobileNetV3's InvertedResidual,
EfficientNet's MBConv, EfficientNetV2's FusedMBConv, ConvNeXt's CNBlock, ShuffleNetV2's
InvertedResidual in both strides, DenseNet's _DenseLayer with its concatenation), at the config's
own size and at a reduced one (batch 2, 16x16):
- parameters and buffers equal the torchvision module's (num_batches_tracked left out, as
  convbench counts buffers);
- forward MACs of every conv the module runs (forward hooks) and the output shape are equal;
- the bytes autograd saves for backward in one training forward (torch.autograd.graph.
  saved_tensors_hooks; parameters, buffers and the block input left out, as convbench's `saved`)
  equal convbench's, but for the two rules named in that test.
Exits 0 with "SKIP: ..." where torch or torchvision cannot be imported.
"""
import functools
import json
import os
import subprocess
import sys
import unittest
import warnings

try:
    import torch
    import torch.nn as nn
    from torchvision.models import convnext, densenet, efficientnet, mobilenetv2, mobilenetv3, shufflenetv2
except ImportError as e:
    print(f"SKIP: torch not importable with torchvision by {sys.executable}: {e}")
    sys.exit(0)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from peer.networks import autograd_saved_bytes, module_counts  # noqa: E402
CONFIG = os.path.join(ROOT, "configs", "efficient-blocks.yaml")
CONVBENCH = None
REDUCED = ("batch=2", "size=16")


class DenseLayerWithItsConcat(nn.Module):
    """A _DenseLayer and the concatenation its _DenseBlock does after it."""

    def __init__(self, cin, growth, bn_size):
        super().__init__()
        self.layer = densenet._DenseLayer(cin, growth, bn_size, drop_rate=0.0, memory_efficient=False)

    def forward(self, x):
        return torch.cat([x, self.layer([x])], 1)


def torchvision_module(block, variant):
    """torchvision's module for a variant of configs/efficient-blocks.yaml, from torchvision's own
    classes and the numbers the variant's resolved spec gives."""
    cin, cout, kind = block["in_channels"], block["out_channels"], variant["kind"]
    k, s = block["kernel"][0], block["stride"][0]
    if kind == "inverted_residual" and not variant["se"] and variant["act"] == "relu6" and k == 3:
        return mobilenetv2.InvertedResidual(cin, cout, s, variant["expand"])
    if kind == "inverted_residual":
        # MobileNetV2's class has a 3x3 kernel only; MobileNetV3's takes any kernel, with ReLU
        # ("RE") or hardswish ("HS"): a ReLU6 block is MobileNetV3's with its ReLUs made
        # MobileNetV2's ReLU6(inplace=True) (the squeeze-excitation's ReLU stays).
        bn = functools.partial(nn.BatchNorm2d, eps=0.001, momentum=0.01)
        act = {"hardswish": "HS", "relu": "RE", "relu6": "RE"}[variant["act"]]
        config = mobilenetv3.InvertedResidualConfig(cin, k, variant["hidden"], cout, variant["se"], act, s, 1, 1.0)
        module = mobilenetv3.InvertedResidual(config, bn)
        if variant["act"] == "relu6":
            for unit in module.block:
                if isinstance(unit, nn.Sequential) and isinstance(unit[-1], nn.ReLU):
                    unit[-1] = nn.ReLU6(inplace=True)
        return module
    if kind == "mbconv":
        config = efficientnet.MBConvConfig(variant["expand"], k, s, cin, cout, 1)
        return efficientnet.MBConv(config, variant["drop_path"], nn.BatchNorm2d)
    if kind == "fused_mbconv":
        config = efficientnet.FusedMBConvConfig(variant["expand"], k, s, cin, cout, 1)
        return efficientnet.FusedMBConv(config, variant["drop_path"], nn.BatchNorm2d)
    if kind == "convnext":
        return convnext.CNBlock(cin, 1e-6, variant["drop_path"])
    if kind == "shufflenet_unit":
        return shufflenetv2.InvertedResidual(cin, cout, s)
    if kind == "densenet_layer":
        return DenseLayerWithItsConcat(cin, cout - cin, variant["bn_size"])
    return None


def run_json(*args):
    run = subprocess.run([CONVBENCH, *args], capture_output=True, text=True)
    if run.returncode != 0:
        raise AssertionError(f"convbench {' '.join(args)} failed: {run.stderr}")
    return json.loads(run.stdout)


@functools.lru_cache(maxsize=None)
def config_rows(*sweeps):
    """(resolved block, resolved variant, analyze row, the variant's resolved ops) for every variant
    of a torchvision kind in the config."""
    args = []
    for s in sweeps:
        args += ["--sweep", s]
    resolved = run_json("validate", CONFIG, "--resolved-json", "-", *args)["blocks"]
    rows = run_json("analyze", CONFIG, "--json", "-", *args)["results"]
    out = []
    for block in resolved:
        for variant in block["variants"]:
            if variant["kind"] in ("standard",):
                continue
            row = next(r for r in rows if r["block"] == block["name"] and r["variant"] == variant["name"])
            out.append((block, variant, row))
    return out


class TorchvisionBlocks(unittest.TestCase):
    def test_every_kind_is_here(self):
        kinds = {v["kind"] for _, v, _ in config_rows()}
        self.assertEqual(kinds, {"inverted_residual", "mbconv", "fused_mbconv", "convnext", "shufflenet_unit",
                                 "densenet_layer"})

    def test_parameters_buffers_macs_and_output_are_torchvisions(self):
        for sweeps in ((), REDUCED):
            for block, variant, row in config_rows(*sweeps):
                with self.subTest(block=block["name"], variant=variant["name"], sweeps=sweeps):
                    module = torchvision_module(block, variant)
                    x = torch.zeros(block["batch"], block["in_channels"], *block["size"])
                    params, buffers, macs, shape = module_counts(module, x)
                    self.assertEqual(row["params"], params)
                    self.assertEqual(row["buffers"], buffers)
                    self.assertEqual(row["macs"]["forward"], macs)
                    self.assertEqual(row["output_shape"], list(shape))

    def test_saved_bytes_differ_from_torchvisions_by_the_named_rules(self):
        # Equal, but where torchvision keeps a tensor convbench does not, or shares one it copies:
        # - ShuffleNetV2 at stride 1: x.chunk(2) gives views of the block input, so the conv after
        #   x2 keeps the input's own storage (the input is left out of both counts); convbench's
        #   slice copies x2 and the conv keeps the copy: convbench counts split.1's bytes more.
        # - DenseNet: _DenseLayer concatenates its list of inputs even when the list holds one
        #   tensor, and norm1 keeps that copy; convbench's norm1 reads the input itself (a layer
        #   deeper in a dense block reads a concatenation in both): torchvision counts the
        #   input's bytes more.
        for block, variant, row in config_rows(*REDUCED):
            with self.subTest(block=block["name"], variant=variant["name"]):
                torch.manual_seed(0)
                module = torchvision_module(block, variant)
                x = torch.randn(block["batch"], block["in_channels"], *block["size"])
                theirs = autograd_saved_bytes(module, x)
                ours = row["memory"]["predicted"]["saved_bytes"]
                input_bytes = 4 * x.numel()
                stride_one_split = variant["kind"] == "shufflenet_unit" and block["stride"][0] == 1
                if stride_one_split:
                    ours -= input_bytes // 2
                if variant["kind"] == "densenet_layer":
                    theirs -= input_bytes
                self.assertEqual(ours, theirs, f"ours {ours:,}, torchvision's {theirs:,}")


if __name__ == "__main__":
    warnings.filterwarnings("ignore")
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    CONVBENCH = sys.argv.pop(1)
    unittest.main()
