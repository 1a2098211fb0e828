#!/usr/bin/env python3
"""PyTorch modules exported with torch.onnx.export, then measured by convbench as {kind: onnx}
variants: the issue's MyBlock, seed 000's standard, bottleneck and separable blocks, seed 002's
SubtractedConv, seed 003's Parallel_Bottleneck, a torchvision ResNet-50 stage, torchvision's
MobileNetV2 inverted residuals (ReLU6, exported as Clip), a block with nn.SiLU (Sigmoid and Mul),
nn.Hardswish and nn.ReLU6, a 3-D block with nn.GroupNorm (which the exporter writes as five nodes)
and a PixelShuffle upsampler. Their
parameters, conv MACs per direction (forward, backward data, backward weight) and the bytes
autograd saves for backward must equal PyTorch's own counts of the same modules exactly, and the
exported blocks of seed 000 must count as convbench's native variants of the same block do.

usage: onnx_peer_test.py CONVBENCH SOURCE_DIR   (run with the peer environment's Python)
"""
import copy
import importlib
import json
import os
import re
import subprocess
import sys
import tempfile

binary, source = sys.argv[1], sys.argv[2]
sys.path.insert(0, os.path.join(source, "scripts"))
try:
    import torch
    import torch.nn as nn
except ImportError:
    print("SKIP: torch not importable (scripts/setup-peers.sh makes the peer environment)")
    sys.exit(0)

try:
    import onnx  # noqa: F401  (torch.onnx.export writes with it: scripts/requirements-peers.txt)
except ImportError:
    print("FAIL: the peer environment has no onnx package (scripts/setup-peers.sh installs it)")
    sys.exit(1)

from peer.counts import count_params, macs_by_direction, named_stat_buffers, trace_convs  # noqa: E402
from peer.io import load_spec  # noqa: E402
from peer.measure import Runner, saved_bytes  # noqa: E402
from peer.modules import build_block  # noqa: E402

failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL:", what)


# The block, exactly as the documents show a user exporting it.
sys.path.insert(0, os.path.join(source, "tests/data/doc-examples/shared"))
MyBlock = importlib.import_module("export-myblock").MyBlock


SEED = """  - name: seed000
    dims: 3
    batch: 2
    in_channels: 16
    out_channels: 32
    size: 8
    kernel: 3
    bias: true
    norm: batch
    act: relu
    mode: train
    variants:
      - standard
      - {kind: bottleneck, name: bottleneck, ratio: 2}
      - {kind: separable, name: separable}
"""
MINE = """  - name: mine
    dims: 3
    batch: 2
    in_channels: 24
    out_channels: 48
    size: 8
    bias: false
    mode: train
    variants:
"""


class SubtractedConv(nn.Module):
    """Seed 002's module, as its user wrote it (configs/subtracted-conv.yaml quotes it)."""

    def __init__(self, c_in=16, c_out=32, k=3):
        super().__init__()
        self.point_wise = nn.Conv2d(c_in, c_out // 2, 1, bias=False)
        self.depth_wise = nn.Conv2d(c_out // 2, c_out // 2, k, padding=k // 2, groups=c_out // 2, bias=False)
        self.low_pass = nn.Conv2d(c_out // 2, c_out // 2, k, padding=k // 2, bias=False)

    def forward(self, x):
        p = self.point_wise(x)
        d = self.depth_wise(p) - p
        return torch.cat((d, self.low_pass(p)), dim=1)


class ParallelBottleneck(nn.Module):
    """Seed 003's Parallel_Bottleneck without a downsample: the residual is the input repeated once
    per group (torch.cat), the convs grouped by 12, ReLU in place, as its user wrote it."""

    def __init__(self, groups=12, group_channels=16):
        super().__init__()
        wide = groups * group_channels // 2
        self.groups = groups
        self.conv1 = nn.Conv2d(group_channels, wide, kernel_size=1, bias=False)
        self.bn1 = nn.BatchNorm2d(wide)
        self.conv2 = nn.Conv2d(wide, wide, kernel_size=3, padding=1, bias=False, groups=12)
        self.bn2 = nn.BatchNorm2d(wide)
        self.conv3 = nn.Conv2d(wide, groups * group_channels, kernel_size=1, bias=False, groups=12)
        self.bn3 = nn.BatchNorm2d(groups * group_channels)
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x):
        residual = torch.cat([x] * self.groups, dim=1)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        out += residual
        return self.relu(out)


class GroupNormBlock(nn.Module):
    """A 3-D residual block with nn.GroupNorm (as 3-D segmentation networks use at small batch):
    the exporter writes each norm as Reshape, InstanceNormalization, Reshape, Mul, Add."""

    def __init__(self, c_in=8, c_out=16):
        super().__init__()
        self.conv1 = nn.Conv3d(c_in, c_out, 3, padding=1, bias=False)
        self.gn1 = nn.GroupNorm(4, c_out)
        self.conv2 = nn.Conv3d(c_out, c_out, 3, padding=1, bias=False)
        self.gn2 = nn.GroupNorm(4, c_out)
        self.skip = nn.Conv3d(c_in, c_out, 1, bias=False)

    def forward(self, x):
        y = torch.relu(self.gn1(self.conv1(x)))
        return torch.relu(self.gn2(self.conv2(y)) + self.skip(x))


class PixelShuffleUp(nn.Module):
    """A super-resolution upsampler: conv to 4x the channels, nn.PixelShuffle(2) (exported as
    DepthToSpace in mode CRD), conv."""

    def __init__(self, c=8):
        super().__init__()
        self.expand = nn.Conv2d(c, 4 * c, 3, padding=1)
        self.shuffle = nn.PixelShuffle(2)
        self.conv = nn.Conv2d(c, c, 3, padding=1)

    def forward(self, x):
        return self.conv(torch.relu(self.shuffle(self.expand(x))))


def resnet50_stage():
    """torchvision's ResNet-50 conv2_x (layer1: three Bottlenecks, 64 -> 256 channels)."""
    import torchvision
    return torchvision.models.resnet50(weights=None).layer1


def mobilenet_v2_blocks():
    """torchvision's MobileNetV2 features[1:3]: inverted residuals with ReLU6 (exported as Clip)."""
    import torchvision
    return torchvision.models.mobilenet_v2(weights=None).features[1:3]


class SiluGeluBlock(nn.Module):
    """An MBConv-like expansion with nn.SiLU (exported as Sigmoid and Mul) and a hardswish and
    ReLU6 tail, as users of EfficientNet and MobileNetV3 blocks write them."""

    def __init__(self, c=8):
        super().__init__()
        self.expand = nn.Conv2d(c, 4 * c, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(4 * c)
        self.act1 = nn.SiLU()
        self.dw = nn.Conv2d(4 * c, 4 * c, 3, padding=1, groups=4 * c, bias=False)
        self.bn2 = nn.BatchNorm2d(4 * c)
        self.act2 = nn.Hardswish()
        self.project = nn.Conv2d(4 * c, c, 1, bias=False)
        self.act3 = nn.ReLU6()

    def forward(self, x):
        y = self.act2(self.bn2(self.dw(self.act1(self.bn1(self.expand(x))))))
        return self.act3(self.project(y) + x)


# The modules users hold, each as a block of its shapes: (name, module factory, input shape).
USER_MODULES = [
    ("mobilenetv2-features", mobilenet_v2_blocks, (2, 32, 16, 16)),
    ("silu-hardswish-relu6", SiluGeluBlock, (2, 8, 8, 8)),
    ("seed002-subtracted", SubtractedConv, (2, 16, 8, 8)),
    ("seed003-parallel", ParallelBottleneck, (2, 16, 8, 8)),
    ("resnet50-conv2x", resnet50_stage, (2, 64, 8, 8)),
    ("groupnorm-3d", GroupNormBlock, (2, 8, 8, 8, 8)),
    ("pixel-shuffle", PixelShuffleUp, (2, 8, 8, 8)),
]


def user_block(name, shape, out_channels):
    return (f"  - {{name: {name}, dims: {len(shape) - 2}, batch: {shape[0]}, in_channels: {shape[1]}, "
            f"out_channels: {out_channels}, size: {shape[2]}, bias: false, mode: train, "
            f"variants: [{{kind: onnx, name: {name}, file: {name}.onnx}}]}}\n")


def export(module, shape, path):
    module.train(True)
    torch.onnx.export(module, (torch.randn(shape),), path, dynamo=False, opset_version=17,
                      training=torch.onnx.TrainingMode.TRAINING, do_constant_folding=False,
                      input_names=["x"], output_names=["y"], dynamic_axes={"x": {0: "batch"}})


def tensor_json(t):
    t = t.detach().to(torch.float64).contiguous()
    return {"shape": list(t.shape), "data": t.reshape(-1).tolist()}


def dump_name(block, variant):
    # pipeline/peer_check.cpp's peer_dump_file_name for a block without sweep points
    raw = f"{block}__{variant}__default"
    return "".join(c if c.isalnum() or c in "_-.,=+" else "_" for c in raw) + ".json"


def check_the_users_weights_and_step(tmp):
    """Each module with weights of its own (norm affine and running statistics drawn too), exported,
    then convbench's reference backend (float64) against PyTorch's float64 run of the module itself:
    in inference with no weights in the dump, so convbench computes with the file's initializers;
    in training with PyTorch's parameters and gradients by name, which the file's names give."""
    folder, dumps = os.path.join(tmp, "weights"), os.path.join(tmp, "dumps")
    os.mkdir(folder)
    os.mkdir(dumps)
    spec = "name: onnx-weights\nblocks:\n"
    for name, make, shape in [("myblock", MyBlock, (2, 24, 8, 8, 8))] + USER_MODULES:
        torch.manual_seed(1)
        module = make()
        with torch.no_grad():
            for m in module.modules():
                if isinstance(m, (nn.modules.batchnorm._BatchNorm, nn.GroupNorm)):
                    m.weight.uniform_(0.5, 1.5)
                    m.bias.uniform_(-0.5, 0.5)
                if isinstance(m, nn.modules.batchnorm._BatchNorm):
                    m.running_mean.uniform_(-0.5, 0.5)
                    m.running_var.uniform_(0.5, 1.5)
        export(module, shape, os.path.join(folder, name + ".onnx"))  # float32 weights: exact in float64
        with torch.no_grad():
            module.train(False)
            out_channels = module(torch.zeros(shape)).shape[1]
        for mode in ("infer", "train"):
            block = f"{name}-{mode}"
            spec += (f"  - {{name: {block}, dims: {len(shape) - 2}, batch: {shape[0]}, in_channels: {shape[1]}, "
                     f"out_channels: {out_channels}, size: {shape[2]}, mode: {mode}, "
                     f"variants: [{{kind: onnx, name: {name}, file: weights/{name}.onnx}}]}}\n")
            m = copy.deepcopy(module).double().train(mode == "train")
            x = torch.rand(shape, dtype=torch.float64) * 2 - 1
            doc = {"block": block, "variant": name, "mode": mode, "peer": f"PyTorch {torch.__version__}",
                   "dtype": "float64", "layout": "channels_first", "scaled": False, "seed": 0}
            if mode == "train":
                doc["params"] = {n: tensor_json(p) for n, p in m.named_parameters()}
                doc["buffers_before"] = {n: tensor_json(b) for n, b in named_stat_buffers(m)}
            y = m(x)
            doc.update({"input": tensor_json(x), "output": tensor_json(y)})
            if mode == "train":
                dy = torch.rand(y.shape, dtype=torch.float64) * 2 - 1
                y.backward(dy)
                doc["grad_output"] = tensor_json(dy)
                doc["param_grads"] = {n: tensor_json(p.grad) for n, p in m.named_parameters()}
                doc["buffers_after"] = {n: tensor_json(b) for n, b in named_stat_buffers(m)}
            with open(os.path.join(dumps, dump_name(block, name)), "w") as f:
                json.dump(doc, f)
    path = os.path.join(tmp, "weights.yaml")
    with open(path, "w") as f:
        f.write(spec)
    r = subprocess.run([binary, "verify", path, dumps, "--device", "reference"], capture_output=True, text=True)
    print(r.stdout, end="")
    check(r.returncode == 0, f"verify of the users' weights and steps: exit {r.returncode}: {r.stderr}")
    rows = len(re.findall(r"\sok$", r.stdout, re.M))
    check(rows == 2 * (1 + len(USER_MODULES)), f"{rows} rows agree, expected {2 * (1 + len(USER_MODULES))}")


def pytorch_counts(module, shape):
    """PyTorch's own counts of a module in training: parameters, conv MACs per direction."""
    records, _ = trace_convs(module, torch.zeros(shape), True)
    return count_params(module), macs_by_direction(records, True)


def main():
    with tempfile.TemporaryDirectory() as tmp:
        first = os.path.join(tmp, "native.yaml")
        with open(first, "w") as f:
            f.write("name: onnx-peer\nblocks:\n" + SEED + MINE + "      - {kind: standard}\n")
        _, blocks, _ = load_spec(first, binary)
        seed, mine = blocks[0], blocks[1]
        # Each of seed 000's variants as PyTorch builds it (the peer's modules), and MyBlock.
        exported = {}
        for variant in seed["variants"]:
            path = os.path.join(tmp, variant["name"] + ".onnx")
            export(build_block(seed, variant), (2, 16, 8, 8, 8), path)
            exported[variant["name"]] = path
        export(MyBlock(), (2, 24, 8, 8, 8), os.path.join(tmp, "myblock.onnx"))
        modules = {}
        for name, make, shape in USER_MODULES:
            torch.manual_seed(0)
            modules[name] = make()
            export(modules[name], shape, os.path.join(tmp, name + ".onnx"))
        spec = os.path.join(tmp, "spec.yaml")
        with open(spec, "w") as f:
            f.write("name: onnx-peer\nblocks:\n" + SEED)
            for name in exported:
                f.write(f"      - {{kind: onnx, name: onnx-{name}, file: {name}.onnx}}\n")
            f.write(MINE + "      - {kind: onnx, name: mine, file: myblock.onnx}\n")
            for name, _, shape in USER_MODULES:
                with torch.no_grad():
                    out_channels = modules[name].train(False)(torch.zeros(shape)).shape[1]
                f.write(user_block(name, shape, out_channels))
        r = subprocess.run([binary, "analyze", spec, "--json", "-"], capture_output=True, text=True)
        check(r.returncode == 0, f"analyze: {r.returncode} {r.stderr}")
        if r.returncode != 0:
            return
        rows = {(row["block"], row["variant"]): row for row in json.loads(r.stdout)["results"]}

        def compare(row, params, macs, saved, what):
            ours = (row["params"], {k: row["macs"][k] for k in macs}, row["memory"]["predicted"]["saved_bytes"])
            theirs = (params, macs, saved)
            check(ours == theirs, f"{what}: convbench {ours}, PyTorch {theirs}")
            print(f"{what}: params {params}, MACs {macs}, saved {saved} B: "
                  f"{'equal' if ours == theirs else 'DIFFERENT'}")

        for variant in seed["variants"]:
            name = variant["name"]
            onnx_row, native_row = rows[("seed000", "onnx-" + name)], rows[("seed000", name)]
            module = build_block(seed, variant)
            params, macs = pytorch_counts(module, (2, 16, 8, 8, 8))
            saved = saved_bytes(Runner(seed, variant, torch.device("cpu")))["saved_bytes"]
            compare(onnx_row, params, macs, saved, f"seed 000 {name} through ONNX vs PyTorch")
            for key in ("params", "buffers", "macs", "flops", "memory", "output_shape"):
                check(onnx_row[key] == native_row[key],
                      f"seed 000 {name}: the ONNX variant's {key} {onnx_row[key]} != the native one's {native_row[key]}")
        block = MyBlock()
        params, macs = pytorch_counts(block, (2, 24, 8, 8, 8))
        saved = saved_bytes(Runner(mine, mine["variants"][0], torch.device("cpu"), module=MyBlock()))["saved_bytes"]
        compare(rows[("mine", "mine")], params, macs, saved, "MyBlock through ONNX vs PyTorch")
        check_the_users_weights_and_step(tmp)
        user_blocks = {b["name"]: b for b in load_spec(spec, binary)[1]}
        for name, make, shape in USER_MODULES:
            block = user_blocks[name]
            params, macs = pytorch_counts(make(), shape)
            saved = saved_bytes(Runner(block, block["variants"][0], torch.device("cpu"), module=make()))["saved_bytes"]
            compare(rows[(name, name)], params, macs, saved, f"{name} through ONNX vs PyTorch")

    if failures:
        print(f"{len(failures)} failure(s)")
        sys.exit(1)
    print("onnx peer: ok")


if __name__ == "__main__":
    main()
