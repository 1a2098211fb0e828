#!/usr/bin/env python3
"""ctest `peer_models_build`: the models convbench's network configs are to be checked against
build in the peer environment and have the parameter counts their authors publish:
torchvision's resnet50() 25,557,032 and timm's tresnet_m (pretrained=False: no download)
31,389,032. A new torchvision or timm release that changes either fails here first.

Usage: peer_models_test.py   (in the peer environment)
"""
import os
import sys
import warnings

os.environ["HF_HUB_OFFLINE"] = "1"  # no network: the weights are never needed
try:
    import timm
    import torch
    import torchvision
except ImportError as e:
    print(f"SKIP: torch not importable with torchvision and timm by {sys.executable}: {e}")
    sys.exit(0)

EXPECTED = {"torchvision resnet50": 25_557_032, "timm tresnet_m": 31_389_032}


def main():
    warnings.filterwarnings("ignore")
    models = {"torchvision resnet50": lambda: torchvision.models.resnet50(),
              "timm tresnet_m": lambda: timm.create_model("tresnet_m", pretrained=False)}
    failures = 0
    for name, make in models.items():
        model = make().eval()
        params = sum(p.numel() for p in model.parameters())
        with torch.no_grad():
            out = model(torch.zeros(1, 3, 224, 224))
        ok = params == EXPECTED[name] and tuple(out.shape) == (1, 1000)
        failures += not ok
        print(f"{'ok  ' if ok else 'FAIL'} {name}: {params:,} parameters (expected {EXPECTED[name]:,}), "
              f"output {tuple(out.shape)}")
    print(f"torch {torch.__version__}, torchvision {torchvision.__version__}, timm {timm.__version__}: "
          f"{failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
