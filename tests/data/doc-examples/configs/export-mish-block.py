# A conv block with an activation convbench does not translate (nn.Mish), exported as the
# TorchScript recipe exports it.
import torch
import torch.nn as nn

if __name__ == "__main__":
    block = nn.Sequential(nn.Conv2d(32, 32, 3, padding=1, bias=False), nn.BatchNorm2d(32), nn.Mish())
    torch.onnx.export(block, (torch.randn(8, 32, 28, 28),), "mish.onnx", dynamo=False,
                      training=torch.onnx.TrainingMode.TRAINING, do_constant_folding=False)
