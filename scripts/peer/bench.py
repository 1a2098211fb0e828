"""Speed side by side: convbench, PyTorch eager and torch.compile (inductor) on the same spec and
device (cpu, or cuda on a GPU machine), in one run, with the same threads and the same stopping
rule, the engines interleaved round by round (A B C A B C ...) so that load from elsewhere hits
all three alike.

A round times every row of the spec on each engine in turn: convbench as one `convbench compare
--device DEVICE` process over the whole spec (its own warm-up and stopping rule, the same flags),
then the peer's eager module and its torch.compile'd twin with peer/measure.py's warm-up and
stopping rule (the compiled module is compiled once, before the first round, outside any timing).
The figure of a row is its step time (forward + backward in train mode, forward in infer mode):
each engine's median per round, then the median over the rounds. Ratios are ours / theirs:
below 1.0 convbench is faster. Inference rows on the CPU have a fourth engine, ONNX Runtime
running the variant as `convbench export` writes it (peer/ort_engine.py says how it is kept
comparable); its columns appear when some row has its time.

On cuda the comparison is made fair in three ways. Both time with CUDA events from the first
kernel a step launches (peer/measure.py, Runner.timed; the compiled module from the call, which
its rows say). PyTorch runs with its defaults where they have a counterpart: cudnn.benchmark on
(convbench's is --cudnn-algo heuristic unless the flags say find), TF32 in convolutions for the
tf32 rows only, never in matrix products, so a float32 row is float32 without TF32 on both sides.

A network row (a spec's `networks:`) is timed against the PyTorch model its config reproduces
(peer/networks.py: torchvision's resnet50, timm's tresnet_m, the seed's VBNet); a network variant
without such a twin is timed by convbench alone and has no ratio."""

import datetime
import json
import math
import os
import platform
import re
import statistics
import subprocess
import tempfile

import torch

from peer.measure import Runner, measure
from peer.networks import network_model
from peer.ort_engine import OrtEngine

PHASE = {"train": "step", "infer": "forward"}


def row_key(block, variant_name):
    return (block["name"], variant_name, block["point_label"])


def compile_every_row():
    """Every row's module is compiled on its own. Dynamo counts recompilations per code object, and
    all blocks share BlockModule.forward: past its limit (8) it would run later rows eagerly and
    say so only in a warning, and their 'compiled' time would be eager's. The limits are raised
    above any spec's row count, and hitting one raises instead of falling back."""
    cfg = torch._dynamo.config
    for name in ("recompile_limit", "cache_size_limit", "accumulated_recompile_limit", "accumulated_cache_size_limit"):
        if hasattr(cfg, name):
            setattr(cfg, name, max(getattr(cfg, name), 4096))
    if hasattr(cfg, "fail_on_recompile_limit_hit"):
        cfg.fail_on_recompile_limit_hit = True


class CompiledRunner(Runner):
    """A Runner whose module is torch.compile'd (inductor, the default backend). Its compiled code
    calls no module hooks, so a CUDA timing starts where the region begins (Runner.time_span)."""

    time_span = "call"

    def __init__(self, block, variant, device, module=None):
        super().__init__(block, variant, device, module)
        compile_every_row()
        self.module = torch.compile(self.module)


def peer_runners(blocks, networks, compiled, device=torch.device("cpu")):
    """Runners by row key, and what each network row is timed against (None: no PyTorch twin)."""
    cls = CompiledRunner if compiled else Runner
    runners, models = {}, {}
    for block in blocks:
        for variant in block["variants"]:
            runners[row_key(block, variant["name"])] = cls(block, variant, device)
    for network in networks:
        for variant in network["variants"]:
            key = row_key(network, variant["name"])
            twin = network_model(network["name"], variant["name"])
            models[key] = twin[1] if twin else None
            if twin:
                runners[key] = cls(network, variant, device, module=twin[0])
    return runners, models


def warm(runner, steps):
    for _ in range(max(steps, 1)):
        runner.clear_grads()
        runner.step()


def time_peer(runner, opts):
    sample = runner.sample_step if runner.train else runner.sample_forward
    return measure(sample, opts)["median"]


def time_convbench(binary, spec, opts, threads):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "convbench.json")
        cmd = [binary, "compare", spec, "--device", device_name(opts), "--json", out, "-q", "--threads", str(threads),
               "--max-noise", str(opts.max_noise), "--min-time", str(opts.min_time),
               "--min-samples", str(opts.min_samples), "--timeout", str(opts.timeout)]
        for sweep in getattr(opts, "sweep", None) or []:
            cmd += ["--sweep", sweep]
        run = subprocess.run(cmd, capture_output=True, text=True)
        if run.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} exited {run.returncode}: {run.stderr.strip()[:500]}")
        with open(out) as f:
            doc = json.load(f)
    times = {}
    for r in doc["results"]:
        phase = PHASE[r["mode"]]
        t = (r.get("time_ms") or {}).get(phase)
        times[(r["block"], r["variant"], r["point_label"])] = t["median"] if r["status"] == "ok" and t else None
    return times, doc["provenance"]


def geomean(values):
    values = [v for v in values if v and v > 0]
    return math.exp(statistics.fmean(math.log(v) for v in values)) if values else None


def device_name(opts):
    return getattr(opts, "device", None) or "cpu"


def gpu_versions(device):
    """The GPU and the CUDA libraries PyTorch runs on (None on the CPU)."""
    if device.type != "cuda":
        return {}
    return {"gpu": torch.cuda.get_device_name(device), "cuda": torch.version.cuda,
            "cudnn": torch.backends.cudnn.version(), "cudnn_benchmark": bool(torch.backends.cudnn.benchmark)}


def library_versions():
    config = torch.__config__.show()
    mkl = re.search(r"Intel\(R\) (?:oneAPI )?Math Kernel Library Version ([0-9.]+)", config)
    onednn = re.search(r"Intel\(R\) MKL-DNN v([0-9.]+)|oneDNN v([0-9.]+)", config)
    return {"torch": torch.__version__, "mkl": mkl.group(1) if mkl else None,
            "onednn": next((g for g in onednn.groups() if g), None) if onednn else None}


def run_bench(spec, blocks, binary, opts, networks=()):
    threads = opts.threads
    torch.set_num_threads(threads)
    device = torch.device(device_name(opts))
    if device.type == "cuda":
        torch.backends.cudnn.benchmark = True  # PyTorch training scripts' usual setting
    (eager, models), (compiled, _) = (peer_runners(blocks, networks, False, device),
                                      peer_runners(blocks, networks, True, device))
    compile_s = {}
    for key, runner in compiled.items():  # compile (and warm) before any timing
        t0 = datetime.datetime.now()
        warm(runner, opts.warmup)
        compile_s["/".join(k for k in key if k)] = (datetime.datetime.now() - t0).total_seconds()
    for runner in eager.values():
        warm(runner, opts.warmup)
    keys = [row_key(b, v["name"]) for b in blocks for v in b["variants"]]
    keys += [row_key(n, v["name"]) for n in networks for v in n["variants"]]
    ort = OrtEngine(spec, [(row_key(b, v["name"]), b, v["name"]) for b in list(blocks) + list(networks)
                           for v in b["variants"]], binary, opts, threads)
    ort.warm(opts.warmup)
    samples = {key: {"convbench": [], "eager": [], "compiled": [], "onnxruntime": []} for key in keys}
    provenance_ours = None
    for _ in range(opts.rounds):
        ours, provenance_ours = time_convbench(binary, spec, opts, threads)
        for key in keys:
            samples[key]["convbench"].append(ours.get(key))
        for key, runner in eager.items():
            samples[key]["eager"].append(time_peer(runner, opts))
        for key, runner in compiled.items():
            samples[key]["compiled"].append(time_peer(runner, opts))
        for key in ort.sessions:
            samples[key]["onnxruntime"].append(ort.time(key, opts))
    rows = []
    for key, s in samples.items():
        med = {e: (statistics.median(v) if v and all(x is not None for x in v) else None) for e, v in s.items()}
        rows.append({"block": key[0], "variant": key[1], "point_label": key[2], "median_ms": med,
                     "rounds_ms": s,
                     # a network row's PyTorch side (None: no twin, timed by convbench alone); a
                     # block's is the peer's module built from the resolved spec
                     **({"peer_model": models[key]} if key in models else {}),
                     "ours_over_eager": med["convbench"] / med["eager"] if med["convbench"] and med["eager"] else None,
                     "ours_over_compiled": (med["convbench"] / med["compiled"]
                                            if med["convbench"] and med["compiled"] else None),
                     "ours_over_onnxruntime": (med["convbench"] / med["onnxruntime"]
                                               if med["convbench"] and med["onnxruntime"] else None)})
    summary = {}
    for ratio in ("ours_over_eager", "ours_over_compiled", "ours_over_onnxruntime"):
        valued = [r for r in rows if r[ratio]]
        worst = max(valued, key=lambda r: r[ratio]) if valued else None
        summary[ratio] = {"geomean": geomean([r[ratio] for r in rows]),
                          "worst": worst[ratio] if worst else None,
                          "worst_row": "/".join(k for k in (worst["block"], worst["variant"], worst["point_label"]) if k)
                          if worst else None,
                          "rows_above_1_2": sum(1 for r in valued if r[ratio] > 1.2)}
    provenance = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "spec": spec, "device": device.type, **gpu_versions(device),
        "cpu": provenance_ours.get("cpu") if provenance_ours else platform.processor(),
        "threads": threads, "python": platform.python_version(), **library_versions(),
        "convbench_gpu": provenance_ours.get("gpu_name") if provenance_ours and device.type == "cuda" else None,
        "time_span": {"convbench": "first_launch" if device.type == "cuda" else "call",
                      "eager": Runner.time_span if device.type == "cuda" else "call", "compiled": "call"},
        "convbench_commit": provenance_ours.get("git_commit") if provenance_ours else None,
        "convbench_onednn": provenance_ours.get("onednn_version") if provenance_ours else None,
        "onnxruntime": ort.version, "onnxruntime_rows": len(ort.sessions), "onnxruntime_note": ort.why,
        "rounds": opts.rounds, "compile_s": compile_s, "sweeps": list(getattr(opts, "sweep", None) or []),
        "stopping_rule": {"max_noise": opts.max_noise, "min_time_s": opts.min_time,
                          "min_samples": opts.min_samples, "timeout_s": opts.timeout, "warmup": opts.warmup},
    }
    return {"schema": "convbench.bench-vs-torch/1", "provenance": provenance, "rows": rows, "summary": summary}


def fmt(v, spec=".3g"):
    return "-" if v is None else format(v, spec)


def markdown(doc):
    p = doc["provenance"]
    on_gpu = p.get("device") == "cuda"
    with_ort = any(r.get("ours_over_onnxruntime") for r in doc["rows"])
    where = (f"GPU {p.get('gpu')} (CUDA {p.get('cuda')}, cuDNN {p.get('cudnn')}, cudnn.benchmark on), host CPU {p['cpu']}"
             if on_gpu else f"CPU {p['cpu']}, {p['threads']} threads for every engine")
    lines = [f"# convbench {p.get('device', 'cpu')} vs PyTorch {p['torch']} eager and torch.compile: "
             f"{os.path.basename(p['spec'])}", "",
             f"- {p['date']}, {where}; convbench {p['convbench_commit']}"
             + ("" if on_gpu else f" (oneDNN {p['convbench_onednn']}); torch {p['torch']} (MKL {p['mkl']}, "
                                  f"oneDNN {p['onednn']}), inductor on the CPU"),
             f"- {p['rounds']} rounds, engines interleaved per round; stopping rule {json.dumps(p['stopping_rule'])}"
             + (f"; convbench's --sweep {' '.join(p['sweeps'])}" if p.get("sweeps") else ""),
             "- step time: forward + backward (train), forward (infer); median over the rounds of each "
             "round's median; ratio ours / theirs (below 1.00 convbench is faster)"
             + ("; CUDA events from each step's first kernel (torch.compile: from the call); TF32 in "
                "convolutions in tf32 rows only" if on_gpu else ""), "",
             "| block | variant | point | convbench ms | eager ms | compiled ms | ours/eager | ours/compiled |"
             + (" onnxruntime ms | ours/onnxruntime |" if with_ort else ""),
             "|---|---|---|---:|---:|---:|---:|---:|" + ("---:|---:|" if with_ort else "")]
    twins = [r for r in doc["rows"] if "peer_model" in r]
    for r in doc["rows"]:
        m = r["median_ms"]
        lines.append(f"| {r['block']} | {r['variant']} | {r['point_label'] or '-'} | {fmt(m['convbench'], '.4g')} | "
                     f"{fmt(m['eager'], '.4g')} | {fmt(m['compiled'], '.4g')} | {fmt(r['ours_over_eager'])} | "
                     f"{fmt(r['ours_over_compiled'])} |"
                     + (f" {fmt(m.get('onnxruntime'), '.4g')} | {fmt(r.get('ours_over_onnxruntime'))} |"
                        if with_ort else ""))
    lines.append("")
    if twins:
        lines.append("Networks are timed against the PyTorch model their config reproduces:")
        lines += [f"- {r['block']}/{r['variant']}: {r['peer_model'] or 'no PyTorch twin: convbench alone, no ratio'}"
                  for r in twins]
        lines.append("")
    if with_ort:
        lines.insert(5, f"- onnxruntime {p['onnxruntime']} (CPU provider, {p['threads']} intra-op threads, default "
                        "graph optimisations) runs the inference rows as `convbench export` writes them, with "
                        "convbench's weights")
    ratios = [("ours_over_eager", "ours / eager"), ("ours_over_compiled", "ours / compiled")]
    if with_ort:
        ratios.append(("ours_over_onnxruntime", "ours / onnxruntime"))
    for ratio, name in ratios:
        s = doc["summary"][ratio]
        lines.append(f"{name}: geomean {fmt(s['geomean'])}x, worst {fmt(s['worst'])}x ({s['worst_row'] or '-'}), "
                     f"{s['rows_above_1_2']} rows above 1.2x")
    lines.append("")
    return "\n".join(lines)
