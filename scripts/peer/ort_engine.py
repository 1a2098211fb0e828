"""ONNX Runtime as a fourth engine of bench-vs-torch, for the inference rows on the CPU: each
variant as `convbench export` writes it (the same graph and starting weights convbench times),
run by onnxruntime's CPU provider with as many intra-op threads as the other engines get (one
inter-op thread, sequential execution), the same input shape and distribution (uniform in
[-1, 1)), the same warm-up count and peer/measure.py's stopping rule, and the same statistic (each
round's median, then the median over the rounds). Its graph optimisations stay at onnxruntime's
default (all), as torch.compile's do: what a user who deploys the file gets.

Training rows have no onnxruntime time: an ONNX model is an inference graph."""

import os
import subprocess
import tempfile
import time

from peer.measure import measure


def safe_component(name):
    """pipeline/export_onnx.cpp's safe_component: the file name convbench export gives a name."""
    out = "".join(c if c.isalnum() or c in "_-.,=+" else "_" for c in name)
    if not out or out.startswith("."):
        out = "_" + out
    return out[:100]


def model_path(folder, block, variant):
    stem = safe_component(variant) + (f"__{safe_component(block['point_label'])}" if block["point_label"] else "")
    return os.path.join(folder, safe_component(block["name"]), stem + ".onnx")


class OrtEngine:
    """Sessions for every inference row (None where onnxruntime is missing, the device is not the
    CPU, or the spec does not export: `why` says which)."""

    def __init__(self, spec, rows, binary, opts, threads):
        self.sessions, self.why, self.version = {}, None, None
        self._tmp = None
        try:
            import numpy as np
            import onnxruntime as ort
        except ImportError as e:
            self.why = f"onnxruntime not importable ({e})"
            return
        self.version = ort.__version__
        infer = [(key, block, variant) for key, block, variant in rows if block["mode"] == "infer"]
        if (getattr(opts, "device", None) or "cpu") != "cpu" or not infer:
            self.why = "no inference rows on the CPU" if infer == [] else "onnxruntime runs on the CPU here"
            return
        self._tmp = tempfile.TemporaryDirectory()
        cmd = [binary, "export", spec, "--onnx", self._tmp.name]
        for sweep in getattr(opts, "sweep", None) or []:
            cmd += ["--sweep", sweep]
        run = subprocess.run(cmd, capture_output=True, text=True)
        if run.returncode != 0:
            self.why = f"convbench export failed: {run.stderr.strip()[:300]}"
            return
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        rng = np.random.default_rng(0)
        for key, block, variant in infer:
            session = ort.InferenceSession(model_path(self._tmp.name, block, variant), options,
                                           providers=["CPUExecutionProvider"])
            inp = session.get_inputs()[0]
            x = (rng.random(inp.shape, dtype=np.float32) * 2 - 1)
            self.sessions[key] = (session, {inp.name: x})

    def warm(self, steps):
        for session, feed in self.sessions.values():
            for _ in range(max(steps, 1)):
                session.run(None, feed)

    def time(self, key, opts):
        """This round's median forward time of a row, in ms (None: no session for it)."""
        if key not in self.sessions:
            return None
        session, feed = self.sessions[key]

        def sample():
            t0 = time.perf_counter()
            session.run(None, feed)
            return (time.perf_counter() - t0) * 1e3

        return measure(sample, opts)["median"]
