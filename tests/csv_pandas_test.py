#!/usr/bin/env python3
"""The CSV read by pandas, as its users read it: the block's fields and the swept field are
numeric columns (no regex on `point`), and throughput is a number (issue 15, item 6).

usage: csv_pandas_test.py CONVBENCH SOURCE_DIR
"""
import io
import os
import subprocess
import sys

try:
    import pandas as pd
except ImportError:
    print("SKIP: pandas not importable (python3-pandas; scripts/setup.sh installs it)")
    sys.exit(0)


def csv_of(args):
    out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    return pd.read_csv(io.StringIO(out))


def main():
    binary, source = sys.argv[1], sys.argv[2]
    failures = []
    spec = os.path.join(source, "tests/data/results/readme-spec.yaml")
    df = csv_of([binary, "analyze", spec, "--sweep", "batch=1,2,4", "--format", "csv"])
    for column in ("batch", "in_channels", "out_channels", "in_depth", "in_height", "in_width", "kernel_depth",
                   "kernel_height", "kernel_width", "sweep_batch", "params", "flops_forward", "predicted_peak_bytes"):
        if column not in df.columns:
            failures.append(f"no column {column}")
        elif not pd.api.types.is_integer_dtype(df[column]):
            failures.append(f"{column} is {df[column].dtype}, not integers")
    if not failures:
        if sorted(df["sweep_batch"].unique()) != [1, 2, 4] or not (df["batch"] == df["sweep_batch"]).all():
            failures.append("sweep_batch and batch disagree")
        # What a pandas user does with it: memory per sample across the sweep, per variant.
        per_sample = (df["predicted_peak_bytes"] / df["batch"]).groupby(df["variant"]).agg(["min", "max"])
        print(per_sample)
        if (per_sample["max"] / per_sample["min"] > 2.0).any():
            failures.append("peak bytes per sample should not vary wildly across the batch sweep")

    # Text fields stay text: dtype, layout, mode, and a swept dtype's column.
    text = csv_of([binary, "analyze", spec, "--sweep", "dtype=float32,float16", "--format", "csv"])
    for column in ("dtype", "layout", "mode", "sweep_dtype"):
        if column not in text.columns or not pd.api.types.is_object_dtype(text[column]):
            failures.append(f"{column} missing or not text")
    if not failures and (list(text["sweep_dtype"].unique()) != ["float32", "float16"]
                         or not (text["dtype"] == text["sweep_dtype"]).all()):
        failures.append(f"sweep_dtype and dtype disagree: {list(text['sweep_dtype'])}")

    measured = csv_of([binary, "report", os.path.join(source, "tests/data/results/measured.json"), "--format", "csv"])
    if not pd.api.types.is_float_dtype(measured["samples_per_s"]):
        failures.append(f"samples_per_s is {measured['samples_per_s'].dtype}")
    ratio = measured["samples_per_s"] * measured["step_median_ms"].fillna(measured["forward_median_ms"]) / 1000.0
    if not ((ratio - measured["batch"]).abs() < 1e-3 * measured["batch"]).all():
        failures.append(f"samples_per_s x median time != batch: {list(ratio)}")
    if list(measured["trust"].unique()) != ["ok"]:
        failures.append(f"trust column: {measured['trust'].unique()}")
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
