"""Counting: parameters, buffers and conv MACs from the shapes PyTorch actually sees, and
PyTorch's own FlopCounterMode (>= 2.1) as a second count."""

import math

import torch
import torch.nn as nn

from peer.modules import build_block, input_shape


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
    # BN running mean and variance, and a frozen conv's weight and bias (buffers, not trained):
    # convbench reports these and not PyTorch's num_batches_tracked counter, which no convbench
    # backend keeps.
    kept = ("running_mean", "running_var", "weight", "bias")
    return [(n, b) for n, b in module.named_buffers() if n.rsplit(".", 1)[-1] in kept]


def trace_convs(module, x, train):
    """Runs one forward with hooks on every conv and linear; returns (records, output shape)."""
    from peer import fold
    records = []
    names = {id(mod): name for name, mod in module.named_modules()}

    def hook(mod, inputs, output):
        if fold.PROBING[0]:
            return  # the convs an online fold's kernel probe runs (peer/fold.py) are no step of the block
        if isinstance(mod, fold.OnlineFoldedConv):
            # F.conv on the kernel it computed: the conv's MACs, plus convbench's count of its own
            # kernel composition (the resolved spec's kernel_macs), which the peer does not redo.
            records.append({
                "name": names[id(mod)], "transposed": False, "x_shape": list(inputs[0].shape),
                "w_shape": list(mod.weight_shape), "out_shape": list(output.shape), "groups": mod.geometry["groups"],
                "input_requires_grad": bool(inputs[0].requires_grad), "weight_requires_grad": True,
                "kernel_macs": int(mod.kernel_macs)})
            return
        x_shape, w_shape, out_shape = list(inputs[0].shape), list(mod.weight.shape), list(output.shape)
        if isinstance(mod, nn.Linear):
            # On the last axis of any input (ConvNeXt's Linear on a channels-last tensor): a 1x1
            # conv over every position before it.
            positions = int(inputs[0].numel() // mod.in_features)
            x_shape, w_shape = [positions, mod.in_features, 1], [mod.out_features, mod.in_features, 1]
            out_shape = [positions, mod.out_features, 1]
        records.append({
            "name": names[id(mod)],
            "transposed": isinstance(mod, nn.modules.conv._ConvTransposeNd),
            "x_shape": x_shape, "w_shape": w_shape,
            "out_shape": out_shape, "groups": getattr(mod, "groups", 1),
            "input_requires_grad": bool(inputs[0].requires_grad),
            "weight_requires_grad": bool(mod.weight.requires_grad),
        })

    # nn.Linear (convbench's linear op) counts as a 1x1 conv: N x out x in MACs.
    handles = [mod.register_forward_hook(hook) for mod in module.modules()
               if isinstance(mod, (nn.modules.conv._ConvNd, nn.Linear, fold.OnlineFoldedConv))]
    try:
        module.train(train)
        with torch.set_grad_enabled(train):
            y = module(x)
        return records, list(y.shape)
    finally:
        for h in handles:
            h.remove()


def macs_by_direction(records, train):
    """Conv and linear MACs of one step from trace_convs' records (each gains its "macs"):
    forward, and in training backward data and backward weight."""
    macs = {"forward": 0, "backward_data": 0, "backward_weight": 0}
    for r in records:
        n = conv_macs(r["x_shape"], r["w_shape"], r["out_shape"], r["transposed"])
        r["macs"] = n
        # An online fold's kernel: computed once forward; backward recomputes it and runs its
        # adjoint (weight and register gradients): three times (configs/README.md "Folded convolutions").
        kernel = r.get("kernel_macs", 0)
        macs["forward"] += n + kernel
        if train:
            # The block input needs no gradient, so convs reading it skip grad-input.
            macs["backward_data"] += n if r["input_requires_grad"] else 0
            macs["backward_weight"] += n + 3 * kernel if r["weight_requires_grad"] else 0  # frozen: none
    return macs


def count_row(block, variant, make_module=None):
    """Counts for one row. Tries the meta device first (no memory, no arithmetic); PyTorch 1.13
    lacks meta kernels for pools and upsampling, so it falls back to a real CPU forward.
    `make_module`, when given, builds the module instead (a network's PyTorch twin)."""
    train = block["mode"] == "train"
    build = make_module or (lambda: build_block(block, variant))
    module = build()
    params = count_params(module)
    buffers = sum(b.numel() for _, b in named_stat_buffers(module))
    # PyTorch's count of the module's buffers beyond those: BatchNorm's num_batches_tracked.
    buffer_counters = sum(b.numel() for n, b in module.named_buffers() if n.rsplit(".", 1)[-1] == "num_batches_tracked")
    try:
        records, out_shape = trace_convs(module.to("meta"), torch.empty(input_shape(block), device="meta"), train)
    except Exception:
        module = build()
        records, out_shape = trace_convs(module, torch.zeros(input_shape(block)), train)
    macs = macs_by_direction(records, train)
    if train and variant.get("memory_policy") == "recompute":
        macs["recompute"] = recompute_macs(block, variant)
    return {"params": params, "buffers": buffers, "buffer_counters": buffer_counters, "macs": macs,
            "flops": {k: 2 * v for k, v in macs.items()}, "output_shape": out_shape,
            "convs": records}


def recompute_macs(block, variant):
    """The conv MACs memory policy recompute runs again in backward: forward hooks on every conv
    that fire while backward runs (torch.utils.checkpoint recomputes there, stopping early once
    what backward needs exists again). On the meta device where its kernels allow, else the CPU."""
    errors = []
    for device in ("meta", "cpu"):
        module = build_block(block, variant).to(device)
        module.train(True)
        state = {"backward": False, "macs": 0}

        def hook(mod, inputs, output):
            if state["backward"]:
                transposed = isinstance(mod, nn.modules.conv._ConvTransposeNd)
                state["macs"] += conv_macs(list(inputs[0].shape), list(mod.weight.shape), list(output.shape),
                                           transposed)

        handles = [mod.register_forward_hook(hook) for mod in module.modules()
                   if isinstance(mod, (nn.modules.conv._ConvNd, nn.Linear))]
        try:
            y = module(torch.zeros(input_shape(block), device=device))
            state["backward"] = True
            y.backward(torch.ones_like(y))
            return state["macs"]
        except Exception as e:  # meta kernels or RNG state may be missing on meta: count on the CPU
            errors.append(f"{device}: {type(e).__name__}: {e}")
        finally:
            for h in handles:
                h.remove()
    raise RuntimeError("; ".join(errors))


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


def _flop_counter_on(block, variant, device, make_module=None):
    from torch.utils.flop_counter import FlopCounterMode, flop_registry
    train = block["mode"] == "train"
    module = (make_module() if make_module else build_block(block, variant)).to(device)
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


def flop_counter_section(block, variant, device, make_module=None):
    if not flop_counter_available():
        return {"available": False,
                "reason": f"torch.utils.flop_counter.FlopCounterMode is not in torch {torch.__version__}"}
    errors = []
    for dev in ("meta", device):
        try:
            return _flop_counter_on(block, variant, dev, make_module)
        except Exception as e:  # meta kernels may be missing; then count on the real device
            errors.append(f"{dev}: {type(e).__name__}: {e}")
    return {"available": True, "error": "; ".join(errors)[:1000]}
