#!/usr/bin/python3
"""configs/vbnet.yaml and configs/resnet50.yaml against independent PyTorch definitions.

    /usr/bin/python3 tests/network_peer_test.py PATH/TO/convbench

- VBNet: the seed's own module code (tests/vbnet_reference.py), CBR and the post's BottleNeck:
  parameters at the full size (10,052,609 and 1,145,061: what the seed's users printed), and
  parameters, buffers and forward MACs of every conv at a reduced size (--sweep, no edit).
- ResNet-50: torchvision's resnet50 structure written out here (Debian 12 has no
  python3-torchvision): 25,557,032 parameters; the SubtractedConv variants (seed 002) put into
  the 3x3 convs only, or into every conv; parameters, buffers and forward MACs at a reduced size.

MACs are counted with forward hooks on every Conv/ConvTranspose/Linear module, so they come from
the modules PyTorch ran, not from convbench's arithmetic. Exits 0 with "SKIP: ..." without torch.
"""
import json
import os
import subprocess
import sys
import unittest

try:
    import torch
except ImportError as e:
    print(f"SKIP: torch not importable by {sys.executable}: {e}")
    sys.exit(0)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import vbnet_reference  # noqa: E402
from peer.networks import ResNet50, autograd_saved_bytes as saved_bytes, module_counts  # noqa: E402

CONVBENCH = None


def analyze(config, *sweeps):
    args = [CONVBENCH, "analyze", os.path.join(ROOT, "configs", config), "--json", "-"]
    for s in sweeps:
        args += ["--sweep", s]
    run = subprocess.run(args, capture_output=True, text=True)
    if run.returncode != 0:
        raise AssertionError(f"{' '.join(args)} failed: {run.stderr}")
    # The network's rows only: a config may also hold blocks with the same variant names.
    return {row["variant"]: row for row in json.loads(run.stdout)["results"] if row.get("subject") == "network"}


def resolved_network(config, *sweeps):
    args = [CONVBENCH, "validate", os.path.join(ROOT, "configs", config), "--resolved-json", "-"]
    for s in sweeps:
        args += ["--sweep", s]
    run = subprocess.run(args, capture_output=True, text=True)
    if run.returncode != 0:
        raise AssertionError(f"{' '.join(args)} failed: {run.stderr}")
    return json.loads(run.stdout)["networks"][0]


def post_count_ops(variant, input_shape):
    """The post's "GFLOPs" (pthflops' count_ops, as the issue describes it), from convbench's
    expanded graph: conv MACs without bias, 2 per element for batch norm and ReLU, 1 per element
    for an add, 0 for transposed convs, upsampling, concat and dropout."""
    shapes = {"input": input_shape}
    total = 0
    for op in variant["expanded_ops"]:
        out = op["output_shape"]
        shapes[op["name"]] = out
        n = 1
        for d in out:
            n *= d
        if op["op"] == "conv":
            k = 1
            for d in op["kernel"]:
                k *= d
            total += n * (shapes[op["inputs"][0]][1] // op["groups"]) * k
        elif op["op"] in ("batch_norm", "relu"):
            total += 2 * n
        elif op["op"] == "add":
            total += n
    return total


class NetworkConfigs(unittest.TestCase):
    def check_row(self, row, model, x):
        params, buffers, macs, shape = module_counts(model, x, train=True)
        self.assertEqual(row["subject"], "network")
        self.assertEqual(row["params"], params, row["variant"])
        self.assertEqual(row["buffers"], buffers, row["variant"])
        self.assertEqual(row["macs"]["forward"], macs, row["variant"])
        self.assertEqual(row["output_shape"][:2], shape[:2], row["variant"])

    def test_vbnet_full_size_parameters_are_the_seeds(self):
        rows = analyze("vbnet.yaml")
        self.assertEqual(rows["standard"]["params"], 10052609)
        self.assertEqual(rows["post-bottleneck"]["params"], 1145061)
        self.assertEqual(rows["standard"]["input_shape"], [6, 1, 32, 128, 128])
        for bott, variant in ((False, "standard"), (True, "post-bottleneck")):
            self.assertEqual(rows[variant]["params"], sum(p.numel() for p in vbnet_reference.make(bott).parameters()))

    def test_vbnet_reduced_size_counts_match_the_seeds_module(self):
        rows = analyze("vbnet.yaml", "batch=1", "size=[16,32,32]")
        torch.manual_seed(0)
        x = torch.randn(1, 1, 16, 32, 32)
        self.check_row(rows["standard"], vbnet_reference.make(False), x)
        self.check_row(rows["post-bottleneck"], vbnet_reference.make(True), x)

    def test_vbnet_reduced_size_saved_bytes_and_backward_macs_match_the_seeds_module(self):
        # Saved activations by PyTorch's own saving rules (Dropout3d keeps its N x C noise, the
        # same-size trilinear interpolation nothing), and the backward MACs of every conv as
        # autograd runs them: grad-input and grad-weight each repeat the forward's MACs, except
        # the first conv's grad-input (the network input needs no gradient).
        rows = analyze("vbnet.yaml", "batch=1", "size=[16,32,32]")
        torch.manual_seed(0)
        x = torch.randn(1, 1, 16, 32, 32)
        for variant, bott in (("standard", False), ("post-bottleneck", True)):
            with self.subTest(variant=variant):
                model = vbnet_reference.make(bott)
                self.assertEqual(rows[variant]["memory"]["predicted"]["saved_bytes"], saved_bytes(model, x))
                first = model.downs[0].down.conv if not bott else model.downs[0].down.conv_1
                first_macs = (16 * 32 * 32) * first.out_channels * first.in_channels
                for d in first.kernel_size:
                    first_macs *= d
                macs = rows[variant]["macs"]
                self.assertEqual(macs["backward_weight"], macs["forward"])
                self.assertEqual(macs["backward_data"], macs["forward"] - first_macs)
                self.assertEqual(module_counts(model, x, train=True)[2], macs["forward"])

    def test_vbnet_post_gflops_follow_the_posts_counting_rule(self):
        # The post printed 191.78 and 16.05 "GFLOPs" (pthflops' count_ops at 6x1x32x128x128).
        # Its rule applied to convbench's expanded graph gives 191.73 and 16.04 G: within 0.1%.
        net = resolved_network("vbnet.yaml")
        shape = [net["batch"], net["in_channels"]] + net["size"]
        by_name = {v["name"]: v for v in net["variants"]}
        for variant, post in (("standard", 191.78e9), ("post-bottleneck", 16.05e9)):
            with self.subTest(variant=variant):
                ours = post_count_ops(by_name[variant], shape)
                self.assertLess(abs(ours - post) / post, 1e-3, f"{ours / 1e9:.3f} G against the post's {post / 1e9} G")

    def test_resnet50_full_size_parameters_are_torchvisions(self):
        rows = analyze("resnet50.yaml")
        self.assertEqual(rows["plain"]["params"], 25557032)
        self.assertEqual(sum(p.numel() for p in ResNet50().parameters()), 25557032)
        self.assertEqual(rows["plain"]["output_shape"][:2], [16, 1000])

    def test_resnet50_reduced_size_counts_match_torch(self):
        rows = analyze("resnet50.yaml", "batch=2", "size=64")
        torch.manual_seed(0)
        x = torch.randn(2, 3, 64, 64)
        for variant, replace in (("plain", None), ("subtracted-3x3", "3x3"), ("subtracted-all", "all")):
            with self.subTest(variant=variant):
                self.check_row(rows[variant], ResNet50(replace), x)

    def test_resnet50_reduced_size_saved_bytes_and_backward_macs_match_torch(self):
        # Saved activations by autograd's own accounting (torchvision's in-place ReLUs keep one
        # storage where convbench's ReLU writes a new tensor: the saved storages are the same),
        # and backward MACs: grad-weight repeats the forward's, grad-input too except the stem
        # conv's (the network input needs no gradient).
        rows = analyze("resnet50.yaml", "batch=2", "size=64")
        torch.manual_seed(0)
        x = torch.randn(2, 3, 64, 64)
        for variant, replace in (("plain", None), ("subtracted-3x3", "3x3"), ("subtracted-all", "all")):
            with self.subTest(variant=variant):
                model = ResNet50(replace)
                self.assertEqual(rows[variant]["memory"]["predicted"]["saved_bytes"], saved_bytes(model, x))
                stem = model.conv1 if replace != "all" else model.conv1.point_wise
                stem_macs = 2 * 32 * 32 * stem.out_channels * stem.in_channels
                for d in stem.kernel_size:
                    stem_macs *= d
                macs = rows[variant]["macs"]
                self.assertEqual(macs["backward_weight"], macs["forward"])
                self.assertEqual(macs["backward_data"], macs["forward"] - stem_macs)

    def test_resnet50_under_amp_float16_saves_what_autocast_saves(self):
        # Seed 004's network (configs/seed004-amp.yaml) under torch.autocast(float16) in both
        # layouts: the float16 copies of every conv's input and weight and the half-precision and
        # float32 activations autograd saves, to the byte.
        for layout, fmt in (("channels_first", torch.contiguous_format), ("channels_last", torch.channels_last)):
            with self.subTest(layout=layout):
                rows = analyze("seed004-amp.yaml", "batch=2", "size=64", f"layout={layout}")
                self.assertEqual(rows["plain"]["precision"], "amp_float16")
                torch.manual_seed(0)
                model = ResNet50().to(memory_format=fmt)
                x = torch.randn(2, 3, 64, 64).contiguous(memory_format=fmt)
                self.assertEqual(rows["plain"]["memory"]["predicted"]["saved_bytes"],
                                 saved_bytes(model, x, torch.float16))


if __name__ == "__main__":
    CONVBENCH = os.path.abspath(sys.argv.pop(1))
    unittest.main()
