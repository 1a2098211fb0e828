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

os.makedirs(out_dir, exist_ok=True)
for m in seeds:
    data = m.SerializeToString()
    with open(os.path.join(out_dir, hashlib.sha1(data).hexdigest()), "wb") as f:
        f.write(data)
    print(len(data), "bytes")
