"""Per-op times (`torch_peer.py --per-op N`): each step of a block (a leaf module named as
convbench's op) timed in forward and backward over N extra training steps, written in the shape
of convbench's `op_times` ({op name: {forward_ms, backward_ms, recompute_ms}}, medians), so that
`convbench report --against` can compare the two runtimes op by op.

Forward: a module's forward pre-hook and forward hook (the device synchronised in each, as
convbench synchronises around every op under --per-op).

Backward: not the modules' full backward hooks. Those wrap a module's inputs and outputs in a
view-making autograd function, which fails on an in-place op downstream (nn.ReLU(inplace=True)
after a norm: "Output 0 of BackwardHookFunction is a view and is being modified inplace"), and
which fires at once, before the weight gradient is computed, when no input needs a gradient (a
first conv that reads the block input). Instead the forward hook walks the autograd nodes the call
created (from its output's grad_fn down to its inputs' grad_fns, which the pre-hook noted) and
hooks them: the module's backward starts at the first of its nodes to run and ends when the last
of them has run. An op whose output needs no gradient has no backward, as in convbench. The
parameters' AccumulateGrad nodes (which only move the computed gradient into .grad) are left out.
Where autograd runs another branch's node between two nodes of one module (a module of several
nodes, side by side with a shortcut), that node's time is counted in the module's.

Recompute (the block under torch.utils.checkpoint): a module's forward that runs again during
backward is timed apart, as recompute_ms, as convbench does."""

import statistics
import time

import torch

# How far a module's nodes are looked for, at most: a module that makes more autograd nodes than
# this is not a single op (and a walk that misses its inputs' nodes must not run through the graph).
MAX_NODES_PER_OP = 64


def node_set(output_fn, boundary):
    """The autograd nodes from output_fn down to (not including) the boundary nodes, without the
    parameters' AccumulateGrad nodes; None when there are more than MAX_NODES_PER_OP."""
    found, todo = [], [output_fn]
    seen = set()
    while todo:
        fn = todo.pop()
        if fn is None or id(fn) in seen or id(fn) in boundary or type(fn).__name__ == "AccumulateGrad":
            continue
        seen.add(id(fn))
        found.append(fn)
        if len(found) > MAX_NODES_PER_OP:
            return None
        todo.extend(next_fn for next_fn, _ in fn.next_functions)
    return found


def output_tensors(value):
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (tuple, list)):
        return [t for v in value for t in output_tensors(v)]
    return []


class OpTimer:
    """Hooks on every step of a BlockModule; collect() runs the steps and returns op_times."""

    def __init__(self, module, sync):
        self.sync = sync
        self.in_backward = False
        self.samples = {}  # op name -> {"forward_ms": [...], "backward_ms": [...], "recompute_ms": [...]}
        self.notes = {}  # op name -> why a phase is missing
        self.handles = []
        for name, step, _ in module.steps:
            self.samples[name] = {"forward_ms": [], "backward_ms": [], "recompute_ms": []}
            self.handles.append(step.register_forward_pre_hook(self.pre_hook(name)))
            self.handles.append(step.register_forward_hook(self.post_hook(name)))
        self.modules = {name: type(step).__name__ for name, step, _ in module.steps}
        self.calls = {}  # op name -> (start time, the autograd nodes that made its inputs)

    def remove(self):
        for h in self.handles:
            h.remove()
        self.handles = []

    def now(self):
        self.sync()
        return time.perf_counter()

    def pre_hook(self, name):
        def hook(_module, args):
            # The nodes themselves are kept, not only their ids, so that no id is reused meanwhile.
            inputs = [a.grad_fn for a in output_tensors(list(args)) if a.grad_fn is not None]
            self.calls[name] = (self.now(), inputs)
        return hook

    def post_hook(self, name):
        def hook(_module, _args, output):
            start, inputs = self.calls.pop(name)
            boundary = {id(n) for n in inputs}
            ms = (self.now() - start) * 1e3
            self.samples[name]["recompute_ms" if self.in_backward else "forward_ms"].append(ms)
            if self.in_backward or not torch.is_grad_enabled():
                return
            outputs = [t for t in output_tensors(output) if t.grad_fn is not None]
            if not outputs:
                return  # its output needs no gradient: no backward
            nodes = []
            for t in outputs:
                found = node_set(t.grad_fn, boundary)
                if found is None:
                    self.notes[name] = (f"backward not timed: more than {MAX_NODES_PER_OP} autograd nodes, "
                                        "not one op")
                    return
                nodes += [n for n in found if all(n is not m for m in nodes)]
            self.watch_backward(name, nodes)
        return hook

    def watch_backward(self, name, nodes):
        state = {"start": None, "left": len(nodes)}

        def before(_grad_outputs):
            if state["start"] is None:
                state["start"] = self.now()

        def after(_grad_inputs, _grad_outputs):
            state["left"] -= 1
            if state["left"] == 0 and state["start"] is not None:
                self.samples[name]["backward_ms"].append((self.now() - state["start"]) * 1e3)

        for n in nodes:
            n.register_prehook(before)
            n.register_hook(after)

    def op_times(self):
        out = {}
        for name, phases in self.samples.items():
            entry = {"module": self.modules[name]}
            for phase, values in phases.items():
                if values:
                    entry[phase] = statistics.median(values)
            if name in self.notes:
                entry["note"] = self.notes[name]
            out[name] = entry
        return out


def per_op_supported():
    """Autograd node pre-hooks came with PyTorch 2.0 (Debian's 1.13 has none)."""
    node = getattr(getattr(torch.autograd, "graph", None), "Node", None)
    return node is not None and hasattr(node, "register_prehook")


def time_ops(runner, steps):
    """op_times of the runner's BlockModule over `steps` steps (forward alone in inference)."""
    module = runner.module
    if not hasattr(module, "steps"):
        raise ValueError("--per-op times the ops of a block's modules, not of a whole network's model")
    timer = OpTimer(module, runner.sync)
    try:
        for _ in range(steps):
            runner.clear_grads()
            y = runner.forward()
            if runner.train:
                timer.in_backward = True
                try:
                    runner.backward(y)
                finally:
                    timer.in_backward = False
            del y
        runner.sync()
    finally:
        timer.remove()
        runner.clear_grads()
    return timer.op_times()
