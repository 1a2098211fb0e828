#!/usr/bin/env python3
"""Writes group-norm-17.onnx beside this script: nn.GroupNorm as torch.onnx.export writes it
(Reshape to groups, InstanceNormalization, Reshape back, Mul by the weight, Add the bias), after a
conv, with known weights, so that tests/onnx_import_test.cpp can check convbench reads it as one
group_norm op whose weight and bias are the module's. Run with the peer environment's Python
(.venv-peers/bin/python); the committed file is its output.
"""
import os

import torch
import torch.nn as nn


class ConvGroupNorm(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(2, 4, 3, padding=1, bias=False)
        self.gn = nn.GroupNorm(2, 4)

    def forward(self, x):
        return torch.relu(self.gn(self.conv(x)))


if __name__ == "__main__":
    m = ConvGroupNorm()
    with torch.no_grad():
        m.conv.weight.copy_(torch.arange(72, dtype=torch.float32).reshape(4, 2, 3, 3) / 64)
        m.gn.weight.copy_(torch.tensor([1.0, 2.0, 3.0, 4.0]))
        m.gn.bias.copy_(torch.tensor([5.0, 6.0, 7.0, 8.0]))
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "group-norm-17.onnx")
    torch.onnx.export(m, (torch.randn(2, 2, 4, 4),), out, dynamo=False, opset_version=17,
                      training=torch.onnx.TrainingMode.TRAINING, do_constant_folding=False,
                      input_names=["x"], output_names=["y"], dynamic_axes={"x": {0: "batch"}})
