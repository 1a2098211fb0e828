#!/usr/bin/env python3
"""Whole torchvision models exported as their users export them, read by convbench as a model file
(`convbench analyze MODEL.onnx --input ...`, issue 52): resnet50, efficientnet_b0, mobilenet_v2,
mobilenet_v3_large, convnext_tiny, shufflenet_v2_x1_0, densenet121, regnet_y_400mf and the video
r3d_18, each exported with the TorchScript exporter in training mode (the recipe
configs/README.md gives for a training step) at a small input (2x3x64x64; r3d_18 1x3x8x32x32),
so that the peer tier stays bounded in time. For each:

- the parameters are torchvision's exact count;
- the forward MACs of every conv and linear equal PyTorch's (forward hooks on the modules);
- the bytes autograd saves for backward in one training forward equal convbench's saved bytes
  but for named rules: the classifier's nn.Dropout keeps float32 noise on the CPU where convbench
  keeps a 1-byte mask (3 bytes an element more in PyTorch); ShuffleNetV2's torch.chunk gives
  views where convbench's slice keeps a copy; DenseNet's torch.cat of one input copies what
  convbench reads as the input itself;
- convbench runs its training step on the cpu backend (`compare --device cpu`, one sample).

And the same model exported with PyTorch's default call is read for inference with the same
forward MACs (the batch norms folded away). usage: onnx_models_peer_test.py CONVBENCH
Exits 0 with "SKIP: ..." where torch or torchvision cannot be imported.
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest
import warnings

try:
    import torch
    import torchvision
except ImportError as e:
    print(f"SKIP: torch not importable with torchvision by {sys.executable}: {e}")
    sys.exit(0)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from peer.networks import autograd_saved_bytes, module_counts  # noqa: E402

CONVBENCH = None
IMAGE = (2, 3, 64, 64)
VIDEO = (1, 3, 8, 32, 32)
# model -> (constructor, input shape, torchvision's published parameter count)
MODELS = {
    "resnet50": (torchvision.models.resnet50, IMAGE, 25_557_032),
    "efficientnet_b0": (torchvision.models.efficientnet_b0, IMAGE, 5_288_548),
    "mobilenet_v2": (torchvision.models.mobilenet_v2, IMAGE, 3_504_872),
    "mobilenet_v3_large": (torchvision.models.mobilenet_v3_large, IMAGE, 5_483_032),
    "convnext_tiny": (torchvision.models.convnext_tiny, IMAGE, 28_589_128),
    "shufflenet_v2_x1_0": (torchvision.models.shufflenet_v2_x1_0, IMAGE, 2_278_604),
    "densenet121": (torchvision.models.densenet121, IMAGE, 7_978_856),
    "regnet_y_400mf": (torchvision.models.regnet_y_400mf, IMAGE, 4_344_144),
    "r3d_18": (torchvision.models.video.r3d_18, VIDEO, 33_371_472),
}


def run(*args):
    r = subprocess.run([CONVBENCH, *args], capture_output=True, text=True)
    if r.returncode != 0:
        raise AssertionError(f"convbench {' '.join(args)}: exit {r.returncode}: {r.stderr[-2000:]}")
    return r.stdout


def shape_text(shape):
    return "x".join(str(d) for d in shape)


def rule_elements(make, shape):
    """The elements of the two named rules in one training forward of the model: what its
    nn.Dropout modules drop (PyTorch keeps float32 noise on the CPU, convbench a 1-byte mask: 3
    bytes an element), and the x1 halves of ShuffleNetV2's stride-1 units (torch.chunk gives views:
    torchvision's conv on x2 keeps the whole unit input, convbench's on its copy of x2: 4 bytes an
    element of x1 more in PyTorch)."""
    from torchvision.models import shufflenetv2
    counts = {"dropout": 0, "chunk": 0}

    def dropout(module, inputs, output):
        counts["dropout"] += inputs[0].numel()

    def unit(module, inputs, output):
        if module.stride == 1:
            counts["chunk"] += inputs[0].numel() // 2

    torch.manual_seed(0)
    model = make(weights=None).train()
    for m in model.modules():
        if isinstance(m, torch.nn.Dropout):
            m.register_forward_hook(dropout)
        if isinstance(m, shufflenetv2.InvertedResidual):
            m.register_forward_hook(unit)
    with torch.no_grad():
        model(torch.zeros(shape))
    return counts["dropout"], counts["chunk"]


class WholeModels(unittest.TestCase):
    folder = None

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.folder = cls.tmp.name
        for name, (make, shape, _) in MODELS.items():
            torch.manual_seed(0)
            model = make(weights=None)
            x = torch.randn(shape)
            torch.onnx.export(model, (x,), os.path.join(cls.folder, name + ".onnx"), dynamo=False,
                              training=torch.onnx.TrainingMode.TRAINING, do_constant_folding=False)
            torch.onnx.export(model, (x,), os.path.join(cls.folder, name + "-default.onnx"))

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def model_file(self, name):
        return os.path.join(self.folder, name + ".onnx")

    def analyze(self, name, suffix=""):
        _, shape, _ = MODELS[name]
        doc = json.loads(run("analyze", os.path.join(self.folder, name + suffix + ".onnx"),
                             "--input", shape_text(shape), "--json", "-"))
        return doc["results"][0]


    def test_parameters_macs_and_saved_bytes_are_pytorchs(self):
        for name, (make, shape, published) in MODELS.items():
            with self.subTest(model=name):
                row = self.analyze(name)
                self.assertEqual(row["params"], published)
                torch.manual_seed(0)
                _, _, macs, _ = module_counts(make(weights=None), torch.zeros(shape))
                self.assertEqual(row["macs"]["forward"], macs)
                torch.manual_seed(0)
                theirs = autograd_saved_bytes(make(weights=None), torch.randn(shape))
                ours = row["memory"]["predicted"]["saved_bytes"]
                dropout, chunk_views = rule_elements(make, shape)
                rule = ours + 3 * dropout + 4 * chunk_views
                print(f"{name}: params {row['params']:,}, forward MACs {macs:,}, saved {ours:,} B "
                      f"(PyTorch {theirs:,} B; dropout noise {3 * dropout:,} B, chunk views {4 * chunk_views:,} B)")
                self.assertEqual(rule, theirs, f"ours {ours:,} + rules, PyTorch's {theirs:,}")

    def test_the_default_export_is_read_for_inference(self):
        for name, (make, shape, _) in MODELS.items():
            with self.subTest(model=name):
                row = self.analyze(name, "-default")
                if name == "convnext_tiny":
                    # No batch norm to fold: it trains, with the module's parameters (the
                    # classifier's zero bias that the exporter dropped restored), its head's
                    # LayerNorm2d reading the pooled value through the flatten and as_strided
                    # Gather that the default exporter writes.
                    self.assertEqual(row["mode"], "train")
                    self.assertEqual(row["params"], MODELS[name][2])
                else:
                    self.assertEqual(row["mode"], "infer")
                torch.manual_seed(0)
                _, _, macs, _ = module_counts(make(weights=None), torch.zeros(shape))
                self.assertEqual(row["macs"]["forward"], macs)

    def test_a_training_step_runs_on_the_cpu(self):
        for name in ("mobilenet_v3_large", "convnext_tiny", "shufflenet_v2_x1_0"):
            with self.subTest(model=name):
                _, shape, _ = MODELS[name]
                doc = json.loads(run("compare", self.model_file(name), "--input", shape_text(shape),
                                     "--device", "cpu", "--min-samples", "1", "--min-time", "0", "--json", "-"))
                row = doc["results"][0]
                self.assertEqual(row["status"], "ok", row.get("message"))
                self.assertGreater(row["time_ms"]["step"]["median"], 0)


if __name__ == "__main__":
    warnings.filterwarnings("ignore")
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    CONVBENCH = sys.argv.pop(1)
    unittest.main()
