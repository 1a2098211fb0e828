"""The whole networks of convbench's network configs as PyTorch builds them, written independently
of convbench's spec: what tests/network_peer_test.py checks the configs' counts against and what
scripts/bench_vs_torch.py times a network row against.

- configs/resnet50.yaml: torchvision's resnet50() (v1.5) written out (Debian 12 has no
  python3-torchvision, and the SubtractedConv variants need the structure anyway), with seed 002's
  SubtractedConv in the 3x3 convs (`3x3`) or in every conv (`all`); torchvision's own model where
  torchvision is installed (the peer environment);
- configs/tresnet-m.yaml: timm's tresnet_m;
- configs/vbnet.yaml: the seed's VBNet (tests/vbnet_reference.py, the post's own module code);
- configs/seed001-efficient-nets.yaml: torchvision's resnet50, efficientnet_b0, mobilenet_v2,
  mobilenet_v3_large and regnet_y_400mf (the peer environment);
- configs/convnext-shufflenet.yaml: torchvision's convnext_tiny and shufflenet_v2_x1_0.
- configs/densenet121.yaml: torchvision's densenet121.

module_counts() is the network peer tests' independent count of a model: parameters, buffers and
forward MACs from hooks on the modules the model runs.
"""
import contextlib
import os
import sys

import torch
import torch.nn as nn

class SubtractedConv(nn.Module):
    def __init__(self, i, o, k, stride=1):
        super().__init__()
        self.point_wise = nn.Conv2d(i, o // 2, 1, stride=stride, bias=False)
        self.depth_wise = nn.Conv2d(o // 2, o // 2, k, padding=k // 2, groups=o // 2, bias=False)
        self.low_pass = nn.Conv2d(o // 2, o // 2, k, padding=k // 2, bias=False)

    def forward(self, x):
        p = self.point_wise(x)
        return torch.cat([self.depth_wise(p) - p, self.low_pass(p)], 1)


def conv(i, o, k, stride, where, replace):
    """A conv of the network: nn.Conv2d, or SubtractedConv where `replace` says so."""
    if replace == "all" or (replace == "3x3" and where == "spatial"):
        return SubtractedConv(i, o, k, stride)
    return nn.Conv2d(i, o, k, stride=stride, padding=k // 2, bias=False)


class Bottleneck(nn.Module):
    expansion = 4

    def __init__(self, inplanes, planes, stride, downsample, replace):
        super().__init__()
        width = planes
        self.conv1 = conv(inplanes, width, 1, 1, "conv", replace)
        self.bn1 = nn.BatchNorm2d(width)
        self.conv2 = conv(width, width, 3, stride, "spatial", replace)
        self.bn2 = nn.BatchNorm2d(width)
        self.conv3 = conv(width, planes * 4, 1, 1, "conv", replace)
        self.bn3 = nn.BatchNorm2d(planes * 4)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = downsample

    def forward(self, x):
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        if self.downsample is not None:
            identity = self.downsample(x)
        return self.relu(out + identity)


class ResNet50(nn.Module):
    def __init__(self, replace=None, num_classes=1000):
        super().__init__()
        self.inplanes = 64
        self.conv1 = conv(3, 64, 7, 2, "stem", replace)
        self.bn1 = nn.BatchNorm2d(64)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        self.layer1 = self._make_layer(64, 3, 1, replace)
        self.layer2 = self._make_layer(128, 4, 2, replace)
        self.layer3 = self._make_layer(256, 6, 2, replace)
        self.layer4 = self._make_layer(512, 3, 2, replace)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(512 * 4, num_classes)

    def _make_layer(self, planes, blocks, stride, replace):
        downsample = nn.Sequential(conv(self.inplanes, planes * 4, 1, stride, "conv", replace),
                                   nn.BatchNorm2d(planes * 4))
        layers = [Bottleneck(self.inplanes, planes, stride, downsample, replace)]
        self.inplanes = planes * 4
        layers += [Bottleneck(self.inplanes, planes, 1, None, replace) for _ in range(1, blocks)]
        return nn.Sequential(*layers)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(torch.flatten(self.avgpool(x), 1))


def _vbnet(bottleneck):
    tests = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "tests")
    if tests not in sys.path:
        sys.path.insert(0, tests)
    import vbnet_reference
    return vbnet_reference.make(bottleneck)


def _torchvision_resnet50():
    try:
        import torchvision
    except ImportError:
        return ResNet50(), "ResNet-50 written as torchvision's (torchvision not installed)"
    return torchvision.models.resnet50(), f"torchvision {torchvision.__version__} resnet50()"


def _timm_tresnet_m():
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # no download: the weights are never needed
    import timm
    return timm.create_model("tresnet_m", pretrained=False), f"timm {timm.__version__} tresnet_m"


def _torchvision_model(name):
    def make():
        import torchvision
        return getattr(torchvision.models, name)(weights=None), f"torchvision {torchvision.__version__} {name}()"
    return make


# (network name, variant name) -> () -> (module, what it is). A network or variant not listed has
# no independent PyTorch twin: its rows are timed by convbench alone.
NETWORK_MODELS = {
    ("resnet50", "plain"): _torchvision_resnet50,
    ("resnet50", "subtracted-3x3"): lambda: (ResNet50("3x3"), "ResNet-50 with SubtractedConv in the 3x3 convs"),
    ("resnet50", "subtracted-all"): lambda: (ResNet50("all"), "ResNet-50 with SubtractedConv in every conv"),
    ("tresnet-m", "tresnet"): _timm_tresnet_m,
    # Seed 001's networks (configs/seed001-efficient-nets.yaml): torchvision's own.
    ("resnet50", "torchvision"): _torchvision_resnet50,
    ("mobilenet-v2", "torchvision"): _torchvision_model("mobilenet_v2"),
    ("efficientnet-b0", "torchvision"): _torchvision_model("efficientnet_b0"),
    ("mobilenet-v3-large", "torchvision"): _torchvision_model("mobilenet_v3_large"),
    ("regnety-400mf", "torchvision"): _torchvision_model("regnet_y_400mf"),
    # configs/convnext-shufflenet.yaml: torchvision's own.
    ("convnext-tiny", "torchvision"): _torchvision_model("convnext_tiny"),
    ("shufflenet-v2-x1.0", "torchvision"): _torchvision_model("shufflenet_v2_x1_0"),
    # configs/densenet121.yaml: torchvision's own.
    ("densenet-121", "torchvision"): _torchvision_model("densenet121"),
    ("vbnet", "standard"): lambda: (_vbnet(False), "the seed's VBNet with CBR blocks (tests/vbnet_reference.py)"),
    ("vbnet", "post-bottleneck"): lambda: (_vbnet(True), "the seed's VBNet with its BottleNeck (tests/vbnet_reference.py)"),
}


def twin_factory(network, variant):
    """A function that builds a fresh PyTorch twin module of a network config's variant, or None."""
    make = NETWORK_MODELS.get((network, variant))
    return (lambda: make()[0]) if make else None


def network_model(network, variant):
    """(module, description) of the PyTorch twin of a network config's variant, or None."""
    make = NETWORK_MODELS.get((network, variant))
    return make() if make else None


def module_counts(model, x, train=False, extra_macs=None):
    """Parameters, buffers (running statistics, not num_batches_tracked, as convbench counts), the
    forward MACs of every conv, transposed conv and linear layer the model runs on x (forward
    hooks; `extra_macs(module, output)` gives other modules' MACs, or None), and the output's
    shape."""
    macs = []

    def kernel_volume(module):
        k = 1
        for d in module.kernel_size:
            k *= d
        return k

    def hook(module, inputs, output):
        if isinstance(module, (nn.Conv1d, nn.Conv2d, nn.Conv3d)):
            macs.append(output.numel() * (module.in_channels // module.groups) * kernel_volume(module))
        elif isinstance(module, (nn.ConvTranspose2d, nn.ConvTranspose3d)):
            macs.append(inputs[0].numel() * (module.out_channels // module.groups) * kernel_volume(module))
        elif isinstance(module, nn.Linear):
            macs.append(output.numel() * module.in_features)
        elif extra_macs is not None and (extra := extra_macs(module, output)) is not None:
            macs.append(extra)

    handles = [m.register_forward_hook(hook) for m in model.modules()]
    model.train(train)
    try:
        with torch.no_grad():
            out = model(x)
    finally:
        for h in handles:
            h.remove()
    params = sum(p.numel() for p in model.parameters())
    buffers = sum(b.numel() for name, b in model.named_buffers() if not name.endswith("num_batches_tracked"))
    return params, buffers, sum(macs), list(out.shape)


def autograd_saved_bytes(model, x, autocast=None):
    """Bytes of the distinct storages autograd saves in one training forward of `model` on `x`,
    without parameters, buffers and the input (as convbench's `saved`; the peer's own rule for
    blocks is peer/measure.py's saved_bytes); under torch.autocast("cpu", dtype=autocast) when
    given, so that the cast copies of inputs and weights count."""
    def storage_of(t):
        st = t.untyped_storage() if hasattr(t, "untyped_storage") else t.storage()
        return st.data_ptr(), st.nbytes()

    resident = {storage_of(t)[0] for t in list(model.parameters()) + list(model.buffers())}
    seen = {}

    def pack(t):
        ptr, nbytes = storage_of(t)
        seen[ptr] = nbytes
        return t

    model.train()
    with contextlib.ExitStack() as scope:
        if autocast is not None:
            scope.enter_context(torch.autocast("cpu", dtype=autocast))
        scope.enter_context(torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t))
        y = model(x)
    del y
    return sum(n for p, n in seen.items() if p not in resident and p != storage_of(x)[0])
