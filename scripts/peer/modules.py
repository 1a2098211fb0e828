"""Building a variant as torch.nn modules whose module and parameter names are convbench's op
names ("conv", "reduce.conv", "shortcut.norm", a custom op's own name, ...), from a block and a
variant of the resolved spec (peer/io.py)."""

import math

import numpy as np
import torch
import torch.nn as nn
import torch.utils.checkpoint

import philox  # sits in scripts/, next to torch_peer.py


class Add(nn.Module):
    def forward(self, a, b):
        return a + b


class Sub(nn.Module):
    def forward(self, a, b):
        return a - b


class Mul(nn.Module):
    """a * b, b of a's shape or (N, C, 1, ...) broadcast over space (squeeze-and-excitation)."""
    def forward(self, a, b):
        return a * b


class Slice(nn.Module):
    """Channels [start, start + length): x[:, a:b], a view of x's storage as PyTorch users write
    it (convbench copies; see lib/README.md's saving rules)."""
    def __init__(self, start, length):
        super().__init__()
        self.start, self.length = start, length

    def forward(self, x):
        return x[:, self.start:self.start + self.length]


class SpaceToDepth(nn.Module):
    """Each b x b (x b) block of a channel becomes b^d channels. channel_major is
    pixel_unshuffle's order (c * b^d + offset), block_major timm's TResNet SpaceToDepth
    (offset * C + c); both as a view and a permute, in 2-D and 3-D."""
    def __init__(self, block_size, order):
        super().__init__()
        self.b, self.order = block_size, order

    def forward(self, x):
        n, c, *sizes = x.shape
        b, d = self.b, len(sizes)
        split = [n, c]
        for size in sizes:
            split += [size // b, b]
        offsets = [3 + 2 * i for i in range(d)]   # the position within the block, per dim
        positions = [2 + 2 * i for i in range(d)]  # the block's position, per dim
        if self.order == "channel_major":
            perm = [0, 1] + offsets + positions
        else:
            perm = [0] + offsets + [1] + positions
        return x.reshape(split).permute(perm).reshape([n, c * b ** d] + [s // b for s in sizes])


class ChannelLayerNorm(nn.LayerNorm):
    """Layer norm over the channels at each position, as torchvision's ConvNeXt LayerNorm2d
    computes it (2-D and 3-D): permute to channels-last, F.layer_norm over C, permute back."""
    def forward(self, x):
        last = [0] + list(range(2, x.dim())) + [1]
        back = [0, x.dim() - 1] + list(range(1, x.dim() - 1))
        y = nn.functional.layer_norm(x.permute(last), self.normalized_shape, self.weight, self.bias, self.eps)
        return y.permute(back)


class LayerScale(nn.Module):
    """ConvNeXt's `layer_scale * x`: a learned scale per channel started at 1e-6, held as (C,)
    (convbench's parameter shape; torchvision's is (C, 1, 1), the same values)."""
    def __init__(self, channels, init=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.full((channels,), init))

    def forward(self, x):
        return self.weight.view([1, -1] + [1] * (x.dim() - 2)) * x


class ChannelShuffle(nn.Module):
    """ShuffleNetV2's channel_shuffle: view (N, g, C/g, ...), transpose the group axes,
    contiguous, view back (nn.ChannelShuffle does the same, 2-D only)."""
    def __init__(self, groups):
        super().__init__()
        self.groups = groups

    def forward(self, x):
        n, c, *sizes = x.shape
        y = x.view([n, self.groups, c // self.groups] + sizes).transpose(1, 2).contiguous()
        return y.view([n, c] + sizes)


class DepthToSpace(SpaceToDepth):
    """SpaceToDepth's inverse: b^d channels of one position become a b x b (x b) block of one
    channel. channel_major is pixel_shuffle's order (ONNX's CRD), block_major ONNX's DCR; both as
    a view and a permute, in 2-D and 3-D."""
    def forward(self, x):
        n, c, *sizes = x.shape
        b, d = self.b, len(sizes)
        out_c = c // b ** d
        if self.order == "channel_major":
            split = [n, out_c] + [b] * d + sizes
            offsets, channel = [2 + i for i in range(d)], 1
        else:
            split = [n] + [b] * d + [out_c] + sizes
            offsets, channel = [1 + i for i in range(d)], 1 + d
        positions = [2 + d + i for i in range(d)]
        perm = [0, channel]
        for i in range(d):
            perm += [positions[i], offsets[i]]
        return x.reshape(split).permute(perm).reshape([n, out_c] + [s * b for s in sizes])


class Concat(nn.Module):
    def forward(self, *xs):
        return torch.cat(xs, dim=1)


class ToMemoryFormat(nn.Module):
    """x.contiguous(memory_format=...): convbench's convert_layout at a block's boundary."""

    def __init__(self, fmt):
        super().__init__()
        self.fmt = fmt

    def forward(self, x):
        return x.contiguous(memory_format=self.fmt)


class PhiloxUnitDropout(nn.Module):
    """A dropout with convbench's mask rule (runtime/philox.hpp), dropping units of the input: the
    units are indexed by its first `unit_dims` dims in logical (N, C, spatial) order, unit u is
    kept when dropout_keep(u, seed, p), and kept units are scaled by 1/(1-p). The input is
    multiplied by a constant noise of the units' shape (1 in the other dims) in the input's dtype,
    so autograd passes dy * noise back and saves the noise, as PyTorch's modules do:
    unit_dims None, every element (nn.Dropout); 2, channels (n, c) (nn.Dropout2d/3d's feature
    dropout); 1, samples (torchvision's StochasticDepth(p, "row"))."""

    def __init__(self, p, seed, unit_dims=None):
        super().__init__()
        self.p = p
        self.seed = seed
        self.unit_dims = unit_dims

    def forward(self, x):
        if not self.training or self.p == 0.0:
            return x
        k = x.dim() if self.unit_dims is None else self.unit_dims
        units = tuple(int(d) for d in x.shape[:k])
        keep = philox.dropout_mask(int(np.prod(units)), self.seed, self.p).reshape(units + (1,) * (x.dim() - k))
        noise = torch.from_numpy(keep.astype(np.float64) / (1.0 - self.p))
        return x * noise.to(device=x.device, dtype=x.dtype)


def drop_path_module(p):
    from torchvision.ops import StochasticDepth
    return StochasticDepth(p, "row")


def channel_dropout_module(dims, p):
    return nn.Dropout2d(p) if dims == 2 else nn.Dropout3d(p)


class FlatLinear(nn.Linear):
    """nn.Linear on a (N, C, 1, ..., 1) activation: flatten, the linear map, and a view back to
    (N, out_features, 1, ..., 1), as convbench's linear op. Its parameters are the op's
    <name>.weight (out, in) and <name>.bias."""

    def forward(self, x):
        y = super().forward(torch.flatten(x, 1))
        return y.view(tuple(y.shape) + (1,) * (x.dim() - 2))


class InPlaceABNFunction(torch.autograd.Function):
    """Batch norm then leaky ReLU, saving the output and the per-channel statistics instead of
    the inputs (In-Place Activated BatchNorm, Rota Bulo, Porzi and Kontschieder, CVPR 2018),
    written from the paper for the peer, independently of convbench's kernels. Forward normalises
    with the batch's statistics (training; running statistics updated as nn.BatchNorm does) or the
    running ones, applies the affine and the activation, over x itself when `in_place`. Backward
    undoes the activation (z = y where y > 0, y / slope elsewhere) and the affine (xhat =
    (z - bias) / weight) and runs batch norm's backward from xhat: weight must stay away from 0,
    slope above it.

    A float16 or bfloat16 input (under autocast) is normalised as nn.BatchNorm normalises it there:
    statistics and arithmetic in float32, the statistics kept in float32, the output in the
    input's dtype."""

    @staticmethod
    def forward(ctx, x, weight, bias, running_mean, running_var, training, momentum, eps, slope, in_place):
        dims = [0] + list(range(2, x.dim()))
        shape = [1, -1] + [1] * (x.dim() - 2)
        with torch.no_grad():
            wide = x.to(torch.promote_types(x.dtype, torch.float32))
            if training:
                mean = wide.mean(dims)
                var = wide.var(dims, unbiased=False)
                count = x.numel() // x.shape[1]
                running_mean.mul_(1 - momentum).add_(mean.to(running_mean.dtype), alpha=momentum)
                running_var.mul_(1 - momentum).add_((var * count / (count - 1)).to(running_var.dtype), alpha=momentum)
            else:
                mean, var = running_mean.to(wide.dtype), running_var.to(wide.dtype)
            invstd = torch.rsqrt(var + eps)
            y = x if in_place else torch.empty_like(x)
            if wide is x:  # in x's own storage, no temporaries (a GPU peak counts them)
                torch.sub(x, mean.view(shape), out=y)
                y.mul_((invstd * weight).view(shape)).add_(bias.view(shape))
                torch.nn.functional.leaky_relu_(y, slope)
            else:
                z = (wide - mean.view(shape)) * (invstd * weight).view(shape) + bias.view(shape)
                y.copy_(torch.nn.functional.leaky_relu(z, slope))
        if in_place:
            ctx.mark_dirty(x)
        # The statistics are kept as batch norm keeps them (mean and 1/std); backward reads 1/std.
        ctx.save_for_backward(y, weight, bias, mean, invstd)
        ctx.training, ctx.slope = training, slope
        return y

    @staticmethod
    def backward(ctx, dy):
        saved_y, weight, bias, _, invstd = ctx.saved_tensors
        y, dy = saved_y.to(invstd.dtype), dy.to(invstd.dtype)  # in the statistics' (wider) dtype
        dims = [0] + list(range(2, y.dim()))
        shape = [1, -1] + [1] * (y.dim() - 2)
        positive = y > 0
        z = torch.where(positive, y, y / ctx.slope)
        xhat = (z - bias.view(shape)) / weight.view(shape)
        dz = torch.where(positive, dy, dy * ctx.slope)
        sum_dz, sum_dz_xhat = dz.sum(dims), (dz * xhat).sum(dims)
        scale = (weight * invstd).view(shape)
        if ctx.training:
            count = y.numel() // y.shape[1]
            dx = scale * (dz - (sum_dz / count).view(shape) - xhat * (sum_dz_xhat / count).view(shape))
        else:
            dx = scale * dz
        return (dx.to(saved_y.dtype), sum_dz_xhat.to(weight.dtype), sum_dz.to(bias.dtype),
                None, None, None, None, None, None, None)


class InPlaceABN(nn.modules.batchnorm._BatchNorm):
    """convbench's batch_norm_act: nn.BatchNorm's parameters and buffers (so its names and
    initialisation are the norm's), forward through InPlaceABNFunction."""

    def __init__(self, channels, negative_slope, eps=1e-5, momentum=0.1):
        super().__init__(channels, eps=eps, momentum=momentum)
        self.negative_slope = negative_slope
        self.in_place = False  # set where autograd allows it (apply_memory_policy)

    def _check_input_dim(self, x):
        if x.dim() not in (4, 5):
            raise ValueError(f"expected a 4-D or 5-D input, got {x.dim()}-D")

    def forward(self, x):
        return InPlaceABNFunction.apply(x, self.weight, self.bias, self.running_mean, self.running_var,
                                        self.training, self.momentum, self.eps, self.negative_slope,
                                        self.in_place)


class SigmoidInPlace(nn.Module):
    def forward(self, x):
        return x.sigmoid_()


class BlockModule(nn.Module):
    def __init__(self):
        super().__init__()
        self.steps = []  # (value name, module, input value names), in execution order
        self.output = None
        self._last_use = {}
        # Memory policy recompute: the whole block's forward under
        # torch.utils.checkpoint(use_reentrant=False) in a training forward.
        self.checkpointed = False

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
        if self.checkpointed and self.training and torch.is_grad_enabled():
            return torch.utils.checkpoint.checkpoint(self.run, x, use_reentrant=False)
        return self.run(x)

    def run(self, x):
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


def blur_filter(kernel):
    """The binomial filter: per spatial dim the binomial coefficients of its length ([1, 2, 1]
    for 3), their outer product normalised to sum 1 (TResNet's anti-alias blur)."""
    f = torch.ones([1] * len(kernel), dtype=torch.float64)
    for d, k in enumerate(kernel):
        row = torch.tensor([math.comb(k - 1, i) for i in range(k)], dtype=torch.float64)
        shape = [1] * len(kernel)
        shape[d] = k
        f = f * row.reshape(shape)
    return f / f.sum()


def custom_conv(conv, frozen, init):
    """A custom conv's `init` and `frozen` fields: blur fills the weight with the binomial filter
    (every (out, in) pair; bias zero); a frozen conv's weight and bias become registered buffers
    (requires_grad False: no weight gradient, not counted as parameters)."""
    if init == "blur":
        with torch.no_grad():
            conv.weight.copy_(blur_filter(list(conv.weight.shape[2:])).expand_as(conv.weight))
            if conv.bias is not None:
                conv.bias.zero_()
    if frozen:
        for name in ("weight", "bias"):
            t = getattr(conv, name)
            if t is None:
                continue
            delattr(conv, name)
            conv.register_buffer(name, t.detach().clone())
    return conv


def norm_module(kind, dims, channels, norm_groups, eps=1e-5, momentum=0.1):
    """PyTorch's norm; a custom op's eps and momentum are among its attributes only where they are
    not the defaults."""
    if kind == "batch":
        cls = nn.BatchNorm2d if dims == 2 else nn.BatchNorm3d
        return cls(channels, eps=eps, momentum=momentum)
    if kind == "group":
        return nn.GroupNorm(norm_groups, channels, eps=eps)
    return None


# The activations whose backward reads their input, each PyTorch's own module (convbench's
# lib/ops/input_saving_activation.hpp).
INPUT_SAVING_ACTIVATIONS = ("silu", "hardswish", "hardsigmoid", "relu6", "gelu")


def activation_module(kind, op):
    if kind == "silu":
        return nn.SiLU()
    if kind == "hardswish":
        return nn.Hardswish()
    if kind == "hardsigmoid":
        return nn.Hardsigmoid()
    if kind == "relu6":
        return nn.ReLU6()
    if kind == "gelu":
        return nn.GELU(approximate=op["approximate"])
    raise ValueError(f"no PyTorch module for activation {kind}")


def act_module(kind, negative_slope):
    if kind == "relu":
        return nn.ReLU()
    if kind == "leaky_relu":
        return nn.LeakyReLU(negative_slope)
    if kind in INPUT_SAVING_ACTIVATIONS:  # a block's act: gelu takes its default, the erf form
        return activation_module(kind, {"approximate": "none"})
    return None


def add_cna(m, block, prefix, src, cin, cout, kernel, stride, padding, dilation, groups, with_act=True):
    """conv -> norm -> act (without the act: with_act=False); returns the name of the last value."""
    dims = block["dims"]
    v = m.add_step(prefix + "conv", conv_module(dims, cin, cout, kernel, stride, padding, dilation,
                                                groups, block["bias"]), [src])
    norm = norm_module(block["norm"], dims, cout, block["norm_groups"])
    if norm is not None:
        v = m.add_step(prefix + "norm", norm, [v])
    return add_act(m, block, prefix, v) if with_act else v


def add_act(m, block, prefix, src):
    """The block's act on `src` (named prefix + "act"), or `src` without one."""
    act = act_module(block["act"], block["negative_slope"])
    return src if act is None else m.add_step(prefix + "act", act, [src])


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
    if kind in ("custom", "onnx"):
        # An ONNX variant as convbench read the file: its resolved ops, built as a custom variant's.
        return build_custom_ops(m, block, variant)
    if kind == "branches":
        # count convs side by side ("branches.<i>"), each on its channel slice ("split.<i>") or on
        # the whole input, concatenated ("cat"), then one norm and act (per channel, as per branch).
        count, per_out = variant["count"], variant["out_channels"]
        split = variant["split"] == "channels"
        per_in = cin // count if split else cin
        outs = []
        for i in range(count):
            src = m.add_step(f"split.{i}", Slice(i * per_in, per_in), ["input"]) if split else "input"
            outs.append(m.add_step(f"branches.{i}", conv_module(dims, per_in, per_out, k, s, p, d, 1, block["bias"]),
                                   [src]))
        v = m.add_step("cat", Concat(), outs)
        norm = norm_module(block["norm"], dims, cout, block["norm_groups"])
        if norm is not None:
            v = m.add_step("norm", norm, [v])
        act = act_module(block["act"], block["negative_slope"])
        if act is not None:
            v = m.add_step("act", act, [v])
        return v
    if kind == "repvgg":
        # RepVGG's training block: the block's conv and a 1x1 conv, each with its norm, and the input
        # through a norm when it has the output's shape (computed first, as RepVGG does), summed
        # ("sum", "sum2"), then the act.
        dense = add_cna(m, block, "dense.", "input", cin, cout, k, s, p, d, 1, with_act=False)
        pointwise = add_cna(m, block, "pointwise.", "input", cin, cout, ones, s, zeros, ones, 1, with_act=False)
        identity = None
        if cin == cout and all(x == 1 for x in s):
            norm = norm_module(block["norm"], dims, cin, block["norm_groups"])
            identity = m.add_step("identity.norm", norm, ["input"]) if norm is not None else "input"
        v = m.add_step("sum", Add(), [dense, pointwise])
        if identity is not None:
            v = m.add_step("sum2", Add(), [v, identity])
        return add_act(m, block, "", v)
    if kind == "folded":
        from peer.fold import build_folded  # noqa: E402 (fold.py imports nothing of this module)
        return build_folded(m, block, variant, build_block, conv_module)
    if kind in TORCHVISION_KINDS:
        return TORCHVISION_KINDS[kind](TorchvisionBlock(m, block), variant)
    raise ValueError(f"unknown variant kind {kind}")


# --- the kinds that are torchvision's blocks (lib/spec/kind_<kind>.cpp), written from torchvision's
# model files: convs without bias before a batch norm with PyTorch's defaults, the kind's own act,
# its own shortcut (the block's dropout and residual do not apply to them) ---------------------------

KIND_ACTS = {"relu": nn.ReLU, "relu6": nn.ReLU6, "hardswish": nn.Hardswish, "silu": nn.SiLU,
             "gelu": nn.GELU, "sigmoid": nn.Sigmoid, "hardsigmoid": nn.Hardsigmoid}


class TorchvisionBlock:
    """Adds torchvision's parts to a BlockModule under convbench's op names."""

    def __init__(self, m, block):
        self.m, self.block = m, block
        self.dims = block["dims"]
        self.keeps_shape = (block["in_channels"] == block["out_channels"]
                            and all(x == 1 for x in block["stride"]))

    def conv(self, name, src, cin, cout, spatial, strided, groups, bias):
        b, dims = self.block, self.dims
        ones = [1] * dims
        return self.m.add_step(name, conv_module(
            dims, cin, cout, b["kernel"] if spatial else ones, b["stride"] if strided else ones,
            b["padding"] if spatial else [0] * dims, b["dilation"] if spatial else ones, groups, bias), [src])

    def conv_norm_act(self, unit, src, cin, cout, spatial, strided, groups, act):
        """torchvision's Conv2dNormActivation: conv without bias, BatchNorm, the act (or none)."""
        v = self.conv(unit + "conv", src, cin, cout, spatial, strided, groups, False)
        v = self.m.add_step(unit + "norm", norm_module("batch", self.dims, cout, 1), [v])
        return v if act is None else self.m.add_step(unit + "act", KIND_ACTS[act](), [v])

    def squeeze_excitation(self, src, channels, squeeze, act, gate):
        """torchvision's SqueezeExcitation: avgpool, fc1, act, fc2, gate, scale * input."""
        pool = nn.AdaptiveAvgPool2d(1) if self.dims == 2 else nn.AdaptiveAvgPool3d(1)
        s = self.m.add_step("se.pool", pool, [src])
        s = self.conv("se.fc1", s, channels, squeeze, False, False, 1, True)
        s = self.m.add_step("se.act", KIND_ACTS[act](), [s])
        s = self.conv("se.fc2", s, squeeze, channels, False, False, 1, True)
        s = self.m.add_step("se.gate", KIND_ACTS[gate](), [s])
        return self.m.add_step("se.scale", Mul(), [src, s])

    def shortcut(self, main, p):
        """StochasticDepth(p, "row") where p > 0, then + input."""
        if p > 0:
            main = self.m.add_step("drop_path", drop_path_module(p), [main])
        return self.m.add_step("add", Add(), [main, "input"])


def build_inverted_residual(t, v):
    cin, cout = t.block["in_channels"], t.block["out_channels"]
    hidden, act = v["hidden"], v["act"]
    y = "input" if hidden == cin else t.conv_norm_act("expand.", "input", cin, hidden, False, False, 1, act)
    y = t.conv_norm_act("depthwise.", y, hidden, hidden, True, True, hidden, act)
    if v["se"]:
        y = t.squeeze_excitation(y, hidden, v["squeeze"], "relu", "hardsigmoid")
    y = t.conv_norm_act("project.", y, hidden, cout, False, False, 1, None)
    return t.m.add_step("add", Add(), [y, "input"]) if t.keeps_shape else y


def build_mbconv(t, v):
    cin, cout = t.block["in_channels"], t.block["out_channels"]
    hidden, act = v["hidden"], v["act"]
    y = "input" if hidden == cin else t.conv_norm_act("expand.", "input", cin, hidden, False, False, 1, act)
    y = t.conv_norm_act("depthwise.", y, hidden, hidden, True, True, hidden, act)
    if v["se_ratio"] > 0:
        y = t.squeeze_excitation(y, hidden, v["squeeze"], act, "sigmoid")
    y = t.conv_norm_act("project.", y, hidden, cout, False, False, 1, None)
    return t.shortcut(y, v["drop_path"]) if t.keeps_shape else y


def build_fused_mbconv(t, v):
    cin, cout = t.block["in_channels"], t.block["out_channels"]
    if "hidden" in v:
        y = t.conv_norm_act("expand.", "input", cin, v["hidden"], True, True, 1, v["act"])
        y = t.conv_norm_act("project.", y, v["hidden"], cout, False, False, 1, None)
    else:
        y = t.conv_norm_act("conv.", "input", cin, cout, True, True, 1, v["act"])
    return t.shortcut(y, v["drop_path"]) if t.keeps_shape else y


def build_convnext(t, v):
    c = t.block["in_channels"]
    y = t.conv("dwconv", "input", c, c, True, False, c, True)
    y = t.m.add_step("norm", ChannelLayerNorm(c, eps=1e-6), [y])
    y = t.conv("pwconv1", y, c, c * v["expand"], False, False, 1, True)
    y = t.m.add_step("act", KIND_ACTS[v["act"]](), [y])
    y = t.conv("pwconv2", y, c * v["expand"], c, False, False, 1, True)
    y = t.m.add_step("layer_scale", LayerScale(c), [y])
    return t.shortcut(y, v["drop_path"])


def build_shufflenet_unit(t, v):
    cin, half = t.block["in_channels"], t.block["out_channels"] // 2

    def branch(src, width_in):
        y = t.conv_norm_act("branch2.pw1.", src, width_in, half, False, False, 1, "relu")
        y = t.conv_norm_act("branch2.dw.", y, half, half, True, True, half, None)
        return t.conv_norm_act("branch2.pw2.", y, half, half, False, False, 1, "relu")

    if t.keeps_shape:
        first = t.m.add_step("split.0", Slice(0, half), ["input"])
        second = branch(t.m.add_step("split.1", Slice(half, half), ["input"]), half)
    else:
        first = t.conv_norm_act("branch1.dw.", "input", cin, cin, True, True, cin, None)
        first = t.conv_norm_act("branch1.pw.", first, cin, half, False, False, 1, "relu")
        second = branch("input", cin)
    cat = t.m.add_step("cat", Concat(), [first, second])
    return t.m.add_step("shuffle", ChannelShuffle(2), [cat])


def build_densenet_layer(t, v):
    cin = t.block["in_channels"]
    growth = t.block["out_channels"] - cin
    wide = v["bn_size"] * growth
    y = t.m.add_step("norm1", norm_module("batch", t.dims, cin, 1), ["input"])
    y = t.m.add_step("relu1", nn.ReLU(), [y])
    y = t.conv("conv1", y, cin, wide, False, False, 1, False)
    y = t.m.add_step("norm2", norm_module("batch", t.dims, wide, 1), [y])
    y = t.m.add_step("relu2", nn.ReLU(), [y])
    y = t.conv("conv2", y, wide, growth, True, False, 1, False)
    return t.m.add_step("cat", Concat(), ["input", y])


TORCHVISION_KINDS = {"inverted_residual": build_inverted_residual, "mbconv": build_mbconv,
                     "fused_mbconv": build_fused_mbconv, "convnext": build_convnext,
                     "shufflenet_unit": build_shufflenet_unit, "densenet_layer": build_densenet_layer}


def upsample_module(dims, op):
    """nn.Upsample as convbench resolved the op: nearest by its scale, or linear (bilinear in 2-D,
    trilinear in 3-D) by its scale or to its size, with its align_corners."""
    if op.get("mode", "nearest") != "linear":
        return nn.Upsample(scale_factor=op["scale"], mode="nearest")
    mode = "bilinear" if dims == 2 else "trilinear"
    if "size" in op:
        return nn.Upsample(size=tuple(op["size"]), mode=mode, align_corners=op["align_corners"])
    return nn.Upsample(scale_factor=op["scale"], mode=mode, align_corners=op["align_corners"])


def build_custom_ops(m, block, variant):
    """A custom variant's ops as convbench resolved them (every field present: the resolved spec
    applies the defaults); the channels flowing between them are tracked here, independently."""
    dims = block["dims"]
    channels = {"input": block["in_channels"]}
    for op in variant["ops"]:
        kind, name, inputs = op["op"], op["name"], op["inputs"]
        for v in inputs:
            if v not in channels:
                raise ValueError(f"{name}: unknown input value {v!r}")
        cin = channels[inputs[0]]
        if kind in ("conv", "conv_transpose"):
            cout = op["out_channels"]
            module = conv_module(dims, cin, cout, op["kernel"], op["stride"], op["padding"],
                                 op["dilation"], op["groups"], op["bias"],
                                 transposed=kind == "conv_transpose",
                                 output_padding=op.get("output_padding"))
            if kind == "conv":
                # the resolved spec names frozen and init only when they are set
                module = custom_conv(module, op.get("frozen", False), op.get("init", "default"))
        elif kind == "batch_norm":
            module = norm_module("batch", dims, cin, 1, op.get("eps", 1e-5), op.get("momentum", 0.1))
            cout = cin
        elif kind == "batch_norm_act":
            module, cout = InPlaceABN(cin, op["negative_slope"]), cin
        elif kind == "group_norm":
            module, cout = norm_module("group", dims, cin, op["norm_groups"], op.get("eps", 1e-5)), cin
        elif kind == "layer_norm":
            module, cout = ChannelLayerNorm(cin, eps=op["eps"]), cin
        elif kind == "layer_scale":
            module, cout = LayerScale(cin), cin
        elif kind == "channel_shuffle":
            module, cout = ChannelShuffle(op["groups"]), cin
        elif kind == "relu":
            module, cout = nn.ReLU(), cin
        elif kind == "leaky_relu":
            module, cout = nn.LeakyReLU(op["negative_slope"]), cin
        elif kind == "sigmoid":
            module, cout = nn.Sigmoid(), cin
        elif kind in INPUT_SAVING_ACTIVATIONS:
            module, cout = activation_module(kind, op), cin
        elif kind == "dropout":
            module, cout = nn.Dropout(op["p"]), cin
        elif kind == "channel_dropout":
            module, cout = channel_dropout_module(dims, op["p"]), cin
        elif kind == "drop_path":
            module, cout = drop_path_module(op["p"]), cin
        elif kind in ("add", "sub"):
            if channels[inputs[0]] != channels[inputs[1]]:
                raise ValueError(f"{name}: operands differ in channels")
            module, cout = (Add() if kind == "add" else Sub()), cin
        elif kind == "concat":
            module, cout = Concat(), sum(channels[v] for v in inputs)
        elif kind == "slice":
            if op["start"] + op["length"] > cin:
                raise ValueError(f"{name}: slice past the input's {cin} channels")
            module, cout = Slice(op["start"], op["length"]), op["length"]
        elif kind == "space_to_depth":
            module = SpaceToDepth(op["block_size"], op["order"])
            cout = cin * op["block_size"] ** dims
        elif kind == "depth_to_space":
            module = DepthToSpace(op["block_size"], op["order"])
            cout = cin // op["block_size"] ** dims
        elif kind == "mul":
            if channels[inputs[0]] != channels[inputs[1]]:
                raise ValueError(f"{name}: operands differ in channels")
            module, cout = Mul(), cin
        elif kind in ("max_pool", "avg_pool"):
            kernel, stride, padding = op["kernel"], op["stride"], op["padding"]
            if kind == "max_pool":
                cls = nn.MaxPool2d if dims == 2 else nn.MaxPool3d
                module = cls(tuple(kernel), stride=tuple(stride), padding=tuple(padding))
            else:
                cls = nn.AvgPool2d if dims == 2 else nn.AvgPool3d
                module = cls(tuple(kernel), stride=tuple(stride), padding=tuple(padding),
                             count_include_pad=True)
            cout = cin
        elif kind == "global_avg_pool":
            module, cout = (nn.AdaptiveAvgPool2d(1) if dims == 2 else nn.AdaptiveAvgPool3d(1)), cin
        elif kind == "upsample":
            module, cout = upsample_module(dims, op), cin
        elif kind == "linear":
            module, cout = FlatLinear(cin, op["out_features"], bias=op["bias"]), op["out_features"]
        else:
            raise ValueError(f"{name}: unknown op kind {kind}")
        m.add_step(name, module, inputs)
        channels[name] = cout
    if variant["output"] not in channels or variant["output"] == "input":
        raise ValueError(f"output: {variant['output']!r} is not an op of this variant")
    return variant["output"]


# --- memory policies (configs/README.md "Memory policies"), decided here from the module's own steps -------

# What saves its own output for backward: an op after one of these cannot overwrite its input
# (autograd's version check would fail at backward).
def saves_its_output(module):
    return isinstance(module, (nn.ReLU, nn.Sigmoid, SigmoidInPlace, InPlaceABN)) or (
        isinstance(module, nn.LeakyReLU) and module.inplace)


def may_overwrite_input(m, index):
    """Whether step `index` may write over its input, as PyTorch users may: the input is not the
    block's (the caller's tensor), no other step reads it, and the step that made it did not save
    it (a ReLU, a sigmoid, an in-place op). A view (Slice) is left alone: writing into it would
    write into its base."""
    name, module, inputs = m.steps[index]
    x = inputs[0]
    if x == "input" or sum(ins.count(x) for _, _, ins in m.steps) != 1:
        return False
    producer = next(mod for n, mod, _ in m.steps if n == x)
    return not saves_its_output(producer) and not isinstance(producer, Slice)


def apply_memory_policy(m, policy):
    """recompute: the block's forward under torch.utils.checkpoint; inplace_act: ReLU, LeakyReLU
    (slope >= 0) and sigmoid in place where allowed; inplace_abn: each BatchNorm that only a
    LeakyReLU or a ReLU (then slope 0.01) reads becomes InPlaceABN (the norm's name and parameters, the activation dropped),
    in place where allowed. Returns {removed step: the step that now makes its value}."""
    renamed = {}
    if policy == "recompute":
        m.checkpointed = True
    elif policy == "inplace_act":
        for i, (name, module, _) in enumerate(m.steps):
            if isinstance(module, nn.ReLU) and may_overwrite_input(m, i):
                replace_step(m, name, nn.ReLU(inplace=True))
            elif isinstance(module, nn.LeakyReLU) and module.negative_slope >= 0 and may_overwrite_input(m, i):
                replace_step(m, name, nn.LeakyReLU(module.negative_slope, inplace=True))
            elif isinstance(module, nn.Sigmoid) and may_overwrite_input(m, i):
                replace_step(m, name, SigmoidInPlace())
    elif policy == "inplace_abn":
        for name, module, _ in list(m.steps):
            readers = [(n, mod) for n, mod, ins in m.steps if name in ins]
            if not isinstance(module, nn.modules.batchnorm._BatchNorm) or isinstance(module, InPlaceABN):
                continue
            if len(readers) != 1 or not isinstance(readers[0][1], (nn.LeakyReLU, nn.ReLU)):
                continue
            act_name, act = readers[0]
            # InPlaceABN has no ReLU: a ReLU block adopting it takes leaky_relu with its default
            # slope 0.01, as convbench's inplace_abn does (lib/variants/memory_policy.cpp).
            slope = act.negative_slope if isinstance(act, nn.LeakyReLU) else 0.01
            fused = InPlaceABN(module.num_features, slope, eps=module.eps, momentum=module.momentum)
            replace_step(m, name, fused)
            remove_step(m, act_name, name)
            renamed[act_name] = name
        for i, (_, module, _) in enumerate(m.steps):
            if isinstance(module, InPlaceABN):
                module.in_place = may_overwrite_input(m, i)
    return renamed


def remove_step(m, name, replacement):
    """Drops step `name`; its readers read `replacement` instead."""
    *containers, leaf = name.split(".")
    parent = m
    for part in containers:
        parent = getattr(parent, part)
    delattr(parent, leaf)
    m.steps = [(n, mod, [replacement if v == name else v for v in ins]) for n, mod, ins in m.steps if n != name]


def fold_block(block, variant, source):
    """A folded variant's module folded from the given source module (peer/fold.py)."""
    from peer.fold import build_folded
    m = BlockModule()
    return m.finish(build_folded(m, block, variant, build_block, conv_module, source))


def use_philox_dropout(m, dropout_seed):
    """A folded or custom variant's own dropout steps draw convbench's Philox masks (with a seed)."""
    if dropout_seed is None:
        return
    for name, module, _ in list(m.steps):
        if isinstance(module, nn.Dropout):
            replace_step(m, name, PhiloxUnitDropout(module.p, dropout_seed))
        elif isinstance(module, (nn.Dropout2d, nn.Dropout3d)):
            replace_step(m, name, PhiloxUnitDropout(module.p, dropout_seed, unit_dims=2))
        elif type(module).__name__ == "StochasticDepth":
            replace_step(m, name, PhiloxUnitDropout(module.p, dropout_seed, unit_dims=1))


def build_block(block, variant, dropout_seed=None):
    """The variant as a BlockModule (float32, CPU, PyTorch's default init). With dropout_seed the
    dropout ops draw convbench's Philox masks instead of PyTorch's own."""
    m = BlockModule()
    dims = block["dims"]

    def dropout(p):
        return nn.Dropout(p) if dropout_seed is None else PhiloxUnitDropout(p, dropout_seed)

    out = build_main_path(m, block, variant)
    policy = variant.get("memory_policy", "none")
    if variant["kind"] == "folded":
        # The folded graph is the whole block, its source's boundary conversions, dropout and
        # shortcut included (kept ops, or folded in).
        use_philox_dropout(m, dropout_seed)
        return finish_with_policy(m, policy, out)
    if variant["kind"] in TORCHVISION_KINDS:
        # torchvision's blocks carry their own shortcut: the block's dropout and residual do not apply.
        use_philox_dropout(m, dropout_seed)
        return finish_with_policy(m, policy, convert_at_boundary(m, block, out))
    if variant["kind"] in ("custom", "onnx"):
        # A custom variant's ops are the whole block: its `output` is the block output, and the
        # block's dropout and residual fields do not apply to it (as convbench's variant builder).
        use_philox_dropout(m, dropout_seed)
        return finish_with_policy(m, policy, convert_at_boundary(m, block, out))
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
    return finish_with_policy(m, policy, convert_at_boundary(m, block, out))


def finish_with_policy(m, policy, out):
    """The block's ops are all there: the memory policy rewrites them (an activation fused away
    hands its value to the fused norm), then the value lifetimes are worked out."""
    renamed = apply_memory_policy(m, policy)
    return m.finish(renamed.get(out, out))


def converts_at_boundary(block):
    """layout_conversion: boundary on a channels-last block: the network around it is
    channels-first, so the block converts its input and its output (as convbench does)."""
    return block.get("layout_conversion") == "boundary" and block["layout"] == "channels_last"


def convert_at_boundary(m, block, out):
    """Puts the two conversions around the block's ops when it converts at its boundary: every
    reader of the block input reads the converted one. Returns the block's output value."""
    if not converts_at_boundary(block):
        return out
    to_block = "to_channels_last"
    m.steps = [(n, mod, [to_block if v == "input" else v for v in ins]) for n, mod, ins in m.steps]
    m.add_module(to_block, ToMemoryFormat(memory_format(block)))
    m.steps.insert(0, (to_block, getattr(m, to_block), ["input"]))
    return m.add_step("to_channels_first", ToMemoryFormat(torch.contiguous_format), [out])


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
    """The block's layout: its parameters' and its ops' memory format."""
    if block["layout"] != "channels_last":
        return torch.contiguous_format
    return torch.channels_last if block["dims"] == 2 else torch.channels_last_3d


def io_memory_format(block):
    """The memory format of the block's input and output (and their gradients): the network's
    channels-first one when the block converts at its boundary, else the block's own."""
    return torch.contiguous_format if converts_at_boundary(block) else memory_format(block)


TORCH_DTYPES = {"float32": torch.float32, "tf32": torch.float32, "float16": torch.float16,
                "bfloat16": torch.bfloat16}
