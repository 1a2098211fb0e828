#!/usr/bin/python3
"""PyTorch as the independent peer for every number convbench prints.

    torch_peer.py SPEC --json OUT [--device cpu|cuda] [--max-noise 0.005] [--min-time 0.5]
                  [--min-samples 10] [--timeout 15] [--warmup 3] [--counts-only]
                  [--dump-tensors DIR [--dump-scale]] [--no-cudnn-benchmark]

It reads the same spec file as convbench (JSON or YAML), expands sweeps the same way (block-major;
sweep keys in written order, first key slowest), builds each variant as torch.nn modules whose
module and parameter names match convbench's op names ("conv", "reduce.conv", "shortcut.norm",
a custom op's own name, ...), and writes one row per block x variant x sweep point in the
convbench.results/1 schema: parameter and buffer counts, conv MACs/FLOPs per direction, times of
forward / backward / step, and memory (CUDA: max_memory_allocated around one step; CPU: the bytes
autograd saves for backward).

--counts-only   counts and shapes only: no timing and no memory pass.
--dump-tensors  DIR: for every train-mode row, one float64 training step on the CPU with
                reproducible inputs, parameters and (Philox) dropout masks, written as
                DIR/<block>__<variant>__<point_label or "default">.json so that convbench's
                backends can be checked element by element against PyTorch.
--dump-scale    with --dump-tensors: shrink batch to 2 and every spatial size to at most 8 (the
                channels and every other field are unchanged) so that the files stay small.

Run it with /usr/bin/python3 (Debian's PyTorch 1.13, CPU) or any PyTorch 2.x (CPU or CUDA). With
torch.utils.flop_counter.FlopCounterMode (PyTorch >= 2.1) each row also carries that counter's
raw numbers and the grouped grad-weight correction under "flop_counter".

Conventions of a row:
  macs      conv multiply-accumulates from the weight, input and output shapes PyTorch sees in
            forward hooks: forward; backward_data (convs whose input needs a gradient: not those
            reading the block input); backward_weight (every conv). Infer rows: backward 0.
  flops     2 x macs, convs only ("flops_scope": "conv"): elementwise work is not compared.
  buffers   BN running mean + running var elements (not num_batches_tracked).
  time_ms   forward / backward (alone, after an untimed forward) / step, each with median, min,
            max, q1, q3, samples and raw_ms; backward and step are null in infer mode.
  memory    saved_bytes: distinct storages autograd saves in one training forward, without
            parameters, buffers and the block input (saved_bytes_including_input adds it); on
            CUDA also peak_bytes = max_memory_allocated around one step.
  custom    a custom variant's ops are the whole block: the block's dropout and residual fields
            apply to the built-in kinds only, as in convbench's variant builder.
"""

import argparse
import datetime
import hashlib
import itertools
import json
import math
import os
import platform
import shlex
import statistics
import sys
import time

import numpy as np
import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import philox  # noqa: E402  (sits next to this script)

SCHEMA = "convbench.results/1"
# Seed of every dropout mask in a tensor dump; convbench's dump comparison uses the same one.
DUMP_DROPOUT_SEED = 0x5EED
DUMP_BATCH = 2
DUMP_MAX_SIZE = 8


# ------------------------------------------------------------------------------------------------
# Spec loading: the format of lib/spec (see README "Spec format"), resolved into plain dicts.
# convbench's loader is the validator users see; this one checks enough to fail clearly.
# ------------------------------------------------------------------------------------------------

class InputError(Exception):
    pass


BLOCK_DEFAULTS = {
    "dims": 2, "kernel": 3, "stride": 1, "padding": "same", "dilation": 1, "bias": True,
    "norm": "batch", "norm_groups": 16, "act": "relu", "negative_slope": 0.01, "dropout": 0.0,
    "residual": False, "dtype": "float32", "layout": "channels_first", "mode": "train",
}
BLOCK_REQUIRED = ("name", "batch", "in_channels", "out_channels", "size", "variants")
BLOCK_KEYS = set(BLOCK_DEFAULTS) | set(BLOCK_REQUIRED) | {"baseline"}
TOP_KEYS = {"name", "defaults", "blocks", "sweep"}

VARIANT_PARAMS = {
    "standard": {},
    "bottleneck": {"ratio": 4, "groups": 1},
    "separable": {"multiplier": 1},
    "grouped": {"groups": None},  # required
    "custom": {"ops": None, "output": ""},
}

CONV_FIELDS = {"out_channels", "kernel", "stride", "padding", "dilation", "groups", "bias"}
POOL_FIELDS = {"kernel", "stride", "padding"}
OP_FIELDS = {
    "conv": CONV_FIELDS,
    "conv_transpose": CONV_FIELDS | {"output_padding"},
    "batch_norm": set(), "group_norm": {"norm_groups"},
    "relu": set(), "leaky_relu": {"negative_slope"}, "dropout": {"p"},
    "add": set(), "sub": set(), "concat": set(),
    "max_pool": POOL_FIELDS, "avg_pool": POOL_FIELDS, "upsample": {"scale"},
}
OP_ARITY = {"add": (2, 2), "sub": (2, 2), "concat": (2, None)}


def read_spec_document(path):
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as e:
        raise InputError(f"{path}: cannot read the spec file: {e.strerror}") from e
    try:
        if path.endswith(".json"):
            doc = json.loads(raw.decode("utf-8"))
        else:
            import yaml  # python3-yaml; only YAML specs need it
            doc = yaml.safe_load(raw.decode("utf-8"))
    except Exception as e:  # JSON and YAML syntax errors carry their own positions
        raise InputError(f"{path}: cannot parse: {e}") from e
    return doc, hashlib.sha256(raw).hexdigest()


def check_keys(path, where, mapping, allowed):
    for key in mapping:
        if key not in allowed:
            raise InputError(f"{path}: {where}: unknown key \"{key}\"")


def as_int(path, where, value, minimum):
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputError(f"{path}: {where}: expected an integer, got {value!r}")
    if value < minimum:
        raise InputError(f"{path}: {where}: must be >= {minimum}, got {value}")
    return value


def per_dim(path, where, value, dims, minimum):
    """An int (repeated) or a list of `dims` ints."""
    if isinstance(value, list):
        if len(value) != dims:
            raise InputError(f"{path}: {where}: needs {dims} values, got {len(value)}")
        return [as_int(path, f"{where}[{i}]", v, minimum) for i, v in enumerate(value)]
    return [as_int(path, where, value, minimum)] * dims


def same_padding(kernel, dilation):
    return [d * (k - 1) // 2 for k, d in zip(kernel, dilation)]


def compact_json(value):
    return json.dumps(value, separators=(",", ":"))


def make_point_label(point):
    """'batch=8,layout=channels_last': compact JSON of each value, a string without its quotes."""
    parts = []
    for key, value in point.items():
        text = value if isinstance(value, str) else compact_json(value)
        parts.append(f"{key}={text}")
    return ",".join(parts)


def resolve_custom_op(path, where, op, dims, previous):
    """One custom op with its fields checked; `previous` is the value a unary op reads when it
    names no inputs ("input" for the first op), as convbench's loader does."""
    if not isinstance(op, dict):
        raise InputError(f"{path}: {where}: a custom op must be a map")
    kind = op.get("op")
    if kind not in OP_FIELDS:
        raise InputError(f"{path}: {where}.op: unknown op kind {kind!r}")
    check_keys(path, where, op, {"op", "name", "inputs"} | OP_FIELDS[kind])
    name = op.get("name")
    if not isinstance(name, str) or not name or name == "input":
        raise InputError(f"{path}: {where}.name: a custom op needs a name other than \"input\"")
    lo, hi = OP_ARITY.get(kind, (1, 1))
    inputs = op.get("inputs", [previous] if hi == 1 else [])
    inputs = [inputs] if isinstance(inputs, str) else list(inputs)
    if len(inputs) < lo or (hi is not None and len(inputs) > hi):
        raise InputError(f"{path}: {where}.inputs: {kind} takes {lo}{'' if hi == lo else '+'} inputs")
    out = {"op": kind, "name": name, "inputs": inputs}
    for key in ("kernel", "stride", "dilation"):
        if key in op:
            out[key] = per_dim(path, f"{where}.{key}", op[key], dims, 1)
    for key in ("padding", "output_padding"):
        if key in op:
            out[key] = op[key] if op[key] == "same" else per_dim(path, f"{where}.{key}", op[key], dims, 0)
    if "out_channels" in op:
        out["out_channels"] = as_int(path, f"{where}.out_channels", op["out_channels"], 1)
    if "groups" in op:
        g = op["groups"]
        out["groups"] = g if g == "depthwise" else as_int(path, f"{where}.groups", g, 1)
    if "bias" in op:
        out["bias"] = bool(op["bias"])
    out["norm_groups"] = as_int(path, f"{where}.norm_groups", op.get("norm_groups", 16), 1)
    out["negative_slope"] = float(op.get("negative_slope", 0.01))
    out["p"] = float(op.get("p", 0.5))
    out["scale"] = as_int(path, f"{where}.scale", op.get("scale", 2), 1)
    return out


def resolve_variants(path, where, variants, dims):
    if not isinstance(variants, list) or not variants:
        raise InputError(f"{path}: {where}: needs a non-empty list of variants")
    resolved = []
    for i, v in enumerate(variants):
        vwhere = f"{where}[{i}]"
        if isinstance(v, str):
            v = {"kind": v}
        if not isinstance(v, dict) or v.get("kind") not in VARIANT_PARAMS:
            raise InputError(f"{path}: {vwhere}: a variant is a kind name or a map with a known `kind`")
        kind = v["kind"]
        check_keys(path, vwhere, v, {"kind", "name"} | set(VARIANT_PARAMS[kind]))
        out = {"kind": kind, "name": v.get("name", kind)}
        for key, default in VARIANT_PARAMS[kind].items():
            if key not in v and default is None:
                raise InputError(f"{path}: {vwhere}.{key}: required for {kind}")
            out[key] = v.get(key, default)
        for key in ("ratio", "groups", "multiplier"):
            if key in out:
                out[key] = as_int(path, f"{vwhere}.{key}", out[key], 1)
        if kind == "custom":
            if not isinstance(out["ops"], list) or not out["ops"]:
                raise InputError(f"{path}: {vwhere}.ops: needs a non-empty list of ops")
            ops = []
            for j, op in enumerate(out["ops"]):
                previous = ops[-1]["name"] if ops else "input"
                ops.append(resolve_custom_op(path, f"{vwhere}.ops[{j}]", op, dims, previous))
            out["ops"] = ops
            out["output"] = out["output"] or out["ops"][-1]["name"]
        resolved.append(out)
    names = [v["name"] for v in resolved]
    for name in names:
        if names.count(name) > 1:
            raise InputError(f"{path}: {where}: duplicate variant name \"{name}\" (add `name:`)")
    return resolved


def resolve_block(path, where, fields, point):
    check_keys(path, where, fields, BLOCK_KEYS)
    for key in BLOCK_REQUIRED:
        if key not in fields:
            raise InputError(f"{path}: {where}.{key}: missing required field")
    b = {**BLOCK_DEFAULTS, **fields}
    dims = b["dims"]
    if dims not in (2, 3):
        raise InputError(f"{path}: {where}.dims: must be 2 or 3")
    block = {
        "name": str(b["name"]), "dims": dims,
        "batch": as_int(path, f"{where}.batch", b["batch"], 1),
        "in_channels": as_int(path, f"{where}.in_channels", b["in_channels"], 1),
        "out_channels": as_int(path, f"{where}.out_channels", b["out_channels"], 1),
        "size": per_dim(path, f"{where}.size", b["size"], dims, 1),
        "kernel": per_dim(path, f"{where}.kernel", b["kernel"], dims, 1),
        "stride": per_dim(path, f"{where}.stride", b["stride"], dims, 1),
        "dilation": per_dim(path, f"{where}.dilation", b["dilation"], dims, 1),
        "bias": bool(b["bias"]), "norm": b["norm"],
        "norm_groups": as_int(path, f"{where}.norm_groups", b["norm_groups"], 1),
        "act": b["act"], "negative_slope": float(b["negative_slope"]),
        "dropout": float(b["dropout"]), "residual": bool(b["residual"]),
        "dtype": b["dtype"], "layout": b["layout"], "mode": b["mode"],
        "point": dict(point), "point_label": make_point_label(point),
    }
    block["padding"] = (same_padding(block["kernel"], block["dilation"]) if b["padding"] == "same"
                        else per_dim(path, f"{where}.padding", b["padding"], dims, 0))
    for key, allowed in (("norm", ("batch", "group", "none")), ("act", ("relu", "leaky_relu", "none")),
                         ("dtype", ("float32", "tf32", "float16", "bfloat16")),
                         ("layout", ("channels_first", "channels_last")), ("mode", ("train", "infer"))):
        if block[key] not in allowed:
            raise InputError(f"{path}: {where}.{key}: expected one of {', '.join(allowed)}")
    if not 0.0 <= block["dropout"] < 1.0:
        raise InputError(f"{path}: {where}.dropout: must be in [0, 1)")
    block["variants"] = resolve_variants(path, f"{where}.variants", b["variants"], dims)
    return block


def expand_spec(doc, path):
    """(spec name, expanded blocks) of a parsed document; `path` names it in messages."""
    if not isinstance(doc, dict):
        raise InputError(f"{path}: the top level must be a map")
    check_keys(path, "(top level)", doc, TOP_KEYS)
    defaults = doc.get("defaults") or {}
    blocks = doc.get("blocks")
    sweep = doc.get("sweep") or {}
    if not isinstance(blocks, list) or not blocks:
        raise InputError(f"{path}: blocks: needs a non-empty list of blocks")
    if not isinstance(defaults, dict) or not isinstance(sweep, dict):
        raise InputError(f"{path}: defaults and sweep must be maps")
    check_keys(path, "defaults", defaults, BLOCK_KEYS - {"name"})
    for key, values in sweep.items():
        if key not in BLOCK_KEYS or key in ("name", "variants"):
            raise InputError(f"{path}: sweep.{key}: not a block field that can be swept")
        if not isinstance(values, list) or not values:
            raise InputError(f"{path}: sweep.{key}: needs a non-empty list of values")
    keys = list(sweep)
    expanded = []
    names = set()
    for i, raw in enumerate(blocks):
        if not isinstance(raw, dict):
            raise InputError(f"{path}: blocks[{i}]: a block must be a map")
        if raw.get("name") in names:
            raise InputError(f"{path}: blocks[{i}].name: duplicate block name {raw.get('name')!r}")
        names.add(raw.get("name"))
        # itertools.product varies the last key fastest: the first sweep key is the slowest.
        for combo in itertools.product(*(sweep[k] for k in keys)):
            point = dict(zip(keys, combo))
            expanded.append(resolve_block(path, f"blocks[{i}]", {**defaults, **raw, **point}, point))
    return str(doc.get("name", "")), expanded


def load_spec(path):
    """(spec name, expanded blocks, sha256 of the file). Blocks are block-major x sweep points."""
    doc, sha = read_spec_document(path)
    name, blocks = expand_spec(doc, path)
    return name, blocks, sha


# ------------------------------------------------------------------------------------------------
# Module building: every variant is a BlockModule, a list of named steps over named values, so the
# module tree and parameter names are exactly convbench's op names.
# ------------------------------------------------------------------------------------------------

class Add(nn.Module):
    def forward(self, a, b):
        return a + b


class Sub(nn.Module):
    def forward(self, a, b):
        return a - b


class Concat(nn.Module):
    def forward(self, *xs):
        return torch.cat(xs, dim=1)


class PhiloxDropout(nn.Module):
    """Dropout with convbench's mask rule: element i (logical N,C,spatial order) is kept when
    dropout_keep(i, seed, p); kept elements are scaled by 1/(1-p). The mask enters as a constant,
    so autograd passes dy * mask / (1-p) back, as convbench does."""

    def __init__(self, p, seed):
        super().__init__()
        self.p = p
        self.seed = seed

    def forward(self, x):
        if not self.training or self.p == 0.0:
            return x
        keep = philox.dropout_mask(x.numel(), self.seed, self.p).reshape(tuple(x.shape))
        scale = torch.from_numpy(keep.astype(np.float64) / (1.0 - self.p))
        return x * scale.to(device=x.device, dtype=x.dtype)


class BlockModule(nn.Module):
    def __init__(self):
        super().__init__()
        self.steps = []  # (value name, module, input value names), in execution order
        self.output = None
        self._last_use = {}

    def add_step(self, name, module, inputs):
        if name == "input" or any(name == s[0] for s in self.steps):
            raise ValueError(f"{name}: duplicate op name")
        parent = self
        *containers, leaf = name.split(".")
        for part in containers:
            if not hasattr(parent, part):
                parent.add_module(part, nn.Module())
            parent = getattr(parent, part)
        parent.add_module(leaf, module)
        self.steps.append((name, module, list(inputs)))
        return name

    def finish(self, output):
        self.output = output
        # Free each value after its last reader, as a plain PyTorch forward would; otherwise
        # intermediates stay alive to the end of forward and inflate the measured peak memory.
        self._last_use = {}
        for i, (_, _, inputs) in enumerate(self.steps):
            for v in inputs:
                self._last_use[v] = i
        return self

    def forward(self, x):
        values = {"input": x}
        for i, (name, module, inputs) in enumerate(self.steps):
            values[name] = module(*[values[v] for v in inputs])
            for v in set(inputs):
                if self._last_use.get(v) == i and v != self.output:
                    del values[v]
        return values[self.output]


def conv_module(dims, cin, cout, kernel, stride, padding, dilation, groups, bias, transposed=False,
                output_padding=None):
    if transposed:
        cls = nn.ConvTranspose2d if dims == 2 else nn.ConvTranspose3d
        return cls(cin, cout, tuple(kernel), stride=tuple(stride), padding=tuple(padding),
                   output_padding=tuple(output_padding or [0] * dims), groups=groups, bias=bias,
                   dilation=tuple(dilation))
    cls = nn.Conv2d if dims == 2 else nn.Conv3d
    return cls(cin, cout, tuple(kernel), stride=tuple(stride), padding=tuple(padding),
               dilation=tuple(dilation), groups=groups, bias=bias)


def norm_module(kind, dims, channels, norm_groups):
    if kind == "batch":
        cls = nn.BatchNorm2d if dims == 2 else nn.BatchNorm3d
        return cls(channels, eps=1e-5, momentum=0.1)
    if kind == "group":
        return nn.GroupNorm(norm_groups, channels, eps=1e-5)
    return None


def act_module(kind, negative_slope):
    if kind == "relu":
        return nn.ReLU()
    if kind == "leaky_relu":
        return nn.LeakyReLU(negative_slope)
    return None


def add_cna(m, block, prefix, src, cin, cout, kernel, stride, padding, dilation, groups):
    """conv -> norm -> act; returns the name of the last value."""
    dims = block["dims"]
    v = m.add_step(prefix + "conv", conv_module(dims, cin, cout, kernel, stride, padding, dilation,
                                                groups, block["bias"]), [src])
    norm = norm_module(block["norm"], dims, cout, block["norm_groups"])
    if norm is not None:
        v = m.add_step(prefix + "norm", norm, [v])
    act = act_module(block["act"], block["negative_slope"])
    if act is not None:
        v = m.add_step(prefix + "act", act, [v])
    return v


def build_main_path(m, block, variant):
    """Adds the variant's own ops; returns the name of its output value."""
    dims, cin, cout = block["dims"], block["in_channels"], block["out_channels"]
    k, s, p, d = block["kernel"], block["stride"], block["padding"], block["dilation"]
    ones, zeros = [1] * dims, [0] * dims
    kind = variant["kind"]
    if kind == "standard":
        return add_cna(m, block, "", "input", cin, cout, k, s, p, d, 1)
    if kind == "grouped":
        return add_cna(m, block, "", "input", cin, cout, k, s, p, d, variant["groups"])
    if kind == "bottleneck":
        mid = cout // variant["ratio"]
        v = add_cna(m, block, "reduce.", "input", cin, mid, ones, ones, zeros, ones, 1)
        v = add_cna(m, block, "spatial.", v, mid, mid, k, s, p, d, variant["groups"])
        return add_cna(m, block, "expand.", v, mid, cout, ones, ones, zeros, ones, 1)
    if kind == "separable":
        wide = cin * variant["multiplier"]
        v = add_cna(m, block, "depthwise.", "input", cin, wide, k, s, p, d, cin)
        return add_cna(m, block, "pointwise.", v, wide, cout, ones, ones, zeros, ones, 1)
    if kind == "custom":
        return build_custom_ops(m, block, variant)
    raise ValueError(f"unknown variant kind {kind}")


def build_custom_ops(m, block, variant):
    dims = block["dims"]
    channels = {"input": block["in_channels"]}
    for op in variant["ops"]:
        kind, name, inputs = op["op"], op["name"], op["inputs"]
        for v in inputs:
            if v not in channels:
                raise ValueError(f"{name}: unknown input value {v!r}")
        cin = channels[inputs[0]]
        if kind in ("conv", "conv_transpose"):
            kernel = op.get("kernel", block["kernel"])
            dilation = op.get("dilation", [1] * dims)
            padding = op.get("padding", "same")
            padding = same_padding(kernel, dilation) if padding == "same" else padding
            groups = op.get("groups", 1)
            groups = cin if groups == "depthwise" else groups
            cout = op.get("out_channels", cin)
            module = conv_module(dims, cin, cout, kernel, op.get("stride", [1] * dims), padding,
                                 dilation, groups, op.get("bias", block["bias"]),
                                 transposed=kind == "conv_transpose",
                                 output_padding=op.get("output_padding"))
        elif kind == "batch_norm":
            module, cout = norm_module("batch", dims, cin, 1), cin
        elif kind == "group_norm":
            module, cout = norm_module("group", dims, cin, op["norm_groups"]), cin
        elif kind == "relu":
            module, cout = nn.ReLU(), cin
        elif kind == "leaky_relu":
            module, cout = nn.LeakyReLU(op["negative_slope"]), cin
        elif kind == "dropout":
            module, cout = nn.Dropout(op["p"]), cin
        elif kind in ("add", "sub"):
            if channels[inputs[0]] != channels[inputs[1]]:
                raise ValueError(f"{name}: operands differ in channels")
            module, cout = (Add() if kind == "add" else Sub()), cin
        elif kind == "concat":
            module, cout = Concat(), sum(channels[v] for v in inputs)
        elif kind in ("max_pool", "avg_pool"):
            kernel = op.get("kernel", block["kernel"])
            stride = op.get("stride", kernel)
            padding = op.get("padding", [0] * dims)
            padding = same_padding(kernel, [1] * dims) if padding == "same" else padding
            if kind == "max_pool":
                cls = nn.MaxPool2d if dims == 2 else nn.MaxPool3d
                module = cls(tuple(kernel), stride=tuple(stride), padding=tuple(padding))
            else:
                cls = nn.AvgPool2d if dims == 2 else nn.AvgPool3d
                module = cls(tuple(kernel), stride=tuple(stride), padding=tuple(padding),
                             count_include_pad=True)
            cout = cin
        elif kind == "upsample":
            module, cout = nn.Upsample(scale_factor=op["scale"], mode="nearest"), cin
        else:
            raise ValueError(f"{name}: unknown op kind {kind}")
        m.add_step(name, module, inputs)
        channels[name] = cout
    if variant["output"] not in channels or variant["output"] == "input":
        raise ValueError(f"output: {variant['output']!r} is not an op of this variant")
    return variant["output"]


def build_block(block, variant, dropout_seed=None):
    """The variant as a BlockModule (float32, CPU, PyTorch's default init). With dropout_seed the
    dropout ops draw convbench's Philox masks instead of PyTorch's own."""
    m = BlockModule()
    dims = block["dims"]

    def dropout(p):
        return nn.Dropout(p) if dropout_seed is None else PhiloxDropout(p, dropout_seed)

    out = build_main_path(m, block, variant)
    if variant["kind"] == "custom":
        # A custom variant's ops are the whole block: its `output` is the block output, and the
        # block's dropout and residual fields do not apply to it (as convbench's variant builder).
        if dropout_seed is not None:
            for name, module, _ in list(m.steps):
                if isinstance(module, nn.Dropout):
                    replace_step(m, name, dropout(module.p))
        return m.finish(out)
    if block["dropout"] > 0.0:
        out = m.add_step("dropout", dropout(block["dropout"]), [out])
    if block["residual"]:
        shortcut = "input"
        if block["in_channels"] != block["out_channels"] or any(s != 1 for s in block["stride"]):
            ones = [1] * dims
            shortcut = m.add_step("shortcut.conv", conv_module(
                dims, block["in_channels"], block["out_channels"], ones, block["stride"],
                [0] * dims, ones, 1, block["bias"]), ["input"])
            norm = norm_module(block["norm"], dims, block["out_channels"], block["norm_groups"])
            if norm is not None:
                shortcut = m.add_step("shortcut.norm", norm, [shortcut])
        out = m.add_step("add", Add(), [out, shortcut])
    return m.finish(out)


def replace_step(m, name, module):
    *containers, leaf = name.split(".")
    parent = m
    for part in containers:
        parent = getattr(parent, part)
    parent.add_module(leaf, module)
    m.steps = [(n, module if n == name else mod, ins) for n, mod, ins in m.steps]


def input_shape(block):
    return [block["batch"], block["in_channels"]] + list(block["size"])


def memory_format(block):
    if block["layout"] != "channels_last":
        return torch.contiguous_format
    return torch.channels_last if block["dims"] == 2 else torch.channels_last_3d


TORCH_DTYPES = {"float32": torch.float32, "tf32": torch.float32, "float16": torch.float16,
                "bfloat16": torch.bfloat16}


# ------------------------------------------------------------------------------------------------
# Counting: parameters, buffers and conv MACs from the shapes PyTorch actually sees.
# ------------------------------------------------------------------------------------------------

def conv_macs(x_shape, w_shape, out_shape, transposed):
    """N * w0 * w1 * K * P. The weight is (Cout, Cin/g, k...) for a conv and (Cin, Cout/g, k...)
    for a transposed conv, so w0 * w1 = Cout * Cin / g either way; P is the output spatial size,
    or the input spatial size for a transposed conv (each input point meets the whole kernel)."""
    spatial = x_shape[2:] if transposed else out_shape[2:]
    return (int(x_shape[0]) * int(w_shape[0]) * int(w_shape[1]) * math.prod(int(k) for k in w_shape[2:])
            * math.prod(int(s) for s in spatial))


def count_params(module):
    return sum(p.numel() for p in module.parameters() if p.requires_grad)


def named_stat_buffers(module):
    # BN running mean and variance only: convbench reports these two and not PyTorch's
    # num_batches_tracked counter, which no convbench backend keeps.
    return [(n, b) for n, b in module.named_buffers()
            if n.endswith(".running_mean") or n.endswith(".running_var")
            or n in ("running_mean", "running_var")]


def trace_convs(module, x, train):
    """Runs one forward with hooks on every conv; returns (records, output shape)."""
    records = []
    names = {id(mod): name for name, mod in module.named_modules()}

    def hook(mod, inputs, output):
        records.append({
            "name": names[id(mod)],
            "transposed": isinstance(mod, nn.modules.conv._ConvTransposeNd),
            "x_shape": list(inputs[0].shape), "w_shape": list(mod.weight.shape),
            "out_shape": list(output.shape), "groups": mod.groups,
            "input_requires_grad": bool(inputs[0].requires_grad),
        })

    handles = [mod.register_forward_hook(hook) for mod in module.modules()
               if isinstance(mod, nn.modules.conv._ConvNd)]
    try:
        module.train(train)
        with torch.set_grad_enabled(train):
            y = module(x)
        return records, list(y.shape)
    finally:
        for h in handles:
            h.remove()


def count_row(block, variant):
    """Counts for one row. Tries the meta device first (no memory, no arithmetic); PyTorch 1.13
    lacks meta kernels for pools and upsampling, so it falls back to a real CPU forward."""
    train = block["mode"] == "train"
    module = build_block(block, variant)
    params = count_params(module)
    buffers = sum(b.numel() for _, b in named_stat_buffers(module))
    try:
        records, out_shape = trace_convs(module.to("meta"), torch.empty(input_shape(block), device="meta"), train)
    except Exception:
        module = build_block(block, variant)
        records, out_shape = trace_convs(module, torch.zeros(input_shape(block)), train)
    macs = {"forward": 0, "backward_data": 0, "backward_weight": 0}
    for r in records:
        n = conv_macs(r["x_shape"], r["w_shape"], r["out_shape"], r["transposed"])
        r["macs"] = n
        macs["forward"] += n
        if train:
            # The block input needs no gradient, so convs reading it skip grad-input.
            macs["backward_data"] += n if r["input_requires_grad"] else 0
            macs["backward_weight"] += n
    return {"params": params, "buffers": buffers, "macs": macs,
            "flops": {k: 2 * v for k, v in macs.items()}, "output_shape": out_shape,
            "convs": records}


# --- FlopCounterMode (PyTorch >= 2.1) as a second, PyTorch-owned count ---------------------------

def flop_counter_available():
    try:
        import torch.utils.flop_counter as flop_counter
    except ImportError:
        return False
    return hasattr(flop_counter, "FlopCounterMode") and hasattr(flop_counter, "flop_registry")


def _shape_tree(value):
    from torch.utils._pytree import tree_map
    return tree_map(lambda t: t.shape if isinstance(t, torch.Tensor) else t, value)


def make_conv_backward_recorder():
    """A dispatch mode that records the shapes of every aten.convolution_backward call."""
    from torch.utils._python_dispatch import TorchDispatchMode

    class ConvBackwardRecorder(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.calls = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            out = func(*args, **kwargs)
            if str(func._overloadpacket) == "aten.convolution_backward":
                self.calls.append((_shape_tree(list(args)), _shape_tree(kwargs), _shape_tree(out)))
            return out

    return ConvBackwardRecorder()


def split_conv_backward(calls, formula):
    """Splits recorded convolution_backward calls into grad-input and grad-weight FLOPs with
    PyTorch's own formula (called once per term by masking output_mask), and corrects the
    grad-weight term where it is `groups` times ours: FlopCounterMode before PyTorch PR #183405
    counts grouped grad-weight as if the conv were dense."""
    out = {"backward_data": 0, "backward_weight_raw": 0, "backward_weight_corrected": 0,
           "grouped_overcount_corrected": False, "grad_weight_matches_formula": True}
    for args, kwargs, result in calls:
        grad_out, x, w = args[0], args[1], args[2]
        transposed, groups, mask = bool(args[7]), int(args[9]), list(args[10])
        head = list(args[:10])
        if mask[0]:
            out["backward_data"] += int(formula(*head, [True, False, False], **kwargs, out_val=result))
        if mask[1]:
            raw = int(formula(*head, [False, True, False], **kwargs, out_val=result))
            ours = 2 * conv_macs(x, w, grad_out, transposed)
            fixed = raw
            if groups > 1 and raw == groups * ours:
                fixed = raw // groups
                out["grouped_overcount_corrected"] = True
            out["grad_weight_matches_formula"] &= fixed == ours
            out["backward_weight_raw"] += raw
            out["backward_weight_corrected"] += fixed
    return out


def registry_formula(formula):
    """PyTorch's shape-wrapped formula as f(*args, out_val=...). The wrapper's output keyword is
    `out` in releases up to about 2.3 and `out_val` later; read it from the wrapper's own code
    (inspect.signature would follow functools.wraps to the inner formula)."""
    code = formula.__code__
    keywords = code.co_varnames[code.co_argcount:code.co_argcount + code.co_kwonlyargcount]
    name = "out" if "out" in keywords and "out_val" not in keywords else "out_val"

    def call(*args, out_val=None, **kwargs):
        return formula(*args, **kwargs, **{name: out_val})
    return call


def _flop_counter_on(block, variant, device):
    from torch.utils.flop_counter import FlopCounterMode, flop_registry
    train = block["mode"] == "train"
    module = build_block(block, variant).to(device)
    module.train(train)
    x = torch.zeros(input_shape(block), device=device)

    def one_pass():
        module.zero_grad(set_to_none=True)
        if train:
            y = module(x)
            y.backward(torch.ones_like(y))
        else:
            with torch.no_grad():
                module(x)

    with FlopCounterMode(display=False) as counter:
        one_pass()
    totals = {str(k): int(v) for k, v in counter.get_flop_counts().get("Global", {}).items()}
    section = {
        "available": True, "device": str(device), "raw_by_op": totals,
        "forward": totals.get("aten.convolution", 0) + totals.get("aten._convolution", 0),
        "backward_raw": totals.get("aten.convolution_backward", 0),
    }
    if train:
        recorder = make_conv_backward_recorder()
        with recorder:
            one_pass()
        split = split_conv_backward(recorder.calls,
                                    registry_formula(flop_registry[torch.ops.aten.convolution_backward]))
        section.update(split)
        section["split_consistent"] = (split["backward_data"] + split["backward_weight_raw"]
                                       == section["backward_raw"])
    return section


def flop_counter_section(block, variant, device):
    if not flop_counter_available():
        return {"available": False,
                "reason": f"torch.utils.flop_counter.FlopCounterMode is not in torch {torch.__version__}"}
    errors = []
    for dev in ("meta", device):
        try:
            return _flop_counter_on(block, variant, dev)
        except Exception as e:  # meta kernels may be missing; then count on the real device
            errors.append(f"{dev}: {type(e).__name__}: {e}")
    return {"available": True, "error": "; ".join(errors)[:1000]}


# ------------------------------------------------------------------------------------------------
# Timing: nvbench's stopping rule (warm-up; samples until relative noise <= max-noise after
# >= min-time seconds of samples and >= min-samples samples, or a timeout).
# ------------------------------------------------------------------------------------------------

class Runner:
    """One variant prepared on its device: module, input, fixed upstream gradient."""

    def __init__(self, block, variant, device):
        self.device = device
        self.train = block["mode"] == "train"
        dtype = TORCH_DTYPES[block["dtype"]]
        if device.type == "cuda":
            tf32 = block["dtype"] == "tf32"
            torch.backends.cuda.matmul.allow_tf32 = tf32
            torch.backends.cudnn.allow_tf32 = tf32
        fmt = memory_format(block)
        generator = torch.Generator().manual_seed(0)
        self.module = build_block(block, variant).to(device=device, dtype=dtype)
        self.module = self.module.to(memory_format=fmt)
        self.module.train(self.train)
        x = torch.randn(input_shape(block), generator=generator)
        self.x = x.to(device=device, dtype=dtype).contiguous(memory_format=fmt)
        self.dy = None
        if self.train:
            y = self.module(self.x)
            dy = torch.randn(tuple(y.shape), generator=generator)
            self.dy = dy.to(device=device, dtype=dtype).contiguous(memory_format=fmt)
            del y

    def sync(self):
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)

    def clear_grads(self):
        self.module.zero_grad(set_to_none=True)

    def forward(self):
        if self.train:
            return self.module(self.x)
        with torch.no_grad():
            return self.module(self.x)

    def step(self):
        y = self.forward()
        if self.train:
            y.backward(self.dy)

    def timed(self, work):
        """Milliseconds of work(); CUDA events on the current stream, else the host clock."""
        self.sync()
        if self.device.type == "cuda":
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            work()
            end.record()
            end.synchronize()
            return float(start.elapsed_time(end))
        t0 = time.perf_counter()
        work()
        return (time.perf_counter() - t0) * 1e3

    def sample_forward(self):
        self.clear_grads()
        return self.timed(self.forward)

    def sample_backward(self):
        self.clear_grads()
        y = self.forward()  # untimed
        return self.timed(lambda: y.backward(self.dy))

    def sample_step(self):
        self.clear_grads()
        return self.timed(self.step)


def summarize(samples, stop):
    q1, median, q3 = (float(v) for v in np.percentile(samples, [25, 50, 75]))
    mean = statistics.fmean(samples)
    return {"median": median, "min": min(samples), "max": max(samples), "q1": q1, "q3": q3,
            "mean": mean, "rel_stdev": relative_noise(samples), "samples": len(samples),
            "stop": stop, "raw_ms": samples}


def relative_noise(samples):
    if len(samples) < 2:
        return math.inf
    mean = statistics.fmean(samples)
    return statistics.stdev(samples) / mean if mean > 0 else math.inf


def measure(sample, opts):
    samples, busy_s = [], 0.0
    start = time.perf_counter()
    while True:
        ms = sample()
        samples.append(ms)
        busy_s += ms / 1e3
        if time.perf_counter() - start >= opts.timeout:
            return summarize(samples, "timeout")
        if (len(samples) >= opts.min_samples and busy_s >= opts.min_time
                and relative_noise(samples) <= opts.max_noise):
            return summarize(samples, "converged")


def time_row(runner, opts):
    times = {"forward": measure(runner.sample_forward, opts), "backward": None, "step": None}
    if runner.train:
        times["backward"] = measure(runner.sample_backward, opts)
        times["step"] = measure(runner.sample_step, opts)
    return times


# ------------------------------------------------------------------------------------------------
# Memory: what autograd saves (any device), and the CUDA allocator's peak around one step.
# ------------------------------------------------------------------------------------------------

def storage_of(t):
    """(data pointer, bytes) of the whole storage behind a tensor, for de-duplication."""
    storage = t.untyped_storage() if hasattr(t, "untyped_storage") else t.storage()
    return storage.data_ptr(), storage.nbytes()


def saved_bytes(runner):
    """Bytes of the distinct storages autograd saves in one training forward, without the
    parameters and buffers (resident anyway) and without the block input (the caller's)."""
    if not runner.train:
        return {"saved_bytes": 0, "saved_bytes_including_input": 0}
    resident = {storage_of(t)[0] for t in list(runner.module.parameters()) + list(runner.module.buffers())}
    input_ptr = storage_of(runner.x)[0]
    seen = {}

    def pack(t):
        ptr, nbytes = storage_of(t)
        seen[ptr] = nbytes
        return t

    runner.clear_grads()
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        y = runner.forward()
    del y
    without_input = sum(n for p, n in seen.items() if p not in resident and p != input_ptr)
    return {"saved_bytes": without_input,
            "saved_bytes_including_input": without_input + seen.get(input_ptr, 0)}


def cuda_peak(runner):
    """torch.cuda.max_memory_allocated around one step, starting from params, x and dy only."""
    runner.clear_grads()
    runner.sync()
    torch.cuda.reset_peak_memory_stats(runner.device)
    baseline = torch.cuda.memory_allocated(runner.device)
    runner.step()
    runner.sync()
    peak = torch.cuda.max_memory_allocated(runner.device)
    runner.clear_grads()
    return {"peak_bytes": int(peak), "baseline_bytes": int(baseline),
            "peak_above_baseline_bytes": int(peak - baseline),
            "peak_reserved_bytes": int(torch.cuda.max_memory_reserved(runner.device))}


def memory_row(runner):
    memory = saved_bytes(runner)
    if runner.device.type == "cuda":
        memory.update(cuda_peak(runner))
    return memory


# ------------------------------------------------------------------------------------------------
# Rows: counts, then (unless --counts-only) a warm-up, the memory pass and the timing pass.
# ------------------------------------------------------------------------------------------------

def classify_error(e):
    text = f"{type(e).__name__}: {e}".strip().splitlines()[0][:500]
    oom_type = getattr(torch.cuda, "OutOfMemoryError", None)
    if (oom_type is not None and isinstance(e, oom_type)) or "out of memory" in str(e).lower():
        return "oom", text
    if isinstance(e, NotImplementedError) or "not implemented for" in str(e):
        return "unsupported", text
    return "error", text


def base_row(block, variant, device):
    return {
        "block": block["name"], "variant": variant["name"], "kind": variant["kind"],
        "point": block["point"], "point_label": block["point_label"], "dims": block["dims"],
        "dtype": block["dtype"], "layout": block["layout"], "mode": block["mode"],
        "input_shape": input_shape(block), "output_shape": None, "params": None, "buffers": None,
        "macs": None, "flops": None, "flops_scope": "conv",  # elementwise FLOPs are not compared
        "status": "ok", "message": "", "device": device.type, "time_ms": None, "memory": None,
    }


def run_row(block, variant, opts, device):
    row = base_row(block, variant, device)
    try:
        counts = count_row(block, variant)
    except Exception as e:
        row["status"], row["message"] = "error", classify_error(e)[1]
        return row
    row.update({k: counts[k] for k in ("params", "buffers", "macs", "flops")})
    row["output_shape"] = counts["output_shape"]
    row["convs"] = [{k: r[k] for k in ("name", "transposed", "groups", "w_shape", "macs",
                                       "input_requires_grad")} for r in counts["convs"]]
    row["flop_counter"] = flop_counter_section(block, variant, device)
    if opts.counts_only:
        return row
    runner = None
    try:
        runner = Runner(block, variant, device)
        for _ in range(opts.warmup):
            runner.clear_grads()
            runner.step()
        runner.sync()
        row["memory"] = memory_row(runner)  # a pass of its own, before timing
        row["time_ms"] = time_row(runner, opts)
    except Exception as e:
        row["status"], row["message"] = classify_error(e)
    finally:
        del runner
        if device.type == "cuda":
            torch.cuda.empty_cache()
    return row


# ------------------------------------------------------------------------------------------------
# Tensor dumps: one float64 training step per train-mode row, for element-wise comparison.
# ------------------------------------------------------------------------------------------------

def row_seed(block, variant):
    key = f"{block['name']}|{variant['name']}|{block['point_label']}".encode()
    return int.from_bytes(hashlib.sha256(key).digest()[:8], "little") & (2**63 - 1)


def dump_scaled(block):
    scaled = dict(block)
    scaled["batch"] = min(block["batch"], DUMP_BATCH)
    scaled["size"] = [min(s, DUMP_MAX_SIZE) for s in block["size"]]
    return scaled


def tensor_json(t):
    t = t.detach().to(device="cpu", dtype=torch.float64).contiguous()  # logical N,C,spatial order
    return {"shape": list(t.shape), "data": t.reshape(-1).tolist()}


def dump_file_name(block, variant):
    label = block["point_label"] or "default"
    raw = f"{block['name']}__{variant['name']}__{label}"
    return "".join(c if c.isalnum() or c in "_-.,=+" else "_" for c in raw) + ".json"


def dump_row(block, variant, out_dir, scale):
    """One training step in float64 on the CPU; returns the file written."""
    b = dump_scaled(block) if scale else block
    seed = row_seed(block, variant)
    torch.manual_seed(seed)
    module = build_block(b, variant, dropout_seed=DUMP_DROPOUT_SEED).double()
    with torch.no_grad():  # non-trivial affine norm parameters
        for mod in module.modules():
            if isinstance(mod, (nn.modules.batchnorm._BatchNorm, nn.GroupNorm)):
                mod.weight.uniform_(0.5, 1.5)
                mod.bias.uniform_(-0.5, 0.5)
    fmt = memory_format(b)
    module = module.to(memory_format=fmt)
    module.train()
    x = (torch.rand(input_shape(b), dtype=torch.float64) * 2 - 1).contiguous(memory_format=fmt)
    params = {n: tensor_json(p) for n, p in module.named_parameters()}
    buffers_before = {n: tensor_json(t) for n, t in named_stat_buffers(module)}
    y = module(x)
    dy = (torch.rand(tuple(y.shape), dtype=torch.float64) * 2 - 1).contiguous(memory_format=fmt)
    y.backward(dy)
    doc = {
        "block": block["name"], "variant": variant["name"], "point_label": block["point_label"],
        "dtype": "float64", "layout": b["layout"], "scaled": bool(scale), "seed": seed,
        "dropout_seed": DUMP_DROPOUT_SEED,
        "input": tensor_json(x), "grad_output": tensor_json(dy), "params": params,
        "buffers_before": buffers_before, "output": tensor_json(y),
        "param_grads": {n: tensor_json(p.grad) for n, p in module.named_parameters()},
        "buffers_after": {n: tensor_json(t) for n, t in named_stat_buffers(module)},
    }
    path = os.path.join(out_dir, dump_file_name(block, variant))
    write_json(path, doc)
    return path


# ------------------------------------------------------------------------------------------------
# JSON output and the command line.
# ------------------------------------------------------------------------------------------------

def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def provenance(opts, device, spec_sha):
    cudnn = torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None
    return {
        "python": platform.python_version(), "torch": torch.__version__,
        "cuda": torch.version.cuda, "cudnn": cudnn,
        "device_name": torch.cuda.get_device_name(device) if device.type == "cuda" else cpu_model(),
        "cpu": cpu_model(), "threads": torch.get_num_threads(),
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "command_line": " ".join(shlex.quote(a) for a in [sys.argv[0]] + list(opts.argv)),
        "spec": opts.spec, "spec_sha256": spec_sha,
        "options": {"max_noise": opts.max_noise, "min_time_s": opts.min_time,
                    "min_samples": opts.min_samples, "timeout_s": opts.timeout,
                    "warmup": opts.warmup, "counts_only": opts.counts_only,
                    "cudnn_benchmark": bool(torch.backends.cudnn.benchmark)},
    }


def write_json(path, doc):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1, allow_nan=False)
        f.write("\n")
    os.replace(tmp, path)


def finite(value):
    """JSON has no inf/nan: a noise of inf (one sample) becomes null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [finite(v) for v in value]
    return value


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("spec", help="spec file (.json, or YAML for any other name)")
    p.add_argument("--json", dest="json_out", help="results file to write")
    p.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    p.add_argument("--max-noise", type=float, default=0.005, help="relative stdev to stop at")
    p.add_argument("--min-time", type=float, default=0.5, help="seconds of samples at least")
    p.add_argument("--min-samples", type=int, default=10)
    p.add_argument("--timeout", type=float, default=15.0, help="seconds per measurement at most")
    p.add_argument("--warmup", type=int, default=3, help="untimed steps before measuring")
    p.add_argument("--counts-only", action="store_true", help="no timing and no memory pass")
    p.add_argument("--dump-tensors", metavar="DIR", help="write float64 training-step dumps")
    p.add_argument("--dump-scale", action="store_true",
                   help=f"dumps at batch {DUMP_BATCH} and spatial sizes <= {DUMP_MAX_SIZE}")
    p.add_argument("--no-cudnn-benchmark", action="store_true",
                   help="leave cudnn.benchmark off (default: on, as most training scripts)")
    opts = p.parse_args(argv)
    opts.argv = list(argv)
    if not opts.json_out and not opts.dump_tensors:
        p.error("nothing to do: give --json and/or --dump-tensors")
    return opts


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    opts = parse_args(argv)
    try:
        _, blocks, spec_sha = load_spec(opts.spec)
    except InputError as e:
        print(f"torch_peer: {e}", file=sys.stderr)
        return 2
    if opts.device == "cuda" and not torch.cuda.is_available():
        print("torch_peer: --device cuda but torch.cuda.is_available() is False", file=sys.stderr)
        return 2
    device = torch.device(opts.device)
    if device.type == "cpu":
        torch.set_num_threads(os.cpu_count() or 1)
    torch.backends.cudnn.benchmark = not opts.no_cudnn_benchmark
    if opts.dump_tensors:
        os.makedirs(opts.dump_tensors, exist_ok=True)

    rows = []
    for block in blocks:
        for variant in block["variants"]:
            label = f"{block['name']}/{variant['name']}" + (f" [{block['point_label']}]" if block["point_label"] else "")
            if opts.json_out:
                row = run_row(block, variant, opts, device)
                rows.append(finite(row))
                print(f"torch_peer: {label}: {row['status']} {row['message']}".rstrip(), file=sys.stderr)
            if opts.dump_tensors and block["mode"] == "train":
                try:
                    path = dump_row(block, variant, opts.dump_tensors, opts.dump_scale)
                    print(f"torch_peer: {label}: dumped {path}", file=sys.stderr)
                except Exception as e:
                    print(f"torch_peer: {label}: no dump: {classify_error(e)[1]}", file=sys.stderr)
    if opts.json_out:
        write_json(opts.json_out, {"schema": SCHEMA, "engine": f"pytorch {torch.__version__}",
                                   "device": device.type,
                                   "provenance": provenance(opts, device, spec_sha),
                                   "results": rows})
    return 0


if __name__ == "__main__":
    sys.exit(main())
