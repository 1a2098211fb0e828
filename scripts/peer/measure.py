"""Timing and memory: nvbench's stopping rule (warm-up; samples until relative noise <= max-noise
after >= min-time seconds of samples and >= min-samples samples, or a timeout), what autograd
saves, the CUDA allocator's peak around one step; and one result row per block x variant."""

import contextlib
import math
import statistics
import time

import numpy as np
import torch

from peer.counts import count_row, flop_counter_section
from peer.modules import TORCH_DTYPES, build_block, input_shape, io_memory_format, memory_format
from peer.op_times import time_ops

# `precision` -> the dtype torch.autocast computes in (plain: no autocast).
AUTOCAST_DTYPES = {"amp_float16": torch.float16, "amp_bfloat16": torch.bfloat16}


class Runner:
    """One variant prepared on its device: module, input, fixed upstream gradient. `module`, when
    given, is used instead of the one built from the block's resolved spec (a network's PyTorch
    twin, peer/networks.py); `block` then only gives the input, dtype, layout and mode."""

    def __init__(self, block, variant, device, module=None):
        self.device = device
        self.train = block["mode"] == "train"
        dtype = TORCH_DTYPES[block["dtype"]]
        if device.type == "cuda":
            # A tf32 row is PyTorch's default: TF32 allowed in convolutions, not in matrix
            # products (convbench's linear kernel is plain float32 too); a float32 row has no
            # TF32 anywhere, as convbench's float32 asks cuDNN for FMA math.
            torch.backends.cudnn.allow_tf32 = block["dtype"] == "tf32"
            torch.backends.cuda.matmul.allow_tf32 = False
            self.math = {"cudnn_allow_tf32": torch.backends.cudnn.allow_tf32,
                         "matmul_allow_tf32": False, "cudnn_benchmark": bool(torch.backends.cudnn.benchmark)}
        # Mixed precision (convbench's `precision`, in the resolved variant where it is an AMP mode):
        # float32 module and input, forward under torch.autocast in the low dtype, as PyTorch users
        # train with AMP.
        self.autocast = AUTOCAST_DTYPES.get(variant.get("precision", "plain"))
        fmt = memory_format(block)
        generator = torch.Generator().manual_seed(0)
        self.module = (module if module is not None else build_block(block, variant)).to(device=device, dtype=dtype)
        self.module = self.module.to(memory_format=fmt)
        self.module.train(self.train)
        # float16 AMP trains with GradScaler's dynamic loss scaling (convbench's
        # runtime/loss_scaler.hpp): scaled backward, unscale_ with its inf/NaN check, update. The
        # optimizer only carries unscale_'s bookkeeping; it never steps.
        self.scaler = self.optimizer = None
        if self.train and self.autocast is torch.float16:
            self.scaler = torch.amp.GradScaler(device.type)
            self.optimizer = torch.optim.SGD(self.module.parameters(), lr=0.0)
        x = torch.randn(input_shape(block), generator=generator)
        io_fmt = io_memory_format(block)
        self.x = x.to(device=device, dtype=dtype).contiguous(memory_format=io_fmt)
        self.dy = None
        if self.train:
            y = self.forward()
            dy = torch.randn(tuple(y.shape), generator=generator)
            self.dy = dy.to(device=device, dtype=y.dtype).contiguous(memory_format=io_fmt)
            del y

    def sync(self):
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)

    def clear_grads(self):
        self.module.zero_grad(set_to_none=True)

    def forward(self):
        with contextlib.ExitStack() as scope:
            if self.autocast is not None:
                scope.enter_context(torch.autocast(self.device.type, dtype=self.autocast))
            if not self.train:
                scope.enter_context(torch.no_grad())
            return self.module(self.x)

    def backward(self, y):
        if self.scaler is None:
            y.backward(self.dy)
            return
        self.scaler.scale(y).backward(self.dy)
        self.scaler.unscale_(self.optimizer)
        self.scaler.update()

    def step(self):
        y = self.forward()
        if self.train:
            self.backward(y)

    # Where a CUDA timing starts. convbench's eager timing starts at the first kernel the timed
    # region launches (lib/backends/cuda/first_launch_start.hpp), not when the region begins: a
    # start event recorded on an idle stream would count the host's work before the first
    # launch (here: Python entering the module) as device time. The peer starts at the same
    # point: forward and step at the first leaf module's call (a global forward pre-hook, removed
    # as it fires), backward when autograd reaches the output (a hook on it, before the output
    # op's backward kernels). A torch.compile'd module calls no module hooks: it is timed from
    # the region's start, and its rows say so ("time_span": "call").
    time_span = "first_launch"

    def timed(self, work, arm=None):
        """Milliseconds of work(); CUDA events on the current stream, else the host clock. `arm`,
        given a callback that records the start, arranges for it to run at the first launch and
        returns a function that undoes the arrangement."""
        self.sync()
        if self.device.type == "cuda":
            call_start, launch_start, end = (torch.cuda.Event(enable_timing=True) for _ in range(3))
            started = []

            def begin():
                if not started:
                    started.append(True)
                    launch_start.record()

            disarm = arm(begin) if arm is not None and self.time_span == "first_launch" else None
            call_start.record()
            try:
                work()
            finally:
                if disarm is not None:
                    disarm()
            end.record()
            end.synchronize()
            return float((launch_start if started else call_start).elapsed_time(end))
        t0 = time.perf_counter()
        work()
        return (time.perf_counter() - t0) * 1e3

    @staticmethod
    def at_first_leaf_module(begin):
        handle = None

        def hook(module, _args):
            if next(module.children(), None) is None:  # a leaf: it launches the first kernel
                begin()
                handle.remove()

        handle = torch.nn.modules.module.register_module_forward_pre_hook(hook)
        return handle.remove

    def sample_forward(self):
        self.clear_grads()
        return self.timed(self.forward, self.at_first_leaf_module)

    def sample_backward(self):
        self.clear_grads()
        y = self.forward()  # untimed

        def at_output_gradient(begin):
            handle = y.register_hook(lambda grad: begin())
            return handle.remove

        return self.timed(lambda: self.backward(y), at_output_gradient)

    def sample_step(self):
        self.clear_grads()
        return self.timed(self.step, self.at_first_leaf_module)


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


def median_precision(samples):
    """Half the width of the median's distribution-free 95% confidence interval over the median
    (ranks n/2 -+ 1.96 sqrt(n)/2), as convbench's results/sample_stats.cpp computes it."""
    n = len(samples)
    if n < 2:
        return math.inf
    s = sorted(samples)
    half, centre = 1.96 * math.sqrt(n) / 2.0, n / 2.0
    lo = int(max(1.0, math.floor(centre - half)))
    hi = int(min(float(n), math.ceil(centre + half + 1.0)))
    median = float(np.percentile(s, 50))
    return (s[hi - 1] - s[lo - 1]) / (2.0 * median) if median > 0 else math.inf


def measure(sample, opts):
    """convbench's stopping rule (lib/measure/stopping_rule.hpp): enough samples and time, then
    the samples' noise or the median's confidence interval within max_noise, or the timeout."""
    samples, busy_s, next_precision_check = [], 0.0, 0
    start = time.perf_counter()
    while True:
        ms = sample()
        samples.append(ms)
        busy_s += ms / 1e3
        enough = len(samples) >= opts.min_samples and busy_s >= opts.min_time
        if enough and relative_noise(samples) <= opts.max_noise:
            return summarize(samples, "converged")
        if enough and len(samples) >= next_precision_check:
            if median_precision(samples) <= opts.max_noise:
                return summarize(samples, "precision")
            next_precision_check = len(samples) + max(1, len(samples) // 10)
        if time.perf_counter() - start >= opts.timeout:
            return summarize(samples, "timeout")


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
        **({"precision": variant["precision"]} if "precision" in variant else {}),
        "input_shape": input_shape(block), "output_shape": None, "params": None, "buffers": None,
        "macs": None, "flops": None, "flops_scope": "conv",  # elementwise FLOPs are not compared
        "status": "ok", "message": "", "device": device.type, "time_ms": None, "memory": None,
    }


def run_row(block, variant, opts, device, make_module=None):
    """One row; `make_module`, when given, builds the module (a network's PyTorch twin,
    peer/networks.py) instead of the block's resolved spec."""
    row = base_row(block, variant, device)
    if make_module is not None:
        row["subject"] = "network"
    try:
        counts = count_row(block, variant, make_module)
    except Exception as e:
        row["status"], row["message"] = "error", classify_error(e)[1]
        return row
    row.update({k: counts[k] for k in ("params", "buffers", "buffer_counters", "macs", "flops")})
    row["output_shape"] = counts["output_shape"]
    if make_module is not None and len(row["output_shape"]) == 2:
        # A twin's classifier flattens (N, C) where convbench's linear keeps N x C x 1 x ... x 1:
        # the same logical output.
        row["output_shape"] = row["output_shape"] + [1] * block["dims"]
    row["convs"] = [{k: r[k] for k in ("name", "transposed", "groups", "w_shape", "macs",
                                       "input_requires_grad")} for r in counts["convs"]]
    row["flop_counter"] = flop_counter_section(block, variant, device, make_module)
    if getattr(opts, "counters", False) and make_module is None:  # the counters' rules are for blocks
        from peer.counters import RULES, counters_section, predict  # the peer environment's packages
        section = counters_section(block, variant)
        # What each counter's rule predicts from the peer's own MACs (equal to convbench's:
        # `report --against` checks that), and the rule in words, for `report --against`'s table.
        section["predicted"] = predict(row, section)
        section["rules"] = {k: RULES[k] for k in section["predicted"]}
        row["counters"] = section
    if opts.counts_only:
        return row
    runner = None
    try:
        runner = Runner(block, variant, device, module=make_module() if make_module else None)
        for _ in range(opts.warmup):
            runner.clear_grads()
            runner.step()
        runner.sync()
        row["memory"] = memory_row(runner)  # a pass of its own, before timing
        row["time_ms"] = time_row(runner, opts)
        if getattr(opts, "per_op", 0) > 0:  # after the timing, as convbench's --per-op steps
            try:
                row["op_times"] = time_ops(runner, opts.per_op)
            except Exception as e:  # the row's times stand; `report --against` says its ops are untimed
                row["op_times_error"] = classify_error(e)[1]
        if device.type == "cuda":
            row["time_span"] = runner.time_span
            row["math"] = runner.math
    except Exception as e:
        row["status"], row["message"] = classify_error(e)
    finally:
        del runner
        if device.type == "cuda":
            torch.cuda.empty_cache()
    return row
