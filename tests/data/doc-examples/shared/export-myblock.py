# A user's block, as they hold it in PyTorch, exported to ONNX for convbench.
import torch
import torch.nn as nn
import torch.nn.functional as F


class MyBlock(nn.Module):
    def __init__(self, c_in=24, c_out=48):
        super().__init__()
        self.conv1 = nn.Conv3d(c_in, c_out, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm3d(c_out)
        self.conv2 = nn.Conv3d(c_out, c_out, 3, padding=1, groups=4, bias=False)
        self.bn2 = nn.BatchNorm3d(c_out)
        self.skip = nn.Conv3d(c_in, c_out, 1, bias=False)

    def forward(self, x):
        y = F.relu(self.bn1(self.conv1(x)))
        return F.relu(self.bn2(self.conv2(y)) + self.skip(x))


if __name__ == "__main__":
    # Training mode and no constant folding: the batch norms stay batch norms (in eval mode the
    # exporter folds each into the conv before it). A symbolic batch lets the spec choose it.
    torch.onnx.export(MyBlock(), (torch.randn(2, 24, 16, 16, 16),), "myblock.onnx", dynamo=False,
                      training=torch.onnx.TrainingMode.TRAINING, do_constant_folding=False,
                      input_names=["x"], output_names=["y"], dynamic_axes={"x": {0: "batch"}})
