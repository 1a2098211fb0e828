"""The FLOP counters users run, side by side: torch's FlopCounterMode (forward and backward),
fvcore, ptflops, thop and torchinfo, each on the peer's module of a variant, with the rule that
predicts its number from convbench's counts.

Each counter counts something a little different. The rules below were read from each
counter's own code (the versions pinned in scripts/requirements-peers.txt) and are checked on
every config variant by ctest `flop_counters_follow_their_rules`:

  FlopCounterMode  FLOPs = 2 x MACs (a multiply and an add each), convolutions only (no bias,
                   norm or activation: it counts matmul-like aten ops). Forward: 2 x convbench's
                   forward MACs. Backward (train mode): 2 x (backward_data + backward_weight
                   MACs); grad-input is not counted for a conv reading the block input (autograd
                   does not compute it), as in convbench; with memory policy recompute, also the
                   convs run forward again in backward: 2 x convbench's recompute MACs. Releases before PyTorch PR #183405
                   counted a grouped conv's grad-weight `groups` times (the correction is in
                   peer/counts.py).
  fvcore           "flops" that are MACs, forward, module in eval mode: conv MACs without bias;
                   batch norm (eval) 2 per element (1 without affine); group norm 5 per element
                   (4 without affine); layer norm 5 per element (its aten::layer_norm, affine); nearest upsample 2d 1 per output element;
                   2-D global average pool (adaptive_avg_pool2d) 1 per input element; ReLU, add, pools,
                   sigmoid, leaky ReLU, 3d upsample: nothing (ignored or unsupported ops).
                   Transposed conv: its true MACs (input spatial size), as convbench.
  ptflops          MACs (pytorch backend, its default), forward, eval mode, divided by the batch
                   size (it reports per sample): conv MACs + 1 per output element for a bias;
                   batch and group norm 2 per element (affine); ReLU, leaky ReLU, ReLU6 and GELU
                   1 per element; max, average and global average pools 1 per input element; upsample 1 per
                   output element; sigmoid, hardswish, hardsigmoid, add, sub, concat: nothing (not
                   hooked modules). Its patched functionals (F.relu, F.gelu, F.silu, the pools,
                   F.interpolate) add 1 per element again, for the whole batch: ReLU, GELU, SiLU
                   (which has no module hook), the pools and upsample.
  thop             MACs, forward, eval mode: conv output elements x Cin/groups x kernel size (no
                   bias), which for a transposed conv counts its OUTPUT spatial size where the
                   true MACs use the input's (so a stride-s transposed conv is s^dims times
                   over); batch norm 2 per element (affine); average pool and upsample 1 per
                   output element; global average pool its input elements plus its output's; ReLU, leaky ReLU, max pool, dropout: 0; group norm, sigmoid
                   and the block's own add/sub/concat modules: nothing (no rule for them).
  torchinfo        "mult-adds", forward: for a conv, (weight + bias elements) x batch x output
                   spatial size: conv MACs + 1 per output element for a bias (a transposed conv
                   again at its output spatial size); any other layer with parameters (batch and
                   group norm, the layer norm over channels, layer scale) batch x its parameter
                   count (2C; C for layer scale); layers without parameters: 0. ptflops and thop
                   count neither the layer norm over channels nor layer scale nor the channel
                   shuffle (no hooks for these modules), FlopCounterMode none of them.

Every rule is `value = k x conv MACs + extra`, where `extra` is a sum over the module's leaf ops
of (per-element factor) x (elements of the op's input or output): predict() computes it from
convbench's forward MACs and the element counts of the ops, which convbench and the peer share
(their shapes agree: ctest torch_peer)."""

import contextlib
import io
import math
import os
import warnings

import torch
import torch.nn as nn

from peer.modules import build_block, input_shape

COUNTERS = ("flop_counter", "fvcore", "ptflops", "thop", "torchinfo")
UNIT = {"flop_counter": "FLOPs", "fvcore": "MACs", "ptflops": "MACs/sample", "thop": "MACs",
        "torchinfo": "MACs"}


def _numel(shape):
    return math.prod(int(s) for s in shape)


def leaf_ops(module, x):
    """Every leaf op of one eval-mode forward: (kind, input elements, output elements, extra)
    where extra holds a conv's facts (bias, transposed, true MACs, MACs at output size)."""
    ops = []

    def hook(mod, inputs, output):
        rec = {"kind": type(mod).__name__, "in": _numel(inputs[0].shape), "out": _numel(output.shape),
               "affine": bool(getattr(mod, "affine", False)), "dims": output.dim() - 2,
               "batch": int(inputs[0].shape[0]), "params": sum(p.numel() for p in mod.parameters())}
        if isinstance(mod, nn.modules.conv._ConvNd):
            transposed = isinstance(mod, nn.modules.conv._ConvTransposeNd)
            w = list(mod.weight.shape)
            batch = int(inputs[0].shape[0])
            spatial_in, spatial_out = _numel(inputs[0].shape[2:]), _numel(output.shape[2:])
            rec.update({"conv": True, "transposed": transposed, "bias": mod.bias is not None, "groups": mod.groups,
                        "macs": batch * _numel(w) * (spatial_in if transposed else spatial_out),
                        "macs_at_output": batch * _numel(w) * spatial_out})
        ops.append(rec)

    handles = [m.register_forward_hook(hook) for m in module.modules() if not list(m.children())]
    try:
        module.eval()
        with torch.no_grad():
            module(x)
    finally:
        for h in handles:
            h.remove()
    return ops


def _per_element(ops, table):
    """Sum of factor x elements over ops, table: kind -> (factor, "in" | "out", needs_affine)."""
    total = 0
    for op in ops:
        rule = table.get(op["kind"])
        if rule is None:
            continue
        factor, side, affine_factor = rule
        f = affine_factor if (affine_factor is not None and op["affine"]) else factor
        total += f * op[side]
    return total


BN = ("BatchNorm1d", "BatchNorm2d", "BatchNorm3d")
GN = ("GroupNorm",)
LN = ("ChannelLayerNorm",)  # peer/modules.py's layer norm over channels (an nn.LayerNorm), always affine
LAYER_SCALE = ("LayerScale",)
POOLS = ("MaxPool2d", "MaxPool3d", "AvgPool2d", "AvgPool3d")
GLOBAL_POOLS = ("AdaptiveAvgPool2d", "AdaptiveAvgPool3d")  # global_avg_pool (squeeze-excitation's squeeze)


def extras(ops):
    """What each counter adds to (or takes from) convbench's conv MACs, from the ops' shapes; the
    rules of the module docstring, in code."""
    convs = [op for op in ops if op.get("conv")]
    bias_out = sum(op["out"] for op in convs if op["bias"])
    transposed_over = sum(op["macs_at_output"] - op["macs"] for op in convs if op["transposed"])
    # FlopCounterMode's backward counts a grouped conv's grad-weight as if it were dense.
    ex = {"flop_counter_backward": sum(2 * (op["groups"] - 1) * op["macs"] for op in convs)}
    ex["fvcore"] = _per_element(ops, {**{k: (1, "in", 2) for k in BN}, **{k: (4, "in", 5) for k in GN},
                                      **{k: (5, "in", None) for k in LN}}) + sum(
        op["out"] for op in ops if op["kind"] == "Upsample" and op["dims"] == 2) + sum(
        op["in"] for op in ops if op["kind"] == "AdaptiveAvgPool2d")
    # ptflops: its module hooks' sum is divided by the batch size; what its patched functionals
    # (F.relu, F.max_pool*/avg_pool*, F.interpolate, which nn.ReLU, the pools and nn.Upsample call)
    # collect is added afterwards, for the whole batch: ReLU and pools are counted twice.
    ex["ptflops"] = bias_out + _per_element(ops, {
        **{k: (1, "in", 2) for k in BN + GN}, **{k: (1, "out", None) for k in ("ReLU", "LeakyReLU", "ReLU6", "GELU")},
        **{k: (1, "in", None) for k in POOLS + GLOBAL_POOLS}, "Upsample": (1, "out", None)})
    # (F.gelu and F.silu are patched too: nn.GELU counts twice, nn.SiLU once, for the whole batch.)
    ex["ptflops_functional"] = _per_element(ops, {**{k: (1, "out", None) for k in ("ReLU", "GELU", "SiLU")},
                                                  **{k: (1, "in", None) for k in POOLS + GLOBAL_POOLS},
                                                  "Upsample": (1, "out", None)})
    # thop: calculate_norm is already 2 per element, doubled again for an affine norm.
    ex["thop"] = transposed_over + _per_element(ops, {
        **{k: (2, "in", 4) for k in BN}, **{k: (1, "out", None) for k in ("AvgPool2d", "AvgPool3d", "Upsample")},
        # an adaptive pool: (its kernel, the input over the output, + 1 divide) per output element
        **{k: (1, "in", None) for k in GLOBAL_POOLS}}) + sum(op["out"] for op in ops if op["kind"] in GLOBAL_POOLS)
    ex["torchinfo"] = bias_out + transposed_over + sum(op["batch"] * op["params"] for op in ops
                                                       if op["kind"] in BN + GN + LN + LAYER_SCALE)
    return ex


def predict(convbench_row, counter_section):
    """Each counter's number as its rule predicts it from convbench's row (its MACs) and the
    extras the peer measured from the shapes. Returns {counter: predicted}."""
    macs = convbench_row["macs"]
    ex = counter_section["extras"]
    batch = counter_section["batch"]
    out = {
        "flop_counter_forward": 2 * macs["forward"],
        "fvcore": macs["forward"] + ex["fvcore"],
        "ptflops": (macs["forward"] + ex["ptflops"]) // batch + ex["ptflops_functional"],
        "thop": macs["forward"] + ex["thop"],
        "torchinfo": macs["forward"] + ex["torchinfo"],
    }
    if counter_section.get("train"):
        # Memory policy recompute runs convs forward again inside backward, which the backward
        # counter counts too: convbench's `recompute` MACs.
        out["flop_counter_backward"] = (2 * (macs["backward_data"] + macs["backward_weight"]
                                             + macs.get("recompute", 0)) + ex["flop_counter_backward"])
    return out


# --- running the counters ------------------------------------------------------------------------

def _flop_counter(module, x, train):
    from torch.utils.flop_counter import FlopCounterMode
    module.train(train)
    with FlopCounterMode(display=False) as fwd:
        if train:
            y = module(x)
        else:
            with torch.no_grad():
                y = module(x)
    result = {"flop_counter_forward": int(fwd.get_total_flops())}
    if train:
        with FlopCounterMode(display=False) as bwd:
            y.backward(torch.ones_like(y))
        result["flop_counter_backward"] = int(bwd.get_total_flops())
    return result


def _fvcore(module, x):
    from fvcore.nn import FlopCountAnalysis
    analysis = FlopCountAnalysis(module.eval(), (x,))
    analysis.unsupported_ops_warnings(False)
    analysis.uncalled_modules_warnings(False)
    return int(analysis.total())


def _ptflops(module, x):
    from ptflops import get_model_complexity_info
    with contextlib.redirect_stdout(io.StringIO()):
        macs, _ = get_model_complexity_info(module, tuple(x.shape[1:]), as_strings=False,
                                            print_per_layer_stat=False, verbose=False,
                                            input_constructor=lambda _: x)
    return int(macs)


def _thop(module, x):
    from thop import profile
    with contextlib.redirect_stdout(io.StringIO()):
        macs, _ = profile(module.eval(), inputs=(x,), verbose=False)
    return int(macs)


def _torchinfo(module, x):
    from torchinfo import summary
    return int(summary(module, input_data=[x], verbose=0, mode="eval").total_mult_adds)


def counters_section(block, variant):
    """The counters' numbers for one variant, with the extras predict() needs. A counter that
    fails (a missing package, an op it cannot trace) gets its error instead of a number."""
    warnings.filterwarnings("ignore")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    train = block["mode"] == "train"
    shape = input_shape(block)
    torch.manual_seed(0)
    x = torch.randn(shape)
    # The counters that count one inference forward count the block without its memory policy:
    # in inference a policy changes what is kept, not what is computed, and the counters know
    # nn.BatchNorm and nn.LeakyReLU, not the peer's fused InPlaceABN. FlopCounterMode counts the
    # training step as the policy runs it (recompute's second forward included).
    plain = dict(variant, memory_policy="none")
    ops = leaf_ops(build_block(block, plain), x)
    section = {"train": train, "batch": int(shape[0]), "extras": extras(ops), "values": {}, "errors": {}}
    runs = {"flop_counter": lambda m: _flop_counter(m, x.clone(), train), "fvcore": lambda m: {"fvcore": _fvcore(m, x)},
            "ptflops": lambda m: {"ptflops": _ptflops(m, x)}, "thop": lambda m: {"thop": _thop(m, x)},
            "torchinfo": lambda m: {"torchinfo": _torchinfo(m, x)}}
    for name, run in runs.items():
        try:
            section["values"].update(run(build_block(block, variant if name == "flop_counter" else plain)))
        except Exception as e:  # report it in the row; the test fails on it
            section["errors"][name] = f"{type(e).__name__}: {e}"[:300]
    return section



# --- side by side with convbench -----------------------------------------------------------------

RULES = {
    "flop_counter_forward": "2 x conv MACs (FLOPs), no bias/norm/act",
    "flop_counter_backward": "2 x backward MACs (recompute's included); grouped grad-weight x groups",
    "fvcore": "conv MACs, no bias; BN 2/elem (eval); ReLU 0",
    "ptflops": "(MACs + bias + BN 2 + ReLU 1 + pools)/batch, + ReLU/pools again",
    "thop": "conv MACs, no bias; BN 4/elem; transposed at output size",
    "torchinfo": "conv MACs + bias; BN batch x 2C; transposed at output size",
}
ORDER = ("flop_counter_forward", "flop_counter_backward", "fvcore", "ptflops", "thop", "torchinfo")


def convbench_rows(spec, convbench, sweeps=()):
    """convbench's own counts of every row (`convbench analyze --json`, with `--sweep` for each of
    `sweeps`), in the resolved order."""
    import json
    import subprocess
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "analyze.json")
        args = [convbench, "analyze", spec, "--json", out] + [a for s in sweeps for a in ("--sweep", s)]
        run = subprocess.run(args, capture_output=True, text=True)
        if run.returncode != 0:
            raise RuntimeError(run.stderr.strip() or f"convbench analyze {spec} exited {run.returncode}")
        with open(out) as f:
            return json.load(f)["results"]


def side_by_side(spec, convbench, sweeps=()):
    """One entry per block x variant x point: convbench's MACs, each counter's number, what its
    rule predicts, and whether they agree. `sweeps` ("key=values", as `--sweep` takes them) apply
    to both sides."""
    from peer.io import find_convbench, load_spec
    binary = find_convbench(convbench)
    _, blocks, _ = load_spec(spec, binary, sweeps)
    ours = convbench_rows(spec, binary, sweeps)
    entries, i = [], 0
    for block in blocks:
        for variant in block["variants"]:
            row = ours[i]
            i += 1
            if (row["block"], row["variant"], row["point_label"]) != (block["name"], variant["name"], block["point_label"]):
                raise RuntimeError(f"row {i}: convbench's {row['block']}/{row['variant']} is not the peer's "
                                   f"{block['name']}/{variant['name']}")
            if variant["kind"] == "folded" and variant["fold"] == "online":
                # The peer computes an online fold's kernel by probing the source's branches with
                # impulses (peer/fold.py), not by convbench's composition: what the counters count
                # of that is the probe's work, which no rule of convbench's counts predicts.
                print(f"skipping {block['name']}/{variant['name']}: fold: online (the peer's kernel probe is "
                      "not convbench's composition; ctest torch_peer checks its conv MACs)")
                continue
            section = counters_section(block, variant)
            predicted = predict(row, section)
            entries.append({"block": block["name"], "variant": variant["name"], "point_label": block["point_label"],
                            "convbench_macs": row["macs"], "values": section["values"], "predicted": predicted,
                            "errors": section["errors"],
                            "agree": all(predicted.get(k) == v for k, v in section["values"].items())
                            and not section["errors"]})
    return entries


def table(entries):
    lines = []
    for e in entries:
        label = f"{e['block']}/{e['variant']}" + (f" [{e['point_label']}]" if e["point_label"] else "")
        fwd = e["convbench_macs"]["forward"]
        lines.append(f"{label}: convbench forward MACs {fwd:,}")
        lines.append(f"  {'counter':<22} {'number':>16} {'/ conv MACs':>11}  {'rule':<4}  why it differs")
        for k in ORDER:
            if k not in e["values"]:
                continue
            v = e["values"][k]
            ok = "ok" if e["predicted"].get(k) == v else f"NOT {e['predicted'].get(k):,}"
            lines.append(f"  {k:<22} {v:>16,} {v / fwd if fwd else float('nan'):>10.4f}x  {ok:<4}  {RULES[k]}")
        for k, err in e["errors"].items():
            lines.append(f"  {k:<22} error: {err}")
    return "\n".join(lines)
