# Runs every model `convbench export` wrote under MODELS in ONNX Runtime (CPU) on a random input,
# and writes each forward as an inference dump for `convbench verify` (DUMPS/<block>__<variant>__
# default.json): the input, ONNX Runtime's output and the seed of the weights the export wrote.
import json
import os
import sys

import numpy as np
import onnxruntime as ort

models, dumps, seed = sys.argv[1], sys.argv[2], int(sys.argv[3])
os.makedirs(dumps, exist_ok=True)
rng = np.random.default_rng(0)
for block in sorted(os.listdir(models)):
    for name in sorted(os.listdir(os.path.join(models, block))):
        session = ort.InferenceSession(os.path.join(models, block, name), providers=["CPUExecutionProvider"])
        (inp,), (out,) = session.get_inputs(), session.get_outputs()
        x = rng.uniform(-1, 1, size=inp.shape).astype(np.float32)
        (y,) = session.run([out.name], {inp.name: x})
        print(f"{block}/{name}: {inp.name} {inp.shape} -> {out.name} {list(y.shape)}")
        variant = name[:-len(".onnx")]
        doc = {"mode": "infer", "seed": seed, "peer": f"onnxruntime {ort.__version__}",
               "input": {"shape": list(x.shape), "data": x.astype(float).ravel().tolist()},
               "output": {"shape": list(y.shape), "data": y.astype(float).ravel().tolist()}}
        with open(os.path.join(dumps, f"{block}__{variant}__default.json"), "w") as f:
            json.dump(doc, f)
