#!/usr/bin/env python3
"""Writes the ONNX reader's seed corpus (tests/fuzz/corpus/onnx/, file names the SHA-1 of the
content): small models that between them reach every operator convbench translates, so that
mutations start from files the reader accepts. Run with the peer environment's Python (it has
the onnx package): scripts/peer-python.sh tests/fuzz/make_onnx_seeds.py"""
import hashlib
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out_dir = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "onnx")
rng = np.random.default_rng(0)


def weight(name, *shape):
    return numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32), name)


def ints(name, values):
    return numpy_helper.from_array(np.array(values, dtype=np.int64), name)


def model(nodes, inits, in_shape, out_shape, opset):
    g = helper.make_graph(nodes, "seed", [helper.make_tensor_value_info("x", TensorProto.FLOAT, in_shape)],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, out_shape)], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], producer_name="convbench seeds")


def bn(name, c):
    return [weight(f"{name}.{p}", c) for p in ("weight", "bias", "running_mean", "running_var")]


def bn_node(name, x, y):
    return helper.make_node("BatchNormalization", [x] + [f"{name}.{p}" for p in ("weight", "bias", "running_mean",
                                                                                  "running_var")], [y], name=name)


seeds = []
# The block, small: conv, batch norm, relu, grouped conv, a 1x1 shortcut, add.
seeds.append(model([
    helper.make_node("Conv", ["x", "conv1.weight"], ["c1"], kernel_shape=[3, 3, 3], pads=[1] * 6),
    bn_node("bn1", "c1", "b1"), helper.make_node("Relu", ["b1"], ["r1"]),
    helper.make_node("Conv", ["r1", "conv2.weight"], ["c2"], kernel_shape=[3, 3, 3], pads=[1] * 6, group=4),
    bn_node("bn2", "c2", "b2"), helper.make_node("Conv", ["x", "skip.weight"], ["s"], kernel_shape=[1, 1, 1]),
    helper.make_node("Add", ["b2", "s"], ["a"]), helper.make_node("Relu", ["a"], ["y"])],
    [weight("conv1.weight", 8, 4, 3, 3, 3), weight("conv2.weight", 8, 2, 3, 3, 3), weight("skip.weight", 8, 4, 1, 1, 1)]
    + bn("bn1", 8) + bn("bn2", 8), ["N", 4, 4, 4, 4], ["N", 8, 4, 4, 4], 17))
# 2-D: same padding and bias, pools, concat, a channel slice, resize, gates, a classifier head.
seeds.append(model([
    helper.make_node("Conv", ["x", "c.weight", "c.bias"], ["c"], kernel_shape=[3, 3], auto_pad="SAME_UPPER"),
    helper.make_node("LeakyRelu", ["c"], ["l"], alpha=0.1),
    helper.make_node("MaxPool", ["l"], ["m"], kernel_shape=[2, 2], strides=[2, 2]),
    helper.make_node("AveragePool", ["l"], ["p"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1],
                     count_include_pad=1),
    helper.make_node("Concat", ["m", "p"], ["cat"], axis=1),
    helper.make_node("Slice", ["cat", "starts", "ends", "axes"], ["sl"]),
    helper.make_node("Constant", [], ["scales"], value=numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32))),
    helper.make_node("Resize", ["sl", "", "scales"], ["up"], mode="nearest",
                     coordinate_transformation_mode="asymmetric", nearest_mode="floor"),
    helper.make_node("Sigmoid", ["up"], ["g"]), helper.make_node("Mul", ["up", "g"], ["se"]),
    helper.make_node("GlobalAveragePool", ["se"], ["gap"]), helper.make_node("Flatten", ["gap"], ["f"], axis=1),
    helper.make_node("Gemm", ["f", "fc.weight", "fc.bias"], ["y"], transB=1)],
    [weight("c.weight", 6, 3, 3, 3), weight("c.bias", 6), ints("starts", [0]), ints("ends", [8]), ints("axes", [1]),
     weight("fc.weight", 5, 8), weight("fc.bias", 5)], ["N", 3, 8, 8], ["N", 5], 13))
# Norms, space-to-depth, a transposed conv, dropout, identity, sub, linear resize.
seeds.append(model([
    helper.make_node("InstanceNormalization", ["x", "in.weight", "in.bias"], ["i"]),
    helper.make_node("GroupNormalization", ["i", "gn.weight", "gn.bias"], ["g"], num_groups=2),
    helper.make_node("SpaceToDepth", ["g"], ["s2d"], blocksize=2),
    helper.make_node("ConvTranspose", ["s2d", "t.weight"], ["t"], kernel_shape=[2, 2], strides=[2, 2]),
    helper.make_node("Dropout", ["t", "ratio"], ["d"]), helper.make_node("Identity", ["d"], ["id"]),
    helper.make_node("Sub", ["id", "t"], ["sub"]),
    helper.make_node("Resize", ["sub", "", "scales"], ["y"], mode="linear", coordinate_transformation_mode="half_pixel")],
    [weight("in.weight", 4), weight("in.bias", 4), weight("gn.weight", 4), weight("gn.bias", 4),
     weight("t.weight", 16, 4, 2, 2), numpy_helper.from_array(np.array(0.25, np.float32), "ratio"),
     numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "scales")], ["N", 4, 8, 8], ["N", 4, 32, 32], 18))

# PyTorch's group norm (Reshape to groups, InstanceNormalization, Reshape back to the Shape,
# Unsqueezed weight and bias by Mul and Add), then a pixel shuffle (DepthToSpace, mode CRD).
seeds.append(model([
    helper.make_node("Conv", ["x", "c.weight"], ["c"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
    helper.make_node("Reshape", ["c", "groups"], ["grouped"]),
    helper.make_node("InstanceNormalization", ["grouped", "ones", "zeros"], ["normed"], name="/gn/InstanceNormalization"),
    helper.make_node("Shape", ["c"], ["shape"]), helper.make_node("Reshape", ["normed", "shape"], ["back"]),
    helper.make_node("Unsqueeze", ["gn.weight", "axes"], ["w"]), helper.make_node("Mul", ["back", "w"], ["scaled"]),
    helper.make_node("Unsqueeze", ["gn.bias", "axes"], ["b"]), helper.make_node("Add", ["scaled", "b"], ["gn"]),
    helper.make_node("DepthToSpace", ["gn"], ["y"], blocksize=2, mode="CRD")],
    [weight("c.weight", 8, 2, 3, 3), ints("groups", [0, 2, -1]), weight("ones", 2), weight("zeros", 2),
     weight("gn.weight", 8), weight("gn.bias", 8), ints("axes", [1, 2])], ["N", 2, 4, 4], ["N", 2, 8, 8], 17))

# Opset 18's GroupNormalization, whose scale and bias are per group (2 groups of 4 channels here):
# fuzz_onnx_attributes renumbers num_groups with them, the case that once divided by zero.
seeds.append(model([
    helper.make_node("Conv", ["x", "c.weight"], ["c"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
    helper.make_node("GroupNormalization", ["c", "gn.weight", "gn.bias"], ["y"], num_groups=2)],
    [weight("c.weight", 4, 2, 3, 3), weight("gn.weight", 2), weight("gn.bias", 2)], ["N", 2, 4, 4], ["N", 4, 4, 4], 18))


def scalar(name, value, dtype=np.float32):
    return numpy_helper.from_array(np.array(value, dtype), name)


# ConvNeXt's block as PyTorch exports it at opset 17: the channels-last stretch (Transpose,
# LayerNormalization, MatMul by a transposed Linear weight and its bias, GELU's erf form), the
# Transpose back, the layer scale, and stochastic depth with a symbolic batch (Shape, Gather,
# Unsqueeze, Concat, ConstantOfShape, RandomUniformLike, Less, Cast, Div, Mul), then the shortcut.
seeds.append(model([
    helper.make_node("Conv", ["x", "dw.weight", "dw.bias"], ["c"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], group=4),
    helper.make_node("Transpose", ["c"], ["t"], perm=[0, 2, 3, 1]),
    helper.make_node("LayerNormalization", ["t", "norm.weight", "norm.bias"], ["ln"], axis=-1, epsilon=1e-6),
    helper.make_node("Transpose", ["pw1.weight"], ["w1"], perm=[1, 0]),
    helper.make_node("MatMul", ["ln", "w1"], ["m1"]), helper.make_node("Add", ["pw1.bias", "m1"], ["l1"]),
    helper.make_node("Div", ["l1", "root2"], ["g0"]), helper.make_node("Erf", ["g0"], ["g1"]),
    helper.make_node("Add", ["g1", "one"], ["g2"]), helper.make_node("Mul", ["l1", "g2"], ["g3"]),
    helper.make_node("Mul", ["g3", "half"], ["gelu"]),
    helper.make_node("MatMul", ["gelu", "pw2.weight"], ["m2"]), helper.make_node("Add", ["m2", "pw2.bias"], ["l2"]),
    helper.make_node("Transpose", ["l2"], ["back"], perm=[0, 3, 1, 2]),
    helper.make_node("Mul", ["layer_scale", "back"], ["scaled"]),
    helper.make_node("Shape", ["scaled"], ["shape"]), helper.make_node("Gather", ["shape", "zero"], ["n"], axis=0),
    helper.make_node("Unsqueeze", ["n", "axes0"], ["n1"]), helper.make_node("Concat", ["n1", "ones3"], ["like"], axis=0),
    helper.make_node("ConstantOfShape", ["like"], ["zeros"]),
    helper.make_node("RandomUniformLike", ["zeros"], ["u"], dtype=TensorProto.FLOAT),
    helper.make_node("Less", ["u", "keep"], ["kept"]), helper.make_node("Cast", ["kept"], ["mask"], to=TensorProto.FLOAT),
    helper.make_node("Div", ["mask", "keep"], ["noise"]), helper.make_node("Mul", ["scaled", "noise"], ["dropped"]),
    helper.make_node("Add", ["dropped", "x"], ["y"])],
    [weight("dw.weight", 4, 1, 3, 3), weight("dw.bias", 4), weight("norm.weight", 4), weight("norm.bias", 4),
     weight("pw1.weight", 16, 4), weight("pw1.bias", 16), weight("pw2.weight", 16, 4), weight("pw2.bias", 4),
     weight("layer_scale", 4, 1, 1), scalar("root2", 1.4142135), scalar("one", 1.0), scalar("half", 0.5),
     scalar("zero", 0, np.int64), ints("axes0", [0]), ints("ones3", [1, 1, 1]), scalar("keep", 0.9)],
    ["N", 4, 4, 4], ["N", 4, 4, 4], 17))
# ShuffleNetV2's unit and an EfficientNet-style gate: Split (chunk), squeeze-excitation with a
# ReduceMean (axes as an input, opset 18) and `scale * input`, Concat, the channel shuffle's
# Reshape to groups, Transpose of the group axes and Reshape back.
seeds.append(model([
    helper.make_node("Split", ["x"], ["x1", "x2"], axis=1, num_outputs=2),
    helper.make_node("Conv", ["x2", "b.weight"], ["b"], kernel_shape=[1, 1]),
    helper.make_node("ReduceMean", ["b", "spatial"], ["pooled"], keepdims=1),
    helper.make_node("Conv", ["pooled", "fc.weight", "fc.bias"], ["fc"], kernel_shape=[1, 1]),
    helper.make_node("HardSigmoid", ["fc"], ["gate"], alpha=1.0 / 6),
    helper.make_node("Mul", ["gate", "b"], ["gated"]),
    helper.make_node("Concat", ["x1", "gated"], ["cat"], axis=1),
    helper.make_node("Reshape", ["cat", "to_groups"], ["grouped"]),
    helper.make_node("Transpose", ["grouped"], ["swapped"], perm=[0, 2, 1, 3, 4]),
    helper.make_node("Reshape", ["swapped", "to_channels"], ["y"])],
    [weight("b.weight", 4, 4, 1, 1), ints("spatial", [-1, -2]), weight("fc.weight", 4, 4, 1, 1), weight("fc.bias", 4),
     ints("to_groups", [2, 2, 4, 4, 4]), ints("to_channels", [2, 8, 4, 4])], [2, 8, 4, 4], [2, 8, 4, 4], 18))

os.makedirs(out_dir, exist_ok=True)
for m in seeds:
    data = m.SerializeToString()
    with open(os.path.join(out_dir, hashlib.sha1(data).hexdigest()), "wb") as f:
        f.write(data)
    print(len(data), "bytes")
