#!/usr/bin/env python3
"""ctest `torchvision_nets_peer`: the networks of configs/, as configured, against torchvision's
own models (built with weights=None: nothing is downloaded).

    torchvision_nets_peer_test.py PATH/TO/convbench     (in the peer environment: torch, torchvision)

For the networks of configs/seed001-efficient-nets.yaml: resnet50 (torchvision's resnet50),
efficientnet-b0 (efficientnet_b0), mobilenet-v2 (mobilenet_v2), mobilenet-v3-large
(mobilenet_v3_large) and regnety-400mf (regnet_y_400mf); of configs/convnext-shufflenet.yaml:
convnext-tiny (convnext_tiny) and shufflenet-v2-x1.0 (shufflenet_v2_x1_0); and of
configs/densenet121.yaml: densenet-121 (densenet121):
- parameters and buffers at 224x224 equal torchvision's (num_batches_tracked left out, as convbench
  counts buffers), and the published parameter counts: 25,557,032, 5,288,548, 3,504,872,
  5,483,032, 4,344,144, 28,589,128, 2,278,604 and 7,978,856;
- every batch norm's eps and momentum and every layer norm's eps, in order, are torchvision's
  (MobileNetV3's 0.001 and 0.01, ConvNeXt's 1e-6);
- every stochastic depth's p that drops anything, in order, is torchvision's (EfficientNet's
  0.2 * block / 16, ConvNeXt's 0.1 * block / 17);
- at a reduced size (batch 2, 64x64): forward MACs of every Conv2d and Linear from forward hooks on
  the modules torchvision runs, the output shape, and the bytes autograd saves for backward in one
  training forward (torch.autograd.graph.saved_tensors_hooks), which differ from convbench's by
  the two rules named in that test (the CPU dropout's float32 noise; ShuffleNetV2's chunk views)
  and by nothing else.
Exits 0 with "SKIP: ..." where torch or torchvision cannot be imported.
"""
import json
import os
import subprocess
import sys
import unittest
import warnings

try:
    import torch
    import torch.nn as nn
    import torchvision
except ImportError as e:
    print(f"SKIP: torch not importable with torchvision by {sys.executable}: {e}")
    sys.exit(0)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from peer.networks import autograd_saved_bytes, module_counts  # noqa: E402
CONVBENCH = None
REDUCED = ("batch=2", "size=64")

SEED001 = os.path.join(ROOT, "configs", "seed001-efficient-nets.yaml")
MORE = os.path.join(ROOT, "configs", "convnext-shufflenet.yaml")
DENSENET = os.path.join(ROOT, "configs", "densenet121.yaml")
# network -> (its config, torchvision constructor, torchvision's published parameter count)
NETWORKS = {
    "resnet50": (SEED001, lambda: torchvision.models.resnet50(weights=None), 25_557_032),
    "mobilenet-v2": (SEED001, lambda: torchvision.models.mobilenet_v2(weights=None), 3_504_872),
    "efficientnet-b0": (SEED001, lambda: torchvision.models.efficientnet_b0(weights=None), 5_288_548),
    "mobilenet-v3-large": (SEED001, lambda: torchvision.models.mobilenet_v3_large(weights=None), 5_483_032),
    "regnety-400mf": (SEED001, lambda: torchvision.models.regnet_y_400mf(weights=None), 4_344_144),
    "convnext-tiny": (MORE, lambda: torchvision.models.convnext_tiny(weights=None), 28_589_128),
    "shufflenet-v2-x1.0": (MORE, lambda: torchvision.models.shufflenet_v2_x1_0(weights=None), 2_278_604),
    "densenet-121": (DENSENET, lambda: torchvision.models.densenet121(weights=None), 7_978_856),
}


def run_json(*args):
    run = subprocess.run([CONVBENCH, *args], capture_output=True, text=True)
    if run.returncode != 0:
        raise AssertionError(f"convbench {' '.join(args)} failed: {run.stderr}")
    return json.loads(run.stdout)


_cache = {}


def sweep_args(sweeps):
    args = []
    for s in sweeps:
        args += ["--sweep", s]
    return args


def analyze(name, *sweeps):
    """The network's row of `analyze --json` on the seed's config (the whole file analysed once per
    size)."""
    config = NETWORKS[name][0]
    key = ("analyze", config) + sweeps
    if key not in _cache:
        _cache[key] = run_json("analyze", config, "--json", "-", *sweep_args(sweeps))["results"]
    return next(row for row in _cache[key] if row.get("subject") == "network" and row["block"] == name)


def resolved_ops(name, *sweeps):
    config = NETWORKS[name][0]
    key = ("validate", config) + sweeps
    if key not in _cache:
        _cache[key] = run_json("validate", config, "--resolved-json", "-", *sweep_args(sweeps))["networks"]
    net = next(n for n in _cache[key] if n["name"] == name)
    return net["variants"][0]["expanded_ops"]


def numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


class TorchvisionNetworks(unittest.TestCase):
    def test_full_size_parameters_and_buffers_are_torchvisions(self):
        for name, (_, make, published) in NETWORKS.items():
            with self.subTest(network=name):
                row = analyze(name)
                params, buffers, _, _ = module_counts(make(), torch.zeros(1, 3, 224, 224))
                self.assertEqual(params, published)
                self.assertEqual(row["params"], params)
                self.assertEqual(row["buffers"], buffers)
                self.assertEqual(row["input_shape"], [16, 3, 224, 224])
                self.assertEqual(row["output_shape"][:2], [16, 1000])

    def test_batch_norm_constants_and_drop_rates_are_torchvisions(self):
        for name, (_, make, _) in NETWORKS.items():
            with self.subTest(network=name):
                model = make()
                theirs_bn = [(m.eps, m.momentum) for m in model.modules() if isinstance(m, nn.BatchNorm2d)]
                theirs_ln = [m.eps for m in model.modules() if isinstance(m, nn.LayerNorm)]
                theirs_sd = [m.p for m in model.modules() if type(m).__name__ == "StochasticDepth"]
                ops = resolved_ops(name)
                ours_bn = [(op.get("eps", 1e-5), op.get("momentum", 0.1)) for op in ops if op["op"] == "batch_norm"]
                ours_ln = [op["eps"] for op in ops if op["op"] == "layer_norm"]
                ours_sd = [op["p"] for op in ops if op["op"] == "drop_path"]
                self.assertEqual(len(ours_bn), len(theirs_bn))
                for (e, m), (te, tm) in zip(ours_bn, theirs_bn):
                    self.assertAlmostEqual(e, te, delta=1e-12)
                    self.assertAlmostEqual(m, tm, delta=1e-12)
                self.assertEqual(ours_ln, theirs_ln)
                # torchvision adds StochasticDepth to every MBConv and CNBlock; it acts only on the
                # blocks with the shortcut and a p above 0 (StochasticDepth(0) returns its input),
                # which are the ones convbench's configs give a drop_path.
                residual_sd = [p for p, block in zip(theirs_sd, self.mbconv_blocks(model))
                               if getattr(block, "use_res_connect", True) and p > 0]
                self.assertEqual(len(ours_sd), len(residual_sd))
                for p, tp in zip(ours_sd, residual_sd):
                    self.assertAlmostEqual(p, tp, delta=1e-12)

    @staticmethod
    def mbconv_blocks(model):
        return [m for m in model.modules() if hasattr(m, "stochastic_depth")]

    def test_reduced_size_macs_and_output_match_torchvision(self):
        for name, (_, make, _) in NETWORKS.items():
            with self.subTest(network=name):
                row = analyze(name, *REDUCED)
                _, _, macs, shape = module_counts(make(), torch.zeros(2, 3, 64, 64))
                self.assertEqual(row["macs"]["forward"], macs)
                self.assertEqual(row["output_shape"][:2], shape[:2])

    def test_reduced_size_saved_bytes_differ_from_torchvisions_by_the_named_rule(self):
        # The distinct storages autograd keeps for backward in one training forward (parameters,
        # buffers and the input left out, as convbench's `saved`) differ from convbench's by one
        # rule, and by nothing else: the classifier's nn.Dropout (ResNet and RegNet have none), on the CPU,
        # keeps its noise in float32 (4 bytes an element), where convbench keeps a 1-byte mask
        # (PyTorch's CUDA rule, lib/README.md). Everything else is equal: torchvision's in-place
        # activations keep one storage that their input and output share, and so do convbench's
        # saved tensors (the batch norm's output, which the activation reads, and the
        # activation's output, which the next conv reads, are kept either way); the
        # squeeze-excitation's multiply keeps both operands, and drop_path its N-value noise, in
        # both.
        for name, (_, make, _) in NETWORKS.items():
            with self.subTest(network=name):
                torch.manual_seed(0)
                theirs = autograd_saved_bytes(make(), torch.randn(2, 3, 64, 64))
                ours = analyze(name, *REDUCED)["memory"]["predicted"]["saved_bytes"]
                dropout_elements = 0
                for op in resolved_ops(name, *REDUCED):
                    if op["op"] == "dropout":
                        n = 1
                        for d in op["output_shape"]:
                            n *= d
                        dropout_elements += n
                with_dropout = ("efficientnet-b0", "mobilenet-v2", "mobilenet-v3-large")
                self.assertEqual(dropout_elements, 2 * 1280 if name in with_dropout else 0)
                # ShuffleNetV2's x.chunk(2) gives views: the conv reading x2 keeps the whole block
                # input's storage, where convbench's slice copies x2 and its conv keeps the copy;
                # torchvision keeps x1's half more per stride-1 block.
                chunk_views = 4 * sum(numel(op["output_shape"]) for op in resolved_ops(name, *REDUCED)
                                      if op["op"] == "slice" and op["name"].endswith(".x1"))
                self.assertEqual(chunk_views > 0, name == "shufflenet-v2-x1.0")
                self.assertEqual(ours + 3 * dropout_elements + chunk_views, theirs,
                                 f"ours {ours:,}, torchvision's {theirs:,}")

if __name__ == "__main__":
    warnings.filterwarnings("ignore")
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    CONVBENCH = sys.argv.pop(1)
    unittest.main()
