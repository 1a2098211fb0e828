"""Folded variants ({kind: folded}) as PyTorch modules, folded here independently of convbench.

convbench's resolved spec says what the folded graph is: its ops (`folded_ops`: the folded convs
with their geometry, and the source ops that stay) and which source ops each folded conv replaces
(`folds`). The peer builds the source module itself (peer/modules.py) and gets each folded conv's
kernel by probing the source ops it replaces with impulses: the region is linear, so its response
to a one-hot input is a column of the kernel. Nothing of convbench's fold program is used, so
the kernel's values (and, through `output equals the source's`, the geometry) are checked
independently.

- fold: once: the kernel is probed once, when the module is built (float64), into an nn.Conv
  named as convbench names the folded conv.
- fold: online (OREPA): the source's branch modules stay (their parameters, with their names,
  are what trains); every forward probes the kernel from them, under torch.utils.checkpoint (so
  backward recomputes the probe rather than keeping it, as convbench recomputes its fold
  registers), and runs F.conv on it. What autograd then keeps is the conv's input and kernel.
"""

import copy
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.utils.checkpoint


# Non-zero while an online fold probes its kernel: peer/counts.py's hooks skip those convs.
PROBING = [0]


def run_region(steps, replaces, root, target, x):
    """The source ops `replaces` (by name, in the source's order) applied from value `root` = x."""
    values = {root: x}
    for name, module, inputs in steps:
        if name not in replaces:
            continue
        values[name] = module(*[values[v] for v in inputs])
    return values[target]


class _Prober:
    """The kernel (Cout, Cin/groups, k...) and bias (Cout) of a linear map `region` (a function of
    an (N, cin, spatial...) tensor) that the caller says is one conv of `geometry` (kernel,
    stride, padding, dilation, groups). One impulse per input channel and stride phase: tap q of
    output o reads input position s*o + d*q - p, so an impulse at position `pos` shows tap q at
    output o = (pos + p - d*q) / s where that divides. The impulses depend on the geometry only
    and are made once."""

    def __init__(self, dims, cin, geometry):
        k, s, p, d = (geometry[key] for key in ("kernel", "stride", "padding", "dilation"))
        self.dims, self.cin, self.groups = dims, cin, geometry["groups"]
        self.k, self.s, self.p, self.d = k, s, p, d
        ext = [d[i] * (k[i] - 1) + 1 for i in range(dims)]
        size = [2 * (ext[i] + s[i] + p[i]) + 1 for i in range(dims)]
        base = [ext[i] + s[i] + p[i] for i in range(dims)]  # every tap's output lies inside
        grid = [[]]
        for i in range(dims):
            grid = [g + [r] for g in grid for r in range(s[i])]
        self.positions = [[base[i] + phase[i] for i in range(dims)] for phase in grid]
        self.x = torch.zeros([cin * len(grid), cin] + size, dtype=torch.float64)
        for gi, pos in enumerate(self.positions):
            for c in range(cin):
                self.x[(gi * cin + c, c) + tuple(pos)] = 1.0
        taps = [[]]
        for i in range(dims):
            taps = [g + [q] for g in taps for q in range(k[i])]
        self.taps = []  # per tap: (phase, output index)
        for q in taps:
            for gi, pos in enumerate(self.positions):
                if all((pos[i] + p[i] - d[i] * q[i]) % s[i] == 0 for i in range(dims)):
                    self.taps.append((gi, tuple((pos[i] + p[i] - d[i] * q[i]) // s[i] for i in range(dims))))
                    break

    def kernel(self, region, dtype, device=None):
        cin, groups = self.cin, self.groups
        x = self.x.to(dtype=dtype, device=device)
        y = region(x)
        zero = region(torch.zeros_like(x[:1]))
        cout = y.shape[1]
        # The bias: the response to a zero input, at an output whose window lies inside.
        centre = tuple(v // 2 for v in zero.shape[2:])
        bias = zero[(0, slice(None)) + centre]
        columns = [y[(slice(gi * cin, (gi + 1) * cin), slice(None)) + o].transpose(0, 1) - bias[:, None]
                   for gi, o in self.taps]  # per tap: (Cout, Cin)
        dense = torch.stack(columns, dim=-1)  # (Cout, Cin, taps)
        per_group, out_per_group = cin // groups, cout // groups
        rows = [dense[g * out_per_group:(g + 1) * out_per_group, g * per_group:(g + 1) * per_group]
                for g in range(groups)]
        return torch.cat(rows, dim=0).reshape([cout, per_group] + list(self.k)), bias


def conv_fn(dims):
    return F.conv2d if dims == 2 else F.conv3d


class OnlineFoldedConv(nn.Module):
    """fold: online: the kernel probed from the source's branch modules in every forward
    (checkpointed: recomputed in backward), then one conv. `kernel_macs` is convbench's count of
    its own kernel composition (its resolved spec), which the counts add (peer/counts.py)."""

    def __init__(self, region_steps, replaces, root, target, dims, cin, geometry, kernel_macs):
        super().__init__()
        self._steps = region_steps  # the source's modules: registered on the block by the builder
        self._replaces, self._root, self._target = set(replaces), root, target
        self.dims, self.geometry, self.kernel_macs = dims, geometry, kernel_macs
        self._prober = _Prober(dims, cin, geometry)
        self.weight_shape = None

    def _kernel(self, *params):
        del params  # the modules read their own parameters; passing them lets checkpoint track them
        region = lambda x: run_region(self._steps, self._replaces, self._root, self._target, x)  # noqa: E731
        first = next(p for _, m, _ in self._steps for p in m.parameters())
        PROBING[0] += 1
        try:
            return self._prober.kernel(region, first.dtype, first.device)
        finally:
            PROBING[0] -= 1

    def forward(self, x):
        params = [p for name, m, _ in self._steps if name in self._replaces for p in m.parameters()]
        if torch.is_grad_enabled() and any(p.requires_grad for p in params):
            weight, bias = torch.utils.checkpoint.checkpoint(self._kernel, *params, use_reentrant=False)
        else:
            weight, bias = self._kernel(*params)
        self.weight_shape = list(weight.shape)
        g = self.geometry
        return conv_fn(self.dims)(x, weight, bias if g["bias"] else None, stride=tuple(g["stride"]),
                                  padding=tuple(g["padding"]), dilation=tuple(g["dilation"]), groups=g["groups"])


def build_folded(m, block, variant, build_block, conv_module, source=None):
    """Adds the folded variant's ops to BlockModule `m`; returns its output value name. `source`:
    the source variant's module to fold (default: one built with PyTorch's initialisation)."""
    dims = block["dims"]
    if source is None:
        source_spec = next(v for v in block["variants"] if v["name"] == variant["of"])
        source = build_block(block, source_spec)
    source.train(block["mode"] == "train")
    # The source module, for the peer's own check that the fold computes what it computes (not a
    # submodule: its weights are not the folded module's, except the ones an online fold shares).
    object.__setattr__(m, "fold_source", source)
    by_name = {name: (module, inputs) for name, module, inputs in source.steps}
    folds = {f["conv"]: f["replaces"] for f in variant["folds"]}
    online = variant["fold"] == "online"
    last = None
    for op in variant["folded_ops"]:
        name, inputs = op["name"], op["inputs"]
        if name not in folds:  # a source op that stays, with its own parameters
            module, _ = by_name[name]
            last = m.add_step(name, module, inputs)
            continue
        replaces, root = folds[name], inputs[0]
        cin = source_channels(source, block, root)
        geometry = {key: op[key] for key in ("kernel", "stride", "padding", "dilation", "groups", "bias")}
        if online:
            region = [(n, mod, ins) for n, mod, ins in source.steps if n in replaces]
            for n, mod, _ in region:
                adopt(m, n, mod)
            last = m.add_step(name, OnlineFoldedConv(region, replaces, root, name, dims, cin, geometry,
                                                      op["kernel_macs"]), inputs)
        else:
            conv = conv_module(dims, cin, op["out_channels"], op["kernel"], op["stride"], op["padding"],
                               op["dilation"], op["groups"], op["bias"])
            with torch.no_grad():
                steps = [(n, mod.double(), ins) for n, mod, ins in source.steps if n in replaces]
                region = lambda x, steps=steps, replaces=replaces, root=root, name=name: run_region(  # noqa: E731
                    steps, set(replaces), root, name, x)
                weight, bias = _Prober(dims, cin, geometry).kernel(region, torch.float64)
                conv.weight.copy_(weight.to(conv.weight.dtype))
                if conv.bias is not None:
                    conv.bias.copy_(bias.to(conv.bias.dtype))
            last = m.add_step(name, conv, inputs)
    return last


def source_channels(source, block, value):
    """Channels of a value of the source module (a forward of one zero sample)."""
    if value == "input":
        return block["in_channels"]
    x = torch.zeros([1, block["in_channels"]] + list(block["size"]))
    values = {"input": x}
    was_training = source.training
    source.eval()
    with torch.no_grad():
        for name, module, inputs in source.steps:
            values[name] = module(*[values[v] for v in inputs])
            if name == value:
                source.train(was_training)
                return values[name].shape[1]
    source.train(was_training)
    raise ValueError(f"no value {value!r} in the source")


def adopt(m, name, module):
    """Registers `module` on `m` under `name` ("p", "dense.conv"), without a step."""
    parent = m
    *containers, leaf = name.split(".")
    for part in containers:
        if not hasattr(parent, part):
            parent.add_module(part, nn.Module())
        parent = getattr(parent, part)
    parent.add_module(leaf, module)


def fold_record(module, x_shape, out_shape):
    """A conv record for peer/counts.py of an OnlineFoldedConv call (F.conv is no module its
    hooks see): the conv's MACs, and convbench's kernel MACs beside them."""
    return {"w_shape": module.weight_shape, "kernel_macs": module.kernel_macs,
            "macs_conv": int(x_shape[0]) * module.weight_shape[0] * module.weight_shape[1]
            * math.prod(module.weight_shape[2:]) * math.prod(int(s) for s in out_shape[2:])}
