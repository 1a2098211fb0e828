# torchvision's EfficientNet-B0 MBConv (40 channels at 28x28: expand 6, 3x3 depthwise,
# squeeze-excitation, stochastic depth 0.05), exported as a user would: with PyTorch's default
# call, and with the TorchScript exporter in training mode, which keeps what a training step needs.
import torch
import torch.nn as nn
from torchvision.models.efficientnet import MBConv, MBConvConfig

if __name__ == "__main__":
    torch.manual_seed(0)
    block = MBConv(MBConvConfig(6, 3, 1, 40, 40, 1), 0.05, nn.BatchNorm2d)
    x = torch.randn(16, 40, 28, 28)
    torch.onnx.export(block, (x,), "mbconv-default.onnx")  # the default exporter
    torch.onnx.export(block, (x,), "mbconv.onnx", dynamo=False, training=torch.onnx.TrainingMode.TRAINING,
                      do_constant_folding=False)
