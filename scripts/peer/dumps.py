"""Tensor dumps: one float64 training step per train-mode row, with reproducible inputs,
parameters and (Philox) dropout masks, for element-wise comparison (`convbench verify`)."""

import contextlib
import copy
import hashlib
import os

import torch
import torch.nn as nn

from peer.counts import named_stat_buffers
from peer.io import write_json
from peer.measure import AUTOCAST_DTYPES
from peer.modules import build_block, input_shape, io_memory_format, memory_format

# Seed of every dropout mask in a tensor dump; convbench's dump comparison uses the same one.
DUMP_DROPOUT_SEED = 0x5EED
DUMP_BATCH = 2
DUMP_MAX_SIZE = 8


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


def settled_loss_scale(module, forward, dy):
    """The scale GradScaler reaches for a step on these tensors: from its initial 2^16, halved after
    each try whose gradients overflow float16 (on a copy, so the dumped module's statistics and
    gradients see one step only)."""
    probe = copy.deepcopy(module)
    scaler = torch.amp.GradScaler("cpu")
    optimizer = torch.optim.SGD(probe.parameters(), lr=0.0)
    for _ in range(64):
        probe.zero_grad(set_to_none=True)
        tried = scaler.get_scale()
        scaler.scale(forward(probe)).backward(dy)
        scaler.unscale_(optimizer)
        scaler.update()
        if scaler.get_scale() >= tried:  # no inf or NaN: GradScaler would step at this scale
            return tried
    raise ValueError("GradScaler found inf or NaN gradients at every scale down to 2^-48")


def dump_row(block, variant, out_dir, scale):
    """One training step on the CPU, in float64, or under a variant's AMP precision as users run it
    (float32 module, input and gradients, the forward under torch.autocast); returns the file
    written."""
    b = dump_scaled(block) if scale else block
    seed = row_seed(block, variant)
    torch.manual_seed(seed)
    precision = variant.get("precision", "plain")
    autocast = AUTOCAST_DTYPES.get(precision)
    dtype = torch.float64 if autocast is None else torch.float32
    module = build_block(b, variant, dropout_seed=DUMP_DROPOUT_SEED).to(dtype)
    with torch.no_grad():  # non-trivial affine norm parameters
        for mod in module.modules():
            if isinstance(mod, (nn.modules.batchnorm._BatchNorm, nn.GroupNorm, nn.LayerNorm)):
                mod.weight.uniform_(0.5, 1.5)
                mod.bias.uniform_(-0.5, 0.5)
    fmt = memory_format(b)
    module = module.to(memory_format=fmt)
    module.train()
    # Under AMP, the same module in float64 before its step: its step on the same input, weights
    # and upstream gradient is exact arithmetic's answer ("truth"), against which `convbench
    # verify` judges a tensor on which the two AMP steps disagree: the side farther from it is off.
    exact = copy.deepcopy(module).to(torch.float64) if autocast is not None else None
    # A plain step is dumped in float64; PyTorch's float32 step of the same input, weights and
    # upstream gradient goes beside it ("float32"), so that `convbench verify` on cpu or cuda
    # judges a float32 tensor by the distance float32 arithmetic gives PyTorch itself.
    single = copy.deepcopy(module).to(torch.float32) if autocast is None else None
    io_fmt = io_memory_format(b)
    x = (torch.rand(input_shape(b), dtype=torch.float64) * 2 - 1).to(dtype).contiguous(memory_format=io_fmt)
    params = {n: tensor_json(p) for n, p in module.named_parameters()}
    buffers_before = {n: tensor_json(t) for n, t in named_stat_buffers(module)}
    def forward(m):
        with contextlib.ExitStack() as scope:
            if autocast is not None:
                scope.enter_context(torch.autocast("cpu", dtype=autocast))
            return m(x)

    y = forward(module)
    # The upstream gradient in the output's dtype, as autograd gives it (under AMP the output may be
    # bfloat16 or float16): the dump holds the values the step really used.
    dy = (torch.rand(tuple(y.shape), dtype=torch.float64) * 2 - 1).to(y.dtype).contiguous(memory_format=io_fmt)
    extra = {}
    if autocast is torch.float16:
        # GradScaler's step, at the scale it settles on for these tensors; the gradients dumped are
        # the unscaled ones, as an optimizer would read them.
        loss_scale = settled_loss_scale(module, forward, dy)
        scaler = torch.amp.GradScaler("cpu", init_scale=loss_scale)
        scaler.scale(y).backward(dy)
        scaler.unscale_(torch.optim.SGD(module.parameters(), lr=0.0))
        extra["loss_scale"] = loss_scale
    else:
        y.backward(dy)
    if single is not None:
        y32 = single(x.to(torch.float32).contiguous(memory_format=io_fmt))
        y32.backward(dy.to(torch.float32).contiguous(memory_format=io_fmt))
        extra["float32"] = {
            "output": tensor_json(y32),
            "param_grads": {n: tensor_json(p.grad) for n, p in single.named_parameters()},
            "buffers_after": {n: tensor_json(t) for n, t in named_stat_buffers(single)},
        }
    if exact is not None:
        y64 = exact(x.to(torch.float64))
        y64.backward(dy.to(torch.float64))
        extra["truth"] = {
            "output": tensor_json(y64),
            "param_grads": {n: tensor_json(p.grad) for n, p in exact.named_parameters()},
            "buffers_after": {n: tensor_json(t) for n, t in named_stat_buffers(exact)},
        }
    doc = {
        "block": block["name"], "variant": variant["name"], "point_label": block["point_label"],
        "dtype": str(dtype).removeprefix("torch."), "precision": precision, "layout": b["layout"],
        "scaled": bool(scale), "seed": seed,
        "dropout_seed": DUMP_DROPOUT_SEED,
        "input": tensor_json(x), "grad_output": tensor_json(dy), "params": params,
        "buffers_before": buffers_before, "output": tensor_json(y),
        "param_grads": {n: tensor_json(p.grad) for n, p in module.named_parameters()},
        "buffers_after": {n: tensor_json(t) for n, t in named_stat_buffers(module)},
        **extra,
    }
    path = os.path.join(out_dir, dump_file_name(block, variant))
    write_json(path, doc)
    return path
