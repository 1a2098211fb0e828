#!/usr/bin/env python3
"""Checks that two results files hold the same rows with the same counts and statuses (not
times): a merged sweep against a single-process run of the same spec. Usage:
compare_counts.py EXPECTED.json ACTUAL.json"""
import json
import sys


def rows(path):
    with open(path) as f:
        doc = json.load(f)
    assert doc["schema"] == "convbench.results/1", path
    out = {}
    for r in doc["results"]:
        key = (r["block"], r.get("point_label", ""), r["variant"])
        assert key not in out, f"{path}: {key} twice"
        out[key] = {
            "params": r.get("params"),
            "macs": r.get("macs"),
            "flops": r.get("flops"),
            "bytes": r.get("bytes"),
            "predicted_peak": r.get("memory", {}).get("predicted_peak_bytes"),
            "status": r.get("status"),
            "device": r.get("device"),
        }
    return out


def main():
    expected, actual = rows(sys.argv[1]), rows(sys.argv[2])
    if expected.keys() != actual.keys():
        print(f"rows differ: only in {sys.argv[1]}: {sorted(expected.keys() - actual.keys())}; "
              f"only in {sys.argv[2]}: {sorted(actual.keys() - expected.keys())}")
        return 1
    bad = [(k, expected[k], actual[k]) for k in expected if expected[k] != actual[k]]
    for k, e, a in bad:
        print(f"{k}: expected {e}, got {a}")
    if bad:
        return 1
    statuses = sorted({v["status"] for v in actual.values()})
    print(f"ok: {len(actual)} rows, same params, MACs, FLOPs, bytes, predicted peaks and statuses ({statuses})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
