#!/usr/bin/env python3
"""Names convbench must survive, end to end (issue 37, item 5): --filter over a 30,000- and a
1,000,000-character block name (std::regex overflowed the stack from about 30,000): analyze,
compare and plan, on a 1 MiB stack; and --memory-limit's size, the command line's one other
pattern, given 100,000 spaces.

usage: hostile_names_test.py CONVBENCH
"""
import json
import os
import resource
import subprocess
import sys
import tempfile

failures = []
QUICK = ["--device", "reference", "--min-time", "0", "--min-samples", "2", "--timeout", "1", "-q"]


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL:", what)


def small_stack():
    # A 1 MiB stack: a regex engine that recursed per character would overflow well before the
    # 1,000,000-character name; RE2 needs none of it.
    resource.setrlimit(resource.RLIMIT_STACK, (1 << 20, 1 << 20))


def run(args, stack=False):
    return subprocess.run(args, capture_output=True, preexec_fn=small_stack if stack else None)


def spec_text(block_name, variant_name=b"sep"):
    return (b"blocks:\n  - name: " + block_name + b"\n    batch: 1\n    in_channels: 4\n    out_channels: 4\n"
            b"    size: [4, 4]\n    variants: [standard, {kind: separable, name: " + variant_name + b"}]\n")


def write(path, data):
    with open(path, "wb") as f:
        f.write(data)


def long_names(binary, tmp):
    """--filter over very long names: linear time, no stack to overflow."""
    spec = os.path.join(tmp, b"long.yaml")
    write(spec, spec_text(b"x" * 30000) + spec_text(b"y" * 1000000)[len(b"blocks:\n"):])
    patterns = {".*": 0, "^y*/sep$": 0, "(x|y)*/standard": 0, "x+.*z": 2, "^(x*)*$": 2, "[[:alpha:]]+/s": 0}
    for pattern, want in patterns.items():
        for command in (["analyze", spec, "--format", "csv"], ["plan", spec, "-o", os.path.join(tmp, b"p.json")]):
            r = run([binary, *command, "--filter", pattern], stack=True)
            check(r.returncode == want, f"{command[0]} --filter {pattern}: exit {r.returncode} "
                  f"(expected {want}): {r.stderr[-300:]}")
    r = run([binary, "compare", spec, *QUICK, "--memory-only", "--filter", ".*sep$", "--format", "csv"], stack=True)
    rows = r.stdout.decode().splitlines()
    check(r.returncode == 0 and len(rows) == 5, f"compare --filter over long names: {r.returncode} {r.stderr[-300:]}")
    r = run([binary, "analyze", spec, "--filter", "(?=x)"])
    check(r.returncode == 2 and b"--filter: not a regular expression" in r.stderr, f"lookahead: {r.stderr}")
    # The one other expression of the command line, --memory-limit's size, is read by hand.
    r = run([binary, "compare", spec, *QUICK, "--memory-limit", " " * 100000 + "1x"], stack=True)
    check(r.returncode == 2 and b"--memory-limit: expected a size" in r.stderr, f"a 100,000-space size: {r.returncode}")
    r = run([binary, "compare", spec, *QUICK, "--memory-only", "--filter", "^x", "--memory-limit", " 64 MiB "])
    check(r.returncode == 0, f"--memory-limit ' 64 MiB ': {r.returncode} {r.stderr[-300:]}")


def main():
    binary = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        tmp = os.fsencode(tmp)
        long_names(binary, tmp)
    if failures:
        print(f"{len(failures)} failure(s)")
        sys.exit(1)
    print("hostile names: ok")


if __name__ == "__main__":
    main()
