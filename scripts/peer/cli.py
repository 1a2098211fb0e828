"""PyTorch as the independent peer for every number convbench prints.

    torch_peer.py SPEC --json OUT [--device cpu|cuda] [--max-noise 0.005] [--min-time 0.5]
                  [--min-samples 10] [--timeout 15] [--warmup 3] [--counts-only]
                  [--dump-tensors DIR [--dump-scale]] [--no-cudnn-benchmark]
                  [--convbench PATH] [--counters] [--sweep FIELD=VALUES ...]
                  [--per-op N] [--threads N]

It takes the spec as convbench resolves it (`convbench validate SPEC --resolved-json -`, run with
--convbench, $CONVBENCH, build/convbench or `convbench` on PATH; SPEC may also be such a resolved
file): every block at every sweep point (block-major; first sweep key slowest), every variant and
custom op with all defaults applied. It does not parse specs itself, so the spec's rules live in
one place. It builds each variant as torch.nn modules whose module and parameter names match
convbench's op names ("conv", "reduce.conv", "shortcut.norm", a custom op's own name, ...),
computes every number itself, and writes one row per block x variant x sweep point in the
convbench.results/1 schema: parameter and buffer counts, conv MACs/FLOPs per direction, times of
forward / backward / step, and memory (CUDA: max_memory_allocated around one step; CPU: the bytes
autograd saves for backward). A network (the spec's `networks:`) is not built from the spec: each
of its variants that has a PyTorch twin (peer/networks.py: torchvision's or timm's own model) is
measured on that twin, its row marked "subject": "network"; the others have no row.

--counts-only   counts and shapes only: no timing and no memory pass.
--counters      each row also carries "counters": the numbers of the FLOP counters users run and
                what their rules need to predict them from convbench's MACs (peer/counters.py;
                needs the peer environment, scripts/setup-peers.sh).
--per-op N      each timed row also carries "op_times": every op (a step module, named as
                convbench's op) timed in forward and backward over N extra steps, the medians in
                the shape of convbench's `compare --per-op N` (peer/op_times.py), for `convbench
                report --against` to compare the runtimes op by op.
--threads N     PyTorch's intra-op threads on the CPU (default: one per CPU, as convbench's cpu
                backend; give the same as convbench's --threads).
--dump-tensors  DIR: for every train-mode row, one float64 training step on the CPU with
                reproducible inputs, parameters and (Philox) dropout masks, written as
                DIR/<block>__<variant>__<point_label or "default">.json so that convbench's
                backends can be checked element by element against PyTorch.
--dump-scale    with --dump-tensors: shrink batch to 2 and every spatial size to at most 8 (the
                channels and every other field are unchanged) so that the files stay small.

Run it in the peer environment (scripts/peer-python.sh: PyTorch 2.15 from PyPI, CPU), with
/usr/bin/python3 (Debian's PyTorch 1.13, CPU) or any PyTorch 2.x (CPU or CUDA). With
torch.utils.flop_counter.FlopCounterMode (PyTorch >= 2.1) each row also carries that counter's
raw numbers and the grouped grad-weight correction under "flop_counter".

Conventions of a row:
  macs      conv multiply-accumulates from the weight, input and output shapes PyTorch sees in
            forward hooks: forward; backward_data (convs whose input needs a gradient: not those
            reading the block input); backward_weight (every conv). Infer rows: backward 0.
  flops     2 x macs, convs only ("flops_scope": "conv"): elementwise work is not compared.
  buffers   BN running mean + running var elements (not num_batches_tracked).
  buffer_counters
            BN num_batches_tracked elements: buffers + buffer_counters is PyTorch's own count
            of the module's buffers (convbench's batch norm keeps no counter; it counts them apart).
  time_ms   forward / backward (alone, after an untimed forward) / step, each with median, min,
            max, q1, q3, samples and raw_ms; backward and step are null in infer mode.
  memory    saved_bytes: distinct storages autograd saves in one training forward, without
            parameters, buffers and the block input (saved_bytes_including_input adds it); on
            CUDA also peak_bytes = max_memory_allocated around one step.
  time_span CUDA rows: "first_launch": CUDA events from the first kernel of each sample (the first
            leaf module's call; in backward, when autograd reaches the output), as convbench's
            eager timing starts at its first launch (peer/measure.py, Runner.timed).
  math      CUDA rows: cudnn_allow_tf32 (true in tf32 rows only: PyTorch's default for
            convolutions), matmul_allow_tf32 (false: PyTorch's default), cudnn_benchmark.
  op_times  --per-op N: {op: {module, forward_ms, backward_ms, recompute_ms, note}}, medians over N
            steps (backward_ms absent where the op's output needs no gradient; note: why a phase
            is missing); op_times_error instead when the ops could not be timed (the row's times
            stand).
  custom    a custom variant's ops are the whole block: the block's dropout and residual fields
            apply to the built-in kinds only, as in convbench's variant builder.
"""

import argparse
import datetime
import os
import platform
import shlex
import sys

import torch

from peer.dumps import DUMP_BATCH, DUMP_MAX_SIZE, dump_row
from peer.io import InputError, finite, load_resolved, write_json
from peer.measure import classify_error, run_row
from peer.networks import twin_factory
from peer.op_times import per_op_supported

SCHEMA = "convbench.results/1"


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def cudnn_version(device):
    """cuDNN's version on a CUDA run, else None. Not asked on the CPU: a PyPI torch checks the
    cuDNN the loader finds against the one it was built with on the first question, and fails
    where the machine's (e.g. CUDA 13's 9.19 under torch 2.15's 9.26) is older, though a CPU
    run never uses it."""
    if device.type != "cuda" or not torch.backends.cudnn.is_available():
        return None
    return torch.backends.cudnn.version()


def provenance(opts, device, spec_sha):
    cudnn = cudnn_version(device)
    return {
        "python": platform.python_version(), "torch": torch.__version__,
        "cuda": torch.version.cuda, "cudnn": cudnn,
        "device_name": torch.cuda.get_device_name(device) if device.type == "cuda" else cpu_model(),
        "cpu": cpu_model(), "threads": torch.get_num_threads(),
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "command_line": " ".join(shlex.quote(a) for a in [sys.argv[0]] + list(opts.argv)),
        "spec": opts.spec, "spec_sha256": spec_sha, "sweeps": list(opts.sweep or []),
        "options": {"max_noise": opts.max_noise, "min_time_s": opts.min_time,
                    "min_samples": opts.min_samples, "timeout_s": opts.timeout,
                    "warmup": opts.warmup, "counts_only": opts.counts_only, "per_op": opts.per_op,
                    "cudnn_benchmark": bool(torch.backends.cudnn.benchmark)},
    }


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("spec", help="spec file (.yaml, .yml or .json), or a resolved spec (.json)")
    p.add_argument("--json", dest="json_out", help="results file to write")
    p.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    p.add_argument("--max-noise", type=float, default=0.005, help="stop when the relative stdev, or the median's 95%% confidence half-width over the median, is at most this")
    p.add_argument("--min-time", type=float, default=0.5, help="seconds of samples at least")
    p.add_argument("--min-samples", type=int, default=10)
    p.add_argument("--timeout", type=float, default=15.0, help="seconds per measurement at most")
    p.add_argument("--warmup", type=int, default=3, help="untimed steps before measuring")
    p.add_argument("--counts-only", action="store_true", help="no timing and no memory pass")
    p.add_argument("--per-op", type=int, default=0, metavar="N",
                   help="also time every op (step module) in forward and backward over N extra steps: op_times, "
                        "as convbench's compare --per-op N")
    p.add_argument("--threads", type=int, metavar="N",
                   help="PyTorch's threads on the CPU (default: one per CPU)")
    p.add_argument("--counters", action="store_true",
                   help="each row also carries the FLOP counters' numbers (fvcore, ptflops, thop, torchinfo, "
                        "FlopCounterMode) and the extras their rules need (peer/counters.py; the peer environment)")
    p.add_argument("--dump-tensors", metavar="DIR", help="write float64 training-step dumps")
    p.add_argument("--dump-scale", action="store_true",
                   help=f"dumps at batch {DUMP_BATCH} and spatial sizes <= {DUMP_MAX_SIZE}")
    p.add_argument("--no-cudnn-benchmark", action="store_true",
                   help="leave cudnn.benchmark off (default: on, as most training scripts)")
    p.add_argument("--convbench", metavar="PATH",
                   help="the convbench binary that resolves the spec (default: $CONVBENCH, build/convbench, PATH)")
    p.add_argument("--sweep", action="append", metavar="FIELD=VALUES",
                   help="as convbench's --sweep (repeatable), applied when convbench resolves the spec: the same "
                        "rows as `convbench compare SPEC --sweep ...`")
    opts = p.parse_args(argv)
    opts.argv = list(argv)
    if opts.per_op < 0:
        p.error("--per-op: give a number of steps, 0 or more")
    if opts.threads is not None and opts.threads < 1:
        p.error("--threads: give 1 or more")
    if not opts.json_out and not opts.dump_tensors:
        p.error("nothing to do: give --json and/or --dump-tensors")
    return opts


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    opts = parse_args(argv)
    try:
        doc = load_resolved(opts.spec, opts.convbench, opts.sweep or ())
        blocks, networks, spec_sha = doc["blocks"], doc.get("networks", []), doc["sha256"]
    except InputError as e:
        print(f"torch_peer: {e}", file=sys.stderr)
        return 2
    if opts.per_op and not per_op_supported():
        print(f"torch_peer: --per-op needs PyTorch 2.0 or later (autograd node pre-hooks), not {torch.__version__}",
              file=sys.stderr)
        return 2
    if opts.device == "cuda" and not torch.cuda.is_available():
        print("torch_peer: --device cuda but torch.cuda.is_available() is False", file=sys.stderr)
        return 2
    device = torch.device(opts.device)
    if device.type == "cpu":
        torch.set_num_threads(opts.threads or os.cpu_count() or 1)
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
    # A network row is measured on its PyTorch twin (peer/networks.py: torchvision's or timm's own
    # model, or the seed's module), not built from the spec; a network without one has no row
    # (convbench's row is "only in ours").
    for network in networks:
        for variant in network["variants"]:
            label = f"{network['name']}/{variant['name']}" + (
                f" [{network['point_label']}]" if network.get("point_label") else "")
            make = twin_factory(network["name"], variant["name"])
            if make is None:
                print(f"torch_peer: {label}: no PyTorch twin of this network variant (peer/networks.py): no row",
                      file=sys.stderr)
                continue
            if opts.json_out:
                row = run_row(network, variant, opts, device, make_module=make)
                rows.append(finite(row))
                print(f"torch_peer: {label}: {row['status']} {row['message']}".rstrip(), file=sys.stderr)
    if opts.json_out:
        write_json(opts.json_out, {"schema": SCHEMA, "engine": f"pytorch {torch.__version__}",
                                   "device": device.type,
                                   "provenance": provenance(opts, device, spec_sha),
                                   "results": rows})
    return 0
